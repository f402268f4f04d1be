// Collectives: runs the phases of a Plan (collectives_plans.cpp) on the FlowNetwork. The plan's
// algorithm and protocol are resolved first (collectives_group.cpp: NCCL's tuner for GPUs that
// run NCCL, the documented rule otherwise). A phase's
// flows all start at once; when the last one ends, the next phase is built and started at the
// same instant. Phases are global barriers across the whole group (e.g. no node starts its
// inter-node ring before every node has finished its reduce-scatter): exact for symmetric
// groups, slightly pessimistic when some nodes are slowed by other traffic.
// Flow callbacks hold raw pointers to their operation: a Collectives object must outlive the
// collectives it started (as the FlowNetwork must outlive its flows).
#include "network/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "network/collectives_detail.hpp"

namespace dlsim::network {

struct Collectives::Impl {
  // One collective in flight. Flow callbacks point at it; it lives in `operations` until done.
  struct Operation {
    Impl* impl = nullptr;
    std::size_t slot = 0;
    std::shared_ptr<const detail::Plan> plan;  // shared with the plan memo
    std::function<void(const CollectiveResult&)> on_done;
    sim::Time started;
    int next_phase = 0;
    std::size_t outstanding = 0;  // flows of the current phase still running
    std::size_t flows = 0;        // flows started so far
  };

  Impl(sim::Engine& e, FlowNetwork& f, Routing& r, const Topology& t)
      : engine(e), network(f), routing(r), topology(t) {}

  std::shared_ptr<const detail::Plan> make_plan(const CollectiveSpec& spec);
  Operation* acquire(std::shared_ptr<const detail::Plan> plan, std::function<void(const CollectiveResult&)> on_done);
  void release(std::size_t slot);
  bool advance(Operation& op);
  void flow_done(Operation* op);
  void finish(Operation* op);

  sim::Engine& engine;
  FlowNetwork& network;
  Routing& routing;
  const Topology& topology;
  std::vector<std::unique_ptr<Operation>> operations;  // by slot; null when free
  std::vector<std::size_t> free_slots;
  std::vector<FlowSpec> scratch;  // the phase being built; kept for its capacity
  // Plans by what decides them: a training replay starts the same collectives (a pipeline send
  // between the same two stages, a data-parallel all-reduce of the same bucket) at every
  // micro-batch and iteration, and resolving one (layout, NCCL's tuner, rings) costs more than
  // running its phases. A plan is a function of its spec on a given topology, except under
  // balanced routing, whose paths depend on the routes handed out before (resolving asks for
  // paths): there every collective is resolved afresh, as without the memo. Bounded: cleared
  // when full (a cluster simulation's many jobs would otherwise grow it without end).
  using PlanKey = std::tuple<int, int, int, double, std::vector<VertexId>, int, int>;
  static constexpr std::size_t kPlanMemoLimit = 4096;
  std::map<PlanKey, std::shared_ptr<const detail::Plan>, std::less<>> plans;  // looked up by reference
};

namespace {

// One collective checked and resolved (collectives_group.cpp).
detail::Plan make_plan(const CollectiveSpec& spec, const Topology& topology, Routing& routing) {
  if (spec.ranks.empty()) throw std::invalid_argument("Collectives: a collective needs at least one rank");
  if (!(spec.bytes >= 0) || !std::isfinite(spec.bytes)) {
    throw std::invalid_argument("Collectives: bytes must be finite and >= 0, got " + std::to_string(spec.bytes));
  }
  std::vector<VertexId> sorted = spec.ranks;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.back() >= topology.vertex_count()) {
    throw std::invalid_argument("Collectives: rank vertex " + std::to_string(sorted.back()) +
                                " is not in the topology");
  }
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument("Collectives: a vertex appears twice among the ranks");
  }
  detail::Plan plan;
  plan.kind = spec.kind;
  plan.bytes = spec.bytes;
  plan.ranks = spec.ranks;
  plan.root = spec.root;
  plan.shards = spec.server_shards;
  plan.layout = detail::layout_of(topology, plan.ranks);
  if (!detail::applies(spec.kind, spec.algorithm) && spec.algorithm != Algorithm::automatic) {
    plan.algorithm = spec.algorithm;
    detail::validate(plan);  // throws: the algorithm does not implement the kind
  }
  detail::resolve(plan, spec, topology, routing);
  detail::validate(plan);
  return plan;
}

}  // namespace

std::shared_ptr<const detail::Plan> Collectives::Impl::make_plan(const CollectiveSpec& spec) {
  // Bytes that make_plan refuses (NaN would not even order in the map) are never looked up.
  if (routing.scheme() == RoutingScheme::balanced || !(spec.bytes >= 0) || !std::isfinite(spec.bytes)) {
    return std::make_shared<const detail::Plan>(dlsim::network::make_plan(spec, topology, routing));
  }
  const std::tuple<int, int, int, double, const std::vector<VertexId>&, int, int> view{
      static_cast<int>(spec.kind), static_cast<int>(spec.algorithm), static_cast<int>(spec.protocol), spec.bytes,
      spec.ranks, spec.root, spec.server_shards};
  if (auto it = plans.find(view); it != plans.end()) return it->second;
  auto plan = std::make_shared<const detail::Plan>(dlsim::network::make_plan(spec, topology, routing));
  if (plans.size() >= kPlanMemoLimit) plans.clear();
  plans.emplace(PlanKey(view), plan);
  return plan;
}

Collectives::Impl::Operation* Collectives::Impl::acquire(std::shared_ptr<const detail::Plan> plan,
                                                         std::function<void(const CollectiveResult&)> on_done) {
  std::size_t slot = operations.size();
  if (!free_slots.empty()) {
    slot = free_slots.back();
    free_slots.pop_back();
  } else {
    operations.emplace_back();
  }
  auto op = std::make_unique<Operation>();
  op->impl = this;
  op->slot = slot;
  op->plan = std::move(plan);
  op->on_done = std::move(on_done);
  op->started = engine.now();
  operations[slot] = std::move(op);
  return operations[slot].get();
}

void Collectives::Impl::release(std::size_t slot) {
  operations[slot].reset();
  free_slots.push_back(slot);
}

// Starts the next phase that has flows; false when no phase is left.
bool Collectives::Impl::advance(Operation& op) {
  const detail::Plan& plan = *op.plan;
  const int phases = detail::phase_count(plan);
  while (op.next_phase < phases) {
    detail::PhaseBuilder builder(routing, scratch, plan, op.next_phase);
    detail::build_phase(plan, op.next_phase++, builder);
    if (scratch.empty()) continue;  // e.g. the intra-node phases of one rank per node
    // Moved out first: were a completion ever to run inside start(), a nested advance()
    // would reuse `scratch`.
    std::vector<FlowSpec> specs;
    specs.swap(scratch);
    op.outstanding = specs.size();
    op.flows += specs.size();
    Operation* target = &op;
    // One std::function per flow; capturing one pointer keeps it in its small buffer.
    for (FlowSpec& spec : specs) network.start(std::move(spec), [target] { target->impl->flow_done(target); });
    specs.clear();
    scratch.swap(specs);
    return true;
  }
  return false;
}

void Collectives::Impl::flow_done(Operation* op) {
  if (--op->outstanding > 0) return;
  if (!advance(*op)) finish(op);
}

void Collectives::Impl::finish(Operation* op) {
  CollectiveResult result;
  result.time_s = (engine.now() - op->started).seconds();
  const detail::Plan& plan = *op->plan;
  result.algorithm = plan.algorithm;
  result.protocol = plan.protocol;
  result.channels = plan.channels;
  result.flows = op->flows;
  // A zero-time collective (one rank) has no meaningful bandwidth; 0 rather than infinity
  // keeps result files finite.
  if (result.time_s > 0) {
    result.algbw = plan.bytes / result.time_s;
    result.busbw = result.algbw * bus_bandwidth_factor(plan.kind, plan.ranks_count());
  }
  auto done = std::move(op->on_done);
  release(op->slot);  // destroys *op; `done` may start another collective in the freed slot
  if (done) done(result);
}

Collectives::Collectives(sim::Engine& engine, FlowNetwork& flows, Routing& routing, const Topology& topology)
    : impl_(std::make_shared<Impl>(engine, flows, routing, topology)) {}

void Collectives::start(const CollectiveSpec& spec, std::function<void(const CollectiveResult&)> on_done) {
  Impl::Operation* op = impl_->acquire(impl_->make_plan(spec), std::move(on_done));
  bool started = false;
  try {
    started = impl_->advance(*op);
  } catch (...) {  // e.g. a rank that cannot be reached: nothing of this phase was started
    impl_->release(op->slot);
    throw;
  }
  // Nothing to move (one rank): complete on the engine, never inside start().
  if (!started) impl_->engine.schedule_in(sim::Time::zero(), [op] { op->impl->finish(op); });
}

CollectiveChoice resolve_collective(const Topology& topology, const CollectiveSpec& spec) {
  Routing routing(topology);
  const detail::Plan plan = make_plan(spec, topology, routing);
  return {plan.algorithm, plan.protocol, plan.channels};
}

CollectiveResult run_collective(const Topology& topology, const CollectiveSpec& spec) {
  sim::Engine engine;
  FlowNetwork network(engine, topology);
  Routing routing(topology);
  Collectives collectives(engine, network, routing, topology);
  std::optional<CollectiveResult> result;
  collectives.start(spec, [&result](const CollectiveResult& r) { result = r; });
  engine.run();
  if (!result) throw std::logic_error("run_collective: the collective never completed");
  return *result;
}

// nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor, so that busbw compares with the
// hardware's peak link bandwidth whatever the rank count.
double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double p = std::max(ranks, 1);
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2.0 * (p - 1) / p;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
      return (p - 1) / p;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
    case CollectiveKind::send_recv:
    case CollectiveKind::push_pull:  // not in nccl-tests: reported as moved, like send/recv
      return 1.0;
  }
  return 1.0;
}

// The names scenarios use (so a resolved scenario reads back as input).
std::string to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::automatic: return "auto";
    case Algorithm::ring: return "ring";
    case Algorithm::double_binary_tree: return "double-binary-tree";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::halving_doubling: return "halving-doubling";
    case Algorithm::direct: return "direct";
    case Algorithm::parameter_server: return "parameter-server";
    case Algorithm::nvls: return "nvls";
    case Algorithm::collnet: return "collnet";
    case Algorithm::torus: return "torus";
  }
  return "unknown";
}

std::string to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::automatic: return "auto";
    case Protocol::simple: return "simple";
    case Protocol::ll: return "ll";
    case Protocol::ll128: return "ll128";
  }
  return "unknown";
}

std::string to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all-reduce";
    case CollectiveKind::reduce_scatter: return "reduce-scatter";
    case CollectiveKind::all_gather: return "all-gather";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::reduce: return "reduce";
    case CollectiveKind::all_to_all: return "all-to-all";
    case CollectiveKind::send_recv: return "send-recv";
    case CollectiveKind::push_pull: return "push-pull";
  }
  return "unknown";
}

}  // namespace dlsim::network
