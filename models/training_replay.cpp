// The replay of one training iteration (see training_replay.hpp).
#include "models/training_replay.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <functional>
#include <type_traits>
#include <unordered_map>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "models/gradient_compression.hpp"
#include "models/iteration_program.hpp"
#include "models/parameter_server.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/zero3_stream.hpp"
#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "sim/engine.hpp"

namespace dlsim::models {
namespace {

using network::CollectiveKind;
using network::VertexId;
using Groups = std::vector<std::vector<VertexId>>;

std::string size_label(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  else if (bytes >= 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  else std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  return buf;
}

struct Bucket {
  double bytes = 0;
  bool expert = false;
  std::vector<WeightMatrix> matrices;  // PowerSGD
};

// The SMs a data-parallel collective's kernels hold while compute runs beside it: NCCL's
// channels (one CTA each) for the group of pipeline rank 0, tensor rank 0 (every data-parallel
// group of a plan has its shape); 0 without such a group or outside NCCL.
int data_parallel_channels(const TrainingConfig& c) {
  const ParallelPlan& plan = c.plan;
  if (plan.gradient_replicas() <= 1 || plan.parameter_server.enabled) return 0;
  const auto& all = c.topology->accelerators();
  network::CollectiveSpec spec;
  spec.kind = plan.zero_stage == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
  spec.bytes = plan.bucket_bytes > 0 ? plan.bucket_bytes : 25.0 * 1024 * 1024;
  for (int d = 0; d < plan.data; ++d) {
    for (int x = 0; x < plan.context; ++x) spec.ranks.push_back(all[static_cast<std::size_t>(global_rank(plan, d, 0, 0, x))]);
  }
  return network::resolve_collective(*c.topology, spec).channels;
}

// Where a blocking collective's exposed time is counted.
enum class Blocking { tensor, expert, context };

class Replay {
 public:
  Replay(const TrainingConfig& c, IterationTrace* trace)
      : c_(c),
        plan_(c.plan),
        program_(build_iteration_program(*c.model, c.plan, c.device, c.profile, data_parallel_channels(c))),
        routing_(*c.topology),
        flows_(engine_, *c.topology),
        collectives_(engine_, flows_, routing_, *c.topology),
        trace_(trace),
        P_(plan_.pipeline),
        V_(plan_.virtual_pipeline()),
        M_(plan_.micro_batches) {
    const auto& all = c.topology->accelerators();
    job_.assign(all.begin(), all.begin() + plan_.devices());
    for (int r = 0; r < P_; ++r) {
      std::vector<VertexId> g;
      for (int t = 0; t < plan_.tensor; ++t) g.push_back(accelerator(0, r, t));
      tensor_groups_.push_back({std::move(g)});
    }
    ranks_.resize(static_cast<std::size_t>(P_));
    for (int r = 0; r < P_; ++r) {
      Rank& rank = ranks_[static_cast<std::size_t>(r)];
      rank.order = pipeline_order(plan_, r);
      for (int k = 0; k < plan_.virtual_stages; ++k) {
        const StageProgram& s = stage(k * P_ + r);
        rank.parameters += s.parameters;
      }
      if (trace_ != nullptr) {
        const int first = global_rank(plan_, 0, r, 0);
        const std::string process = "pipeline rank " + std::to_string(r) + " (accelerator " + std::to_string(first) + ")";
        rank.lane_compute = add_lane(process, "compute");
        rank.lane_blocking = add_lane(process, "tensor/expert collectives");
        rank.lane_send_next = add_lane(process, "pipeline send to next stage");
        rank.lane_send_prev = add_lane(process, "pipeline send to previous stage");
        rank.lane_dp = add_lane(process, "data-parallel gradients");
        if (plan_.zero_stage == 3) rank.lane_gather = add_lane(process, "ZeRO-3 all-gathers and reduce-scatters");
      }
    }
    arrived_forward_.assign(static_cast<std::size_t>(V_ * M_), 0);
    arrived_backward_.assign(static_cast<std::size_t>(V_ * M_), 0);
  }

  IterationBreakdown run() {
    if (overlap_param_gather()) {
      for (int r = 0; r < P_; ++r) start_param_gathers(r);
    }
    for (int r = 0; r < P_; ++r) try_start(r);
    engine_.run();
    for (int r = 0; r < P_; ++r) {
      if (!ranks_[static_cast<std::size_t>(r)].finished) {
        const Rank& rank = ranks_[static_cast<std::size_t>(r)];
        throw std::logic_error("training replay: pipeline rank " + std::to_string(r) + " did not finish (schedule deadlock) after " +
                               std::to_string(rank.next) + " of " + std::to_string(rank.order.size()) + " passes, in segment " +
                               std::to_string(rank.segment) + (rank.busy ? "" : " (idle)"));
      }
    }
    return breakdown();
  }

 private:
  struct Rank {
    std::vector<PassId> order;
    std::size_t next = 0;
    bool busy = false;
    PassId pass;
    const PassProgram* program = nullptr;
    std::size_t segment = 0;
    sim::Time pass_start, segment_start;
    double compute = 0, forward = 0, backward = 0, recompute = 0, tensor = 0, expert = 0, context = 0, gather_wait = 0;
    double reduce_wait = 0, zero_host = 0, offload = 0, after_step_host = 0;
    double parameters = 0;
    // plan.overlap_param_gather: parameter bytes gathered so far this iteration, where each
    // chunk's start in that order, and a forward segment waiting for its bucket.
    double gathered = 0;
    std::vector<double> chunk_offset;
    bool param_waiting = false;
    sim::Time param_wait_mark;
    // data-parallel stream
    double open_bytes = 0, open_expert_bytes = 0;
    std::vector<WeightMatrix> open_matrices, open_expert_matrices;
    double compression = 0, wire = 0;  // compression kernels (s), bytes sent, per iteration
    // Compression kernels issued while backward runs go onto its stream (PyTorch's DDP runs a
    // comm hook's kernels on the stream of the backward pass that filled the bucket): the next
    // compute segment starts after them.
    double compression_queued = 0, compression_blocking = 0;
    std::deque<Bucket> ready;
    bool reducing = false;
    bool passes_done = false, optimizer_started = false, finished = false;
    sim::Time passes_end, optimizer_start, finish;
    double optimizer = 0, dp_busy = 0, pipe_busy = 0;
    int buckets = 0;
    // pipeline sends, one at a time per direction
    std::deque<std::function<void()>> sends[2];
    bool sending[2] = {false, false};
    // !plan.overlap_p2p: the compute stream waits for the send its last pass issued
    bool exchange_blocked = false;
    sim::Time exchange_mark;
    double exchange = 0;  // s blocked so, per iteration
    // ZeRO-3: the data-parallel stream, and a wait at a ZeRO point
    Zero3Stream zero;
    bool zero_waiting = false;
    long long zero_needed = 0;
    sim::Time zero_mark;
    // SMs held by communication kernels: data-parallel and ZeRO collectives of this rank in
    // flight (`held`), and the running compute segment, whose kernels run its stage's busy
    // slowdown times longer while any is (StageProgram::forward/backward_busy_slowdown). The
    // segment's progress is the fraction done at `compute_mark`; its end event is rescheduled
    // whenever the rate changes. Gradient compression's and parameter servers' reductions and
    // the GEMMs a tensor-parallel collective overlaps (overlapped_collective) are not stretched.
    int held = 0;
    bool computing = false;
    double compute_fraction = 0, compute_factor = 1, compute_queued = 0;
    sim::Time compute_mark;
    sim::EventId compute_event{};
    double held_extra = 0;  // s of compute added by held SMs, per iteration
    int lane_compute = -1, lane_blocking = -1, lane_send_next = -1, lane_send_prev = -1, lane_dp = -1, lane_gather = -1;
  };

  const StageProgram& stage(int virtual_stage) const { return program_.stages[static_cast<std::size_t>(virtual_stage)]; }
  int virtual_stage(int r, const PassId& p) const { return p.chunk * P_ + r; }
  VertexId accelerator(int d, int p, int t, int c = 0) const {
    return job_[static_cast<std::size_t>(global_rank(plan_, d, p, t, c))];
  }

  // ---- trace -------------------------------------------------------------------------------
  int add_lane(const std::string& process, const std::string& thread) {
    trace_->lanes.push_back({process, thread});
    return static_cast<int>(trace_->lanes.size()) - 1;
  }
  // Callers test trace_ first: a span's name is built only when a trace is kept.
  void span(int lane, std::string name, const char* category, sim::Time start) {
    if (trace_ == nullptr || lane < 0) return;
    trace_->spans.push_back({lane, std::move(name), category, start.count_ns(), (engine_.now() - start).count_ns()});
  }

  // ---- deferred continuations (engine callbacks are small and trivially copyable) ----------
  // A continuation that is itself a small trivially copyable callable (`[this, r] {...}`) goes
  // to the engine as it is; any other (a std::function, a lambda holding one) waits in a slot.
  // Both schedule one event at the same point, so the order of events is the same either way.
  template <class F>
  void after(double seconds, F&& fn) {
    using Fn = std::decay_t<F>;
    if constexpr (std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn> &&
                  sizeof(Fn) <= sim::InlineCallback::kCapacity && alignof(Fn) <= 8) {
      engine_.schedule_in(sim::Time::from_seconds(seconds), std::forward<F>(fn));
    } else {
      after_slot(seconds, std::function<void()>(std::forward<F>(fn)));
    }
  }
  void after_slot(double seconds, std::function<void()> fn) {
    std::size_t slot;
    if (free_slots_.empty()) {
      slot = continuations_.size();
      continuations_.push_back(std::move(fn));
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      continuations_[slot] = std::move(fn);
    }
    engine_.schedule_in(sim::Time::from_seconds(seconds), [this, slot] {
      std::function<void()> fn = std::move(continuations_[slot]);
      continuations_[slot] = nullptr;
      free_slots_.push_back(slot);
      fn();
    });
  }

  // ---- collectives -------------------------------------------------------------------------
  bool inside_one_node(const Groups& groups) const {
    int node = -2;
    for (const auto& g : groups) {
      for (VertexId v : g) {
        const int n = c_.topology->vertex(v).node;
        if (n < 0) return false;
        if (node == -2) node = n;
        if (n != node) return false;
      }
    }
    return true;
  }

  // The time of `groups` running `kind` at once, alone on the fabric (memoized).
  double isolated_time(CollectiveKind kind, double bytes, const Groups& groups, network::Algorithm algorithm) {
    // Looked up by reference (the memo's comparator is transparent): a hit copies no groups.
    auto it = memo_.find(std::tuple<int, double, const Groups&>(static_cast<int>(kind), bytes, groups));
    if (it != memo_.end()) return it->second;
    sim::Engine engine;
    // Under ECMP and D-mod-K a path is a function of its pair (and flow key), so the replay's
    // routing and its path cache serve here; balanced routing depends on the routes handed out
    // before, so an isolated time starts from none, as it always did.
    std::optional<network::Routing> own;
    network::Routing& routing =
        routing_.scheme() == network::RoutingScheme::balanced ? own.emplace(*c_.topology) : routing_;
    network::FlowNetwork flows(engine, *c_.topology);
    network::Collectives collectives(engine, flows, routing, *c_.topology);
    for (const auto& g : groups) {
      network::CollectiveSpec spec;
      spec.kind = kind;
      spec.algorithm = algorithm;
      spec.bytes = bytes;
      spec.ranks = g;
      collectives.start(spec, [](const network::CollectiveResult&) {});
    }
    engine.run();
    memo_flows_ += static_cast<long long>(flows.flows_started());
    const double t = engine.now().seconds();
    memo_.emplace(std::make_tuple(static_cast<int>(kind), bytes, groups), t);
    return t;
  }

  // The groups with more than one rank: `groups` itself when all have (no copy, the common
  // case), else those copied into `scratch`.
  static const Groups& real_groups(const Groups& groups, Groups& scratch) {
    if (std::all_of(groups.begin(), groups.end(), [](const std::vector<VertexId>& g) { return g.size() > 1; })) return groups;
    for (const auto& g : groups) {
      if (g.size() > 1) scratch.push_back(g);
    }
    return scratch;
  }

  // isolated_time of the groups with more than one rank (0 when none or no bytes).
  double alone_time(CollectiveKind kind, double bytes, const Groups& groups) {
    Groups scratch;
    const Groups& real = real_groups(groups, scratch);
    return real.empty() || bytes <= 0 ? 0.0 : isolated_time(kind, bytes, real, network::Algorithm::automatic);
  }

  // Runs `kind` over every group at once; `done` runs when all have finished.
  void run_groups(CollectiveKind kind, double bytes, const Groups& groups, network::Algorithm algorithm,
                  std::function<void()> done) {
    Groups scratch;
    const Groups& real = real_groups(groups, scratch);
    if (real.empty() || bytes <= 0) {
      after(0, std::move(done));
      return;
    }
    if (inside_one_node(real)) {
      after(isolated_time(kind, bytes, real, algorithm), std::move(done));
      return;
    }
    auto remaining = std::make_shared<int>(static_cast<int>(real.size()));
    auto shared_done = std::make_shared<std::function<void()>>(std::move(done));
    for (const auto& g : real) {
      network::CollectiveSpec spec;
      spec.kind = kind;
      spec.algorithm = algorithm;
      spec.bytes = bytes;
      spec.ranks = g;
      collectives_.start(spec, [remaining, shared_done](const network::CollectiveResult&) {
        if (--*remaining == 0) (*shared_done)();
      });
    }
  }

  // Built once per pipeline rank: tensor-parallel collectives run at every layer.
  const Groups& tensor_groups(int r) const { return tensor_groups_[static_cast<std::size_t>(r)]; }
  // Context groups of pipeline rank r (replica 0), one per tensor rank: the rings of ring attention.
  Groups context_groups(int r) const {
    Groups out;
    for (int t = 0; t < plan_.tensor; ++t) {
      std::vector<VertexId> g;
      for (int c = 0; c < plan_.context; ++c) g.push_back(accelerator(0, r, t, c));
      out.push_back(std::move(g));
    }
    return out;
  }
  Groups expert_groups(int r) const {
    Groups out;
    for (int t = 0; t < plan_.tensor; ++t) {
      std::vector<VertexId> g;
      for (int d = 0; d < plan_.expert; ++d) g.push_back(accelerator(d, r, t));
      out.push_back(std::move(g));
    }
    return out;
  }
  // Data-parallel groups of pipeline rank r, one per tensor rank: all replicas (with every
  // context rank of each: they hold the same parameters), or for expert parameters the replicas
  // holding the same experts (every expert-th one).
  Groups data_groups(int r, bool expert) const {
    Groups out;
    const int step = expert ? plan_.expert : 1;
    for (int t = 0; t < plan_.tensor; ++t) {
      std::vector<VertexId> g;
      for (int d = 0; d < plan_.data; d += step) {
        for (int c = 0; c < plan_.context; ++c) g.push_back(accelerator(d, r, t, c));
      }
      out.push_back(std::move(g));
    }
    return out;
  }

  // ---- passes ------------------------------------------------------------------------------
  void try_start(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.busy || rank.exchange_blocked || rank.next >= rank.order.size()) return;
    const PassId pass = rank.order[rank.next];
    const int vs = virtual_stage(r, pass);
    const std::size_t slot = static_cast<std::size_t>(vs * M_ + pass.micro_batch);
    // A W pass (ZB-H1) needs only its own B, which ran before it on this rank.
    if (!pass.weight && (pass.forward ? (vs > 0 && !arrived_forward_[slot]) : (vs < V_ - 1 && !arrived_backward_[slot]))) return;
    ++rank.next;
    rank.busy = true;
    rank.pass = pass;
    rank.program = pass.forward ? &stage(vs).forward : pass.weight ? &stage(vs).weight : &stage(vs).backward;
    rank.segment = 0;
    rank.pass_start = engine_.now();
    rank.zero.begin_pass();
    advance(r);
  }

  void advance(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const auto& segments = rank.program->segments;
    while (rank.segment < segments.size()) {
      const Segment& s = segments[rank.segment];
      rank.segment_start = engine_.now();
      if (waits_for_parameters(rank, s)) {
        rank.param_waiting = true;
        rank.param_wait_mark = engine_.now();
        return;
      }
      switch (s.kind) {
        case SegmentKind::compute: {
          const double queued = rank.compression_queued;
          rank.compression_queued = 0;
          rank.compression_blocking += queued;
          start_compute(r, queued);
          return;
        }
        case SegmentKind::tensor:
          if (s.overlap_s > 0) {
            overlapped_collective(r, s, tensor_groups(r), plan_.tensor, Blocking::tensor);
            return;
          }
          run_groups(s.collective, s.bytes, tensor_groups(r), network::Algorithm::automatic, [this, r] { blocking_done(r, Blocking::tensor); });
          return;
        case SegmentKind::context:
          overlapped_collective(r, s, context_groups(r), plan_.context, Blocking::context);
          return;
        case SegmentKind::expert:
          run_groups(s.collective, s.bytes, expert_groups(r), network::Algorithm::automatic, [this, r] { blocking_done(r, Blocking::expert); });
          return;
        case SegmentKind::zero:
          rank.zero_needed = rank.zero.needed(s.drain, s.wait_through);
          if (!rank.zero.done(rank.zero_needed)) {
            rank.zero_waiting = true;
            rank.zero_mark = engine_.now();
            return;
          }
          if (s.host_s > 0 || s.host_after_s > 0 || !s.issue.empty()) {
            zero_point_host(r);
            return;
          }
          ++rank.segment;
          break;
      }
    }
    end_pass(r);
  }

  // ---- compute segments, and the SMs communication kernels hold ----------------------------
  // A compute segment's kernels, stretched by `factor` (its queued compression kernels and a
  // host floor are not): its length from start to end at that rate.
  static double segment_length(const Segment& s, double queued, double factor) {
    return queued + std::max(s.seconds * factor, s.host_floor_s);
  }
  // The stretch the running segment's kernels take now: its stage's busy slowdown while a
  // data-parallel or ZeRO collective of this rank runs (none for host-device copies).
  double held_factor(int r, const Segment& s) const {
    const Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.held == 0 || s.offload) return 1;
    const StageProgram& st = stage(virtual_stage(r, rank.pass));
    return rank.pass.forward || s.recompute ? st.forward_busy_slowdown : st.backward_busy_slowdown;
  }
  void start_compute(int r, double queued) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.computing = true;
    rank.compute_fraction = 0;
    rank.compute_queued = queued;
    rank.compute_mark = engine_.now();
    schedule_compute_end(r);
  }
  void schedule_compute_end(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const Segment& s = rank.program->segments[rank.segment];
    rank.compute_factor = held_factor(r, s);
    const double left = (1 - rank.compute_fraction) * segment_length(s, rank.compute_queued, rank.compute_factor);
    rank.compute_event = engine_.schedule_in(sim::Time::from_seconds(left), [this, r] {
      ranks_[static_cast<std::size_t>(r)].computing = false;
      compute_done(r);
    });
  }
  // A data-parallel or ZeRO collective of rank r starts (+1) or ends (-1): a running compute
  // segment whose rate changes keeps its progress and gets a new end.
  void held_changed(int r, int delta) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.held += delta;
    if (!rank.computing) return;
    const Segment& s = rank.program->segments[rank.segment];
    const double factor = held_factor(r, s);
    if (factor == rank.compute_factor) return;
    const double length = segment_length(s, rank.compute_queued, rank.compute_factor);
    if (length > 0) rank.compute_fraction = std::min(1.0, rank.compute_fraction + (engine_.now() - rank.compute_mark).seconds() / length);
    rank.compute_mark = engine_.now();
    engine_.cancel(rank.compute_event);
    schedule_compute_end(r);
  }

  void compute_done(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const Segment& s = rank.program->segments[rank.segment];
    rank.zero_host += std::max(0.0, s.host_floor_s - s.seconds);
    if (s.offload) {
      rank.offload += s.seconds;
      ++rank.segment;
      advance(r);
      return;
    }
    // What held SMs added to the segment (counted as compute: its kernels ran that long).
    double extra = 0;
    if (rank.compute_factor != 1 || rank.compute_fraction > 0) {
      extra = std::max(0.0, (engine_.now() - rank.segment_start).seconds() - segment_length(s, rank.compute_queued, 1));
      rank.held_extra += extra;
    }
    const double kernels = s.seconds + extra;
    rank.compute += kernels;
    if (s.recompute) rank.recompute += kernels;
    else if (rank.pass.forward) rank.forward += kernels;
    else rank.backward += kernels;
    // Gradients are final on the last micro-batch, or reduced every micro-batch when sharded;
    // under ZB-H1 the W pass carries them (iteration_program.hpp).
    const bool reduce_now = plan_.zero_stage >= 2 || rank.pass.micro_batch == M_ - 1;
    if (!rank.pass.forward && reduce_now && s.gradient_bytes > 0) {
      add_gradients(r, s.gradient_bytes - s.expert_gradient_bytes, s.expert_gradient_bytes, s.gradient_matrices);
    }
    ++rank.segment;
    advance(r);
  }

  // ---- plan.overlap_param_gather ------------------------------------------------------------
  bool overlap_param_gather() const {
    return plan_.overlap_param_gather && (plan_.zero_stage == 1 || plan_.zero_stage == 2) && plan_.gradient_replicas() > 1;
  }

  // The steady state of Megatron-Core's overlapped parameter gather: the previous step's update
  // is all-gathered in buckets, in the order forward uses the parameters (chunk by chunk),
  // while forward runs; nothing is gathered after the step.
  void start_param_gathers(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const double element = bytes_per_element(storage_precision(plan_.precision));
    double total = 0;
    for (int k = 0; k < plan_.virtual_stages; ++k) {
      rank.chunk_offset.push_back(total);
      total += stage(k * P_ + r).parameters * element;
    }
    next_param_gather(r, total);
  }

  void next_param_gather(int r, double total) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.gathered >= total) return;
    const double bytes = std::min(plan_.bucket_bytes, total - rank.gathered);
    const sim::Time start = engine_.now();
    held_changed(r, +1);
    run_groups(CollectiveKind::all_gather, bytes, data_groups(r, false), network::Algorithm::automatic, [this, r, total, bytes, start] {
      held_changed(r, -1);
      Rank& rk = ranks_[static_cast<std::size_t>(r)];
      rk.gathered += bytes;
      rk.dp_busy += (engine_.now() - start).seconds();
      if (trace_ != nullptr) span(rk.lane_dp, "all-gather parameters " + size_label(bytes), "communication", start);
      next_param_gather(r, total);
      if (rk.param_waiting && !waits_for_parameters(rk, rk.program->segments[rk.segment])) {
        rk.param_waiting = false;
        rk.gather_wait += (engine_.now() - rk.param_wait_mark).seconds();
        advance(r);
      }
    });
  }

  // A forward segment of the first micro-batch needs the parameters of its layers gathered.
  bool waits_for_parameters(const Rank& rank, const Segment& s) const {
    if (!overlap_param_gather() || !rank.pass.forward || rank.pass.micro_batch != 0 || s.parameters_through <= 0) return false;
    const double need = rank.chunk_offset[static_cast<std::size_t>(rank.pass.chunk)] + s.parameters_through;
    return rank.gathered < need * (1 - 1e-12);
  }

  // A collective pipelined with the kernels it overlaps (s.overlap_s): a tensor collective with
  // its GEMM (plan.tp_comm_overlap), the ring of ring attention with the attention kernels. Both
  // run at once, in `chunks` pieces; when both are done, one piece of the shorter remains (the
  // pipeline's fill). The kernels count as compute, the rest of the segment as communication.
  void overlapped_collective(int r, const Segment& s, Groups groups, int chunks, Blocking blocking) {
    auto left = std::make_shared<int>(2);
    auto comm_s = std::make_shared<double>(0);
    const double kernels = s.overlap_s;
    const bool recompute = s.recompute;
    const sim::Time start = engine_.now();
    auto both = [this, r, left, comm_s, kernels, recompute, chunks, blocking] {
      if (--*left > 0) return;
      const double fill = std::min(*comm_s, kernels) / std::max(1, chunks);
      after(fill, [this, r, kernels, recompute, blocking] {
        Rank& rank = ranks_[static_cast<std::size_t>(r)];
        rank.compute += kernels;
        if (recompute) rank.recompute += kernels;
        else (rank.pass.forward ? rank.forward : rank.backward) += kernels;
        blocking_done(r, blocking, kernels);
      });
    };
    run_groups(s.collective, s.bytes, std::move(groups), network::Algorithm::automatic, [this, start, comm_s, both] {
      *comm_s = (engine_.now() - start).seconds();
      both();
    });
    after(kernels, both);
  }

  void blocking_done(int r, Blocking blocking, double overlapped_compute_s = 0) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const Segment& s = rank.program->segments[rank.segment];
    const double t = (engine_.now() - rank.segment_start).seconds() - overlapped_compute_s;
    (blocking == Blocking::tensor ? rank.tensor : blocking == Blocking::expert ? rank.expert : rank.context) += t;
    if (trace_ != nullptr) span(rank.lane_blocking, network::to_string(s.collective) + " " + size_label(s.bytes), "communication", rank.segment_start);
    ++rank.segment;
    advance(r);
  }

  void end_pass(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const PassId pass = rank.pass;
    const int vs = virtual_stage(r, pass);
    if (trace_ != nullptr) span(rank.lane_compute,
         std::string(pass.forward ? "F" : pass.weight ? "W" : "B") + " mb" + std::to_string(pass.micro_batch) +
             (plan_.virtual_stages > 1 ? " chunk" + std::to_string(pass.chunk) : ""),
         "compute", rank.pass_start);
    const bool sends_forward = pass.forward && vs < V_ - 1;
    const bool sends_backward = !pass.forward && !pass.weight && vs > 0;
    rank.busy = false;
    if ((sends_forward || sends_backward) && !plan_.overlap_p2p) {
      rank.exchange_blocked = true;  // after_pass runs when the send has arrived
      rank.exchange_mark = engine_.now();
    }
    if (sends_forward) send(r, vs, pass.micro_batch, true);
    if (sends_backward) send(r, vs, pass.micro_batch, false);
    if (!rank.exchange_blocked) after_pass(r);
  }

  void after_pass(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.next == rank.order.size()) {
      rank.passes_done = true;
      rank.passes_end = engine_.now();
      close_bucket(r);
      try_reduce(r);
      maybe_optimizer(r);
    }
    try_start(r);
  }

  // ---- pipeline sends ----------------------------------------------------------------------
  void send(int r, int vs, int micro_batch, bool forward) {
    const int to_vs = forward ? vs + 1 : vs - 1;
    const int to = to_vs % P_;
    // Forward sends this stage's output; backward sends the gradient of its input, which has the
    // previous stage's output shape.
    const double whole = stage(forward ? vs : vs - 1).output_bytes;
    const bool split = plan_.tensor > 1 && (plan_.scatter_gather || plan_.sequence_parallel);
    const double per_rank = split ? whole / plan_.tensor : whole;
    const bool gather_after = split && !plan_.sequence_parallel;
    const int dir = forward ? 0 : 1;
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.sends[dir].push_back([this, r, to, to_vs, micro_batch, forward, per_rank, whole, gather_after, dir] {
      const sim::Time start = engine_.now();
      auto remaining = std::make_shared<int>(plan_.tensor * plan_.context);
      auto arrive = [this, r, to, to_vs, micro_batch, forward, whole, gather_after, dir, start] {
        Rank& sender = ranks_[static_cast<std::size_t>(r)];
        sender.pipe_busy += (engine_.now() - start).seconds();
        if (trace_ != nullptr) span(forward ? sender.lane_send_next : sender.lane_send_prev,
             std::string(forward ? "activations" : "gradients") + " mb" + std::to_string(micro_batch) + " " + size_label(whole),
             "communication", start);
        sender.sending[dir] = false;
        next_send(r, dir);
        if (sender.exchange_blocked) {
          sender.exchange_blocked = false;
          sender.exchange += (engine_.now() - sender.exchange_mark).seconds();
          after_pass(r);
        }
        auto deliver = [this, to, to_vs, micro_batch, forward] {
          auto& arrived = forward ? arrived_forward_ : arrived_backward_;
          arrived[static_cast<std::size_t>(to_vs * M_ + micro_batch)] = 1;
          try_start(to);
        };
        if (gather_after) {
          after(isolated_time(CollectiveKind::all_gather, whole, tensor_groups(to), network::Algorithm::automatic), deliver);
        } else {
          deliver();
        }
      };
      auto shared_arrive = std::make_shared<std::function<void()>>(arrive);
      for (int t = 0; t < plan_.tensor; ++t) {
        for (int c = 0; c < plan_.context; ++c) {
          network::CollectiveSpec spec;
          spec.kind = CollectiveKind::send_recv;
          spec.bytes = per_rank;
          spec.ranks = {accelerator(0, r, t, c), accelerator(0, to, t, c)};
          if (spec.ranks[0] == spec.ranks[1] || per_rank <= 0) {
            if (--*remaining == 0) after(0, *shared_arrive);
            continue;
          }
          collectives_.start(spec, [remaining, shared_arrive](const network::CollectiveResult&) {
            if (--*remaining == 0) (*shared_arrive)();
          });
        }
      }
    });
    next_send(r, dir);
  }

  void next_send(int r, int dir) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.sending[dir] || rank.sends[dir].empty()) return;
    rank.sending[dir] = true;
    auto fn = std::move(rank.sends[dir].front());
    rank.sends[dir].pop_front();
    fn();
  }

  // ---- gradients, optimizer ----------------------------------------------------------------
  // Matrices of a segment go to the dense bucket (PowerSGD; it runs without experts' own buckets).
  void add_gradients(int r, double dense, double expert, const std::vector<WeightMatrix>& matrices) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.open_bytes += dense;
    rank.open_expert_bytes += expert;
    rank.open_matrices.insert(rank.open_matrices.end(), matrices.begin(), matrices.end());
    if (rank.open_bytes >= plan_.bucket_bytes) {
      rank.ready.push_back({rank.open_bytes, false, std::move(rank.open_matrices)});
      rank.open_bytes = 0;
      rank.open_matrices.clear();
    }
    if (rank.open_expert_bytes >= plan_.bucket_bytes) {
      rank.ready.push_back({rank.open_expert_bytes, true, {}});
      rank.open_expert_bytes = 0;
    }
    try_reduce(r);
  }

  void close_bucket(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.open_bytes > 0) rank.ready.push_back({rank.open_bytes, false, std::move(rank.open_matrices)});
    if (rank.open_expert_bytes > 0) rank.ready.push_back({rank.open_expert_bytes, true, {}});
    rank.open_bytes = rank.open_expert_bytes = 0;
    rank.open_matrices.clear();
  }

  // The phases of a bucket's reduction when it is not one plain collective: compression, or
  // parameter servers (gradient_compression.hpp, parameter_server.hpp).
  bool phased() const { return plan_.compression.method != CompressionMethod::none || plan_.parameter_server.enabled; }

  std::vector<ReductionPhase> bucket_phases(const Bucket& bucket) const {
    const Precision g = plan_.gradient_precision;
    const double elements = bucket.bytes / bytes_per_element(g);
    if (plan_.parameter_server.enabled) {
      const ParameterServerConfig& ps = plan_.parameter_server;
      return ps_reduction(ps, bucket.bytes, elements, plan_.data / ps.replicas_per_node,
                          optimizer_bytes_per_parameter(plan_.optimizer, plan_.precision));
    }
    const int replicas = bucket.expert ? plan_.data / plan_.expert : plan_.gradient_replicas();
    return compressed_reduction({elements, bucket.matrices}, replicas, plan_.compression, g, c_.device, c_.profile);
  }

  // The replicas of each node (parameter servers: tensor = pipeline = 1).
  Groups node_groups() const {
    const int per = plan_.parameter_server.replicas_per_node;
    Groups out;
    for (int d = 0; d < plan_.data; d += per) {
      std::vector<VertexId> g;
      for (int k = 0; k < per; ++k) g.push_back(accelerator(d + k, 0, 0));
      out.push_back(std::move(g));
    }
    return out;
  }

  // Runs phases[i..] of pipeline rank r's bucket one after another, then `done`.
  void run_phases(int r, std::shared_ptr<const std::vector<ReductionPhase>> phases, std::size_t i, bool expert, std::function<void()> done) {
    if (i >= phases->size()) {
      done();
      return;
    }
    const ReductionPhase& ph = (*phases)[i];
    auto next = [this, r, phases, i, expert, done = std::move(done)]() mutable { run_phases(r, phases, i + 1, expert, std::move(done)); };
    if (ph.kind == ReductionPhase::Kind::collective) {
      const network::Algorithm algorithm = ph.collective == CollectiveKind::all_reduce ? c_.all_reduce : network::Algorithm::automatic;
      run_groups(ph.collective, ph.bytes, ph.node_local ? node_groups() : data_groups(r, expert), algorithm, std::move(next));
      return;
    }
    if (ph.kind == ReductionPhase::Kind::device) {
      Rank& rank = ranks_[static_cast<std::size_t>(r)];
      rank.compression += ph.seconds;
      if (!rank.passes_done) rank.compression_queued += ph.seconds;
    }
    after(ph.seconds, std::move(next));
  }

  void try_reduce(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.reducing || rank.ready.empty()) return;
    if ((!plan_.overlap_grad_reduce || reduces_in_step(plan_.compression)) && !rank.passes_done) return;
    const Bucket bucket = rank.ready.front();
    rank.ready.pop_front();
    rank.reducing = true;
    ++rank.buckets;
    const sim::Time start = engine_.now();
    const CollectiveKind kind = plan_.zero_stage == 0 ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter;
    const std::string label = plan_.parameter_server.enabled ? "push/pull"
                              : phased() ? to_string(plan_.compression.method) + " " + network::to_string(kind)
                                         : network::to_string(kind);
    const bool holds = !phased();  // a plain NCCL collective (compression and parameter servers: not counted)
    if (holds) held_changed(r, +1);
    auto done = [this, r, start, bucket, label, holds] {
      if (holds) held_changed(r, -1);
      Rank& rk = ranks_[static_cast<std::size_t>(r)];
      rk.dp_busy += (engine_.now() - start).seconds();
      if (trace_ != nullptr) span(rk.lane_dp, label + (bucket.expert ? " experts " : " ") + size_label(bucket.bytes), "communication", start);
      rk.reducing = false;
      try_reduce(r);
      maybe_optimizer(r);
    };
    const int replicas = bucket.expert ? plan_.data / plan_.expert : plan_.gradient_replicas();
    if (phased()) {
      auto phases = std::make_shared<const std::vector<ReductionPhase>>(bucket_phases(bucket));
      rank.wire += wire_bytes(*phases, replicas);
      run_phases(r, phases, 0, bucket.expert, done);
      return;
    }
    ReductionPhase plain;
    plain.kind = ReductionPhase::Kind::collective;
    plain.collective = kind;
    plain.bytes = bucket.bytes;
    rank.wire += wire_bytes({plain}, replicas);
    run_groups(kind, bucket.bytes, data_groups(r, bucket.expert), kind == CollectiveKind::all_reduce ? c_.all_reduce : network::Algorithm::automatic,
               done);
  }

  void maybe_optimizer(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (!rank.passes_done || rank.reducing || !rank.ready.empty() || rank.optimizer_started) return;
    rank.optimizer_started = true;
    rank.optimizer_start = engine_.now();
    const double shard = plan_.zero_stage >= 1 ? plan_.gradient_replicas() : 1;
    // Parameter servers step the optimizer on their CPUs (their time is in the pull's wait).
    const double bytes = plan_.parameter_server.enabled
                             ? 0.0
                             : rank.parameters / shard *
                                   (optimizer_bytes_per_parameter(plan_.optimizer, plan_.precision) +
                                    mixed_precision_step_bytes(plan_.precision, plan_.gradient_precision));
    // A fused multi-tensor optimizer (apex FusedAdam, torch's fused/foreach Adam) streams every
    // parameter's state in a few long kernels: the optimizer class of the kernel model.
    rank.optimizer = bytes <= 0 ? 0.0
                     : c_.profile.kernels.present()
                         ? memory_kernel_time(MemoryKernel::optimizer, bytes, c_.profile.kernels.memory, c_.device.memory_bandwidth,
                                              c_.profile.memory_efficiency) +
                               c_.profile.kernels.host.forward_kernel_s
                         : bytes / (c_.device.memory_bandwidth * c_.profile.memory_at(bytes, &optimizer_out_of_range_)) +
                               c_.profile.kernel_launch_overhead_s;
    after(rank.optimizer, [this, r] {
      Rank& rk = ranks_[static_cast<std::size_t>(r)];
      if (trace_ != nullptr) span(rk.lane_compute, "optimizer step", "optimizer", rk.optimizer_start);
      if ((plan_.zero_stage == 1 || plan_.zero_stage == 2) && !overlap_param_gather()) {
        // Every replica updated its shard: gather the new parameters.
        const sim::Time start = engine_.now();
        const double bytes = rk.parameters * bytes_per_element(storage_precision(plan_.precision));
        run_groups(CollectiveKind::all_gather, bytes, data_groups(r, false), network::Algorithm::automatic, [this, r, start, bytes] {
          Rank& k = ranks_[static_cast<std::size_t>(r)];
          k.dp_busy += (engine_.now() - start).seconds();
          if (trace_ != nullptr) span(k.lane_dp, "all-gather parameters " + size_label(bytes), "communication", start);
          finish(r);
        });
        return;
      }
      if (plan_.zero_stage == 3 && !program_.after_step.empty()) {
        // DeepSpeed gathers the persistent tensors again after the step (zero3_schedule.hpp).
        rk.after_step_host = program_.after_step_host_s;
        after(program_.after_step_host_s, [this, r] { after_step_gathers(r, 0); });
        return;
      }
      finish(r);
    });
  }

  void finish(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.finished = true;
    rank.finish = engine_.now();
  }

  // ---- ZeRO-3 ------------------------------------------------------------------------------
  // A ZeRO point passed its wait: the device idles while the host works, then the collectives go out.
  void zero_point_host(int r) {
    const Segment& s = ranks_[static_cast<std::size_t>(r)].program->segments[ranks_[static_cast<std::size_t>(r)].segment];
    after(s.host_s, [this, r] {
      Rank& rank = ranks_[static_cast<std::size_t>(r)];
      const Segment& seg = rank.program->segments[rank.segment];
      rank.zero_host += seg.host_s + seg.host_after_s;
      for (int i : seg.issue) rank.zero.push(&rank.program->collectives[static_cast<std::size_t>(i)]);
      next_zero(r);
      after(seg.host_after_s, [this, r] {
        ++ranks_[static_cast<std::size_t>(r)].segment;
        advance(r);
      });
    });
  }

  void next_zero(int r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    const ZeroCollective* c = rank.zero.start();
    if (c == nullptr) return;
    const sim::Time start = engine_.now();
    // ZeRO-3 runs without a pipeline, and its stream runs one collective at a time: nothing else
    // of the job crosses the nodes meanwhile (expert all-to-alls aside), so each distinct
    // collective is timed alone, once.
    held_changed(r, +1);
    after(alone_time(c->kind, c->bytes, data_groups(r, false)), [this, r, c, start] {
      held_changed(r, -1);
      Rank& rk = ranks_[static_cast<std::size_t>(r)];
      rk.dp_busy += (engine_.now() - start).seconds();
      if (trace_ != nullptr) span(rk.lane_gather, network::to_string(c->kind) + " " + std::to_string(c->tensors) + " tensor" + (c->tensors == 1 ? " " : "s ") +
                               size_label(c->bytes), "communication", start);
      rk.zero.finish();
      if (rk.zero_waiting) {
        // The compute stream waited on this collective since the mark.
        (c->kind == CollectiveKind::all_gather ? rk.gather_wait : rk.reduce_wait) += (engine_.now() - rk.zero_mark).seconds();
        rk.zero_mark = engine_.now();
      }
      next_zero(r);
      if (rk.zero_waiting && rk.zero.done(rk.zero_needed)) {
        rk.zero_waiting = false;
        const Segment& s = rk.program->segments[rk.segment];
        if (s.host_s > 0 || s.host_after_s > 0 || !s.issue.empty()) {
          zero_point_host(r);
        } else {
          ++rk.segment;
          advance(r);
        }
      }
    });
  }

  // After the step: the collectives, one after another, then the iteration ends.
  void after_step_gathers(int r, std::size_t i) {
    if (i >= program_.after_step.size()) {
      finish(r);
      return;
    }
    const ZeroCollective& c = program_.after_step[i];
    const sim::Time start = engine_.now();
    after(alone_time(c.kind, c.bytes, data_groups(r, false)), [this, r, i, start, &c] {
      Rank& rk = ranks_[static_cast<std::size_t>(r)];
      rk.dp_busy += (engine_.now() - start).seconds();
      if (trace_ != nullptr) span(rk.lane_gather, "all-gather persistent " + size_label(c.bytes), "communication", start);
      after_step_gathers(r, i + 1);
    });
  }

  // ---- results -----------------------------------------------------------------------------
  IterationBreakdown breakdown() const {
    IterationBreakdown b;
    int critical = 0;
    for (int r = 0; r < P_; ++r) {
      if (ranks_[static_cast<std::size_t>(r)].finish > ranks_[static_cast<std::size_t>(critical)].finish) critical = r;
    }
    const Rank& k = ranks_[static_cast<std::size_t>(critical)];
    b.iteration_s = k.finish.seconds();
    b.critical_rank = critical;
    b.compute_s = k.compute;
    b.held_sm_s = k.held_extra;
    b.forward_s = k.forward;
    b.backward_s = k.backward;
    b.recompute_s = k.recompute;
    b.tensor_comm_s = k.tensor;
    b.expert_comm_s = k.expert;
    b.context_comm_s = k.context;
    b.gather_wait_s = k.gather_wait;
    b.reduce_wait_s = k.reduce_wait;
    b.zero_host_s = k.zero_host + k.after_step_host;
    b.activation_offload_s = k.offload;
    b.optimizer_s = k.optimizer;
    b.exposed_dp_comm_s = std::max(0.0, (k.finish - k.passes_end).seconds() - k.optimizer - k.after_step_host);
    b.compression_blocking_s = k.compression_blocking;
    b.pipeline_comm_s = k.exchange;
    // A rank's work in its passes: the stream busy or blocked on its own operations, not waiting
    // for another stage.
    const auto busy = [](const Rank& x) {
      return x.compute + x.tensor + x.expert + x.context + x.gather_wait + x.reduce_wait + x.zero_host + x.offload +
             x.compression_blocking + x.exchange;
    };
    b.pipeline_bubble_s = std::max(0.0, k.passes_end.seconds() - busy(k));
    double busiest = 0;
    for (const Rank& x : ranks_) busiest = std::max(busiest, busy(x));
    b.pipeline_imbalance_s = std::clamp(busiest - busy(k), 0.0, b.pipeline_bubble_s);
    b.dp_comm_busy_s = k.dp_busy;
    b.pipeline_comm_busy_s = k.pipe_busy;
    b.gradient_buckets = k.buckets;
    b.simulated_ranks = P_;
    b.compression_s = k.compression;
    b.gradient_wire_bytes = k.wire;
    if (plan_.parameter_server.enabled && !plan_.parameter_server.synchronous) async_steady_state(b, k);
    const double samples = plan_.global_batch();
    b.samples_per_s = samples / b.iteration_s;
    b.tokens_per_s = b.samples_per_s * c_.model->tokens_per_sample;
    double recompute_per_sample = 0;
    for (const StageProgram& s : program_.stages) recompute_per_sample += s.recompute_flops / plan_.micro_batch_size;
    // Recompute FLOPs above are per tensor and context rank; the job does them on every one.
    b.model_flops_per_iteration = c_.model->training_flops_per_sample() * samples;
    b.hardware_flops_per_iteration = b.model_flops_per_iteration + recompute_per_sample * plan_.tensor * plan_.context * samples;
    const double devices = plan_.devices();
    b.tflops_per_device = b.model_flops_per_iteration / b.iteration_s / devices / 1e12;
    const double peak = c_.device.peak(plan_.precision);
    b.mfu = b.model_flops_per_iteration / b.iteration_s / devices / peak;
    b.hfu = b.hardware_flops_per_iteration / b.iteration_s / devices / peak;
    b.flows = static_cast<long long>(flows_.flows_started()) + memo_flows_;
    b.events = static_cast<long long>(engine_.events_executed());
    b.profile_out_of_range = program_.profile_out_of_range + optimizer_out_of_range_;
    set_compute_families(b, critical);
    return b;
  }

  // Asynchronous parameter servers: the worker's steady-state cycle (parameter_server.hpp).
  void async_steady_state(IterationBreakdown& b, const Rank& k) const {
    const ParameterServerConfig& ps = plan_.parameter_server;
    const int workers = plan_.data / ps.replicas_per_node;
    const double g = bytes_per_element(plan_.gradient_precision);
    const double bytes = k.parameters * g;
    const double compute = b.iteration_s - b.exposed_dp_comm_s;
    const double nic = ps_nic_bound_time(ps, bytes, workers);
    const double update = ps_update_time(ps, k.parameters, g, optimizer_bytes_per_parameter(plan_.optimizer, plan_.precision), workers, false);
    const AsyncSteadyState a = ps_async_steady_state(ps, b.iteration_s, compute, k.dp_busy, nic, update);
    b.iteration_s = a.cycle_s;
    b.exposed_dp_comm_s = a.cycle_s - compute;
    b.staleness = a.staleness;
  }

  // The compute time of the reported rank by kernel family (shares of its stage programs), and
  // the iteration's error band: its compute part scaled by each family's held-out quantiles of
  // measured / predicted (kernel_profile.hpp), the rest (communication, bubbles) as predicted.
  void set_compute_families(IterationBreakdown& b, int critical) const {
    std::array<double, kKernelFamilies> family{};
    double total = 0;
    for (std::size_t v = static_cast<std::size_t>(critical); v < program_.stages.size(); v += static_cast<std::size_t>(P_)) {
      const StageProgram& s = program_.stages[v];
      for (std::size_t f = 0; f < family.size(); ++f) family[f] += s.forward.family_s[f] + s.backward.family_s[f] + s.weight.family_s[f];
      total += s.forward.compute_s + s.backward.compute_s + s.weight.compute_s;
    }
    double p10 = 0, p90 = 0;
    for (std::size_t f = 0; f < family.size(); ++f) {
      const double share = total > 0 ? family[f] / total : 0.0;
      b.compute_by_family_s[f] = share * b.compute_s;
      const ErrorBand& band = c_.profile.kernels.bands[f];
      p10 += share * (band.cases > 0 ? band.p10 : 1.0);
      p90 += share * (band.cases > 0 ? band.p90 : 1.0);
    }
    if (total <= 0) p10 = p90 = 1;
    b.iteration_p10_s = b.iteration_s + b.compute_s * (p10 - 1);
    b.iteration_p90_s = b.iteration_s + b.compute_s * (p90 - 1);
  }

  const TrainingConfig& c_;
  const ParallelPlan& plan_;
  IterationProgram program_;
  long long optimizer_out_of_range_ = 0;
  sim::Engine engine_;
  network::Routing routing_;
  network::FlowNetwork flows_;
  network::Collectives collectives_;
  IterationTrace* trace_;
  int P_, V_, M_;
  std::vector<VertexId> job_;
  std::vector<Rank> ranks_;
  std::vector<char> arrived_forward_, arrived_backward_;
  std::vector<std::function<void()>> continuations_;
  std::vector<std::size_t> free_slots_;
  std::vector<Groups> tensor_groups_;  // per pipeline rank
  // isolated_time's memo, hashed: looked up at every tensor-parallel collective, where an
  // ordered map compared whole group lists at each node it passed.
  struct MemoHash {
    using is_transparent = void;
    template <typename Key>
    std::size_t operator()(const Key& key) const {
      std::size_t h = std::hash<int>()(std::get<0>(key)) * 31 + std::hash<double>()(std::get<1>(key));
      for (const auto& group : std::get<2>(key)) {
        h = h * 1000003 + group.size();
        for (VertexId v : group) h = h * 31 + v;
      }
      return h;
    }
  };
  struct MemoEqual {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::get<0>(a) == std::get<0>(b) && std::get<1>(a) == std::get<1>(b) && std::get<2>(a) == std::get<2>(b);
    }
  };
  std::unordered_map<std::tuple<int, double, Groups>, double, MemoHash, MemoEqual> memo_;
  long long memo_flows_ = 0;
};

}  // namespace

IterationBreakdown replay_iteration(const TrainingConfig& config, IterationTrace* trace) {
  if (config.model == nullptr || config.model->layers.empty()) throw std::invalid_argument("training replay: no model");
  if (config.topology == nullptr) throw std::invalid_argument("training replay: no fabric topology");
  validate_plan(config.plan, *config.model, config.plan.devices());
  if (config.topology->accelerators().size() < static_cast<std::size_t>(config.plan.devices())) {
    throw std::invalid_argument("training replay: the fabric has " + std::to_string(config.topology->accelerators().size()) +
                                " accelerators, the plan needs " + std::to_string(config.plan.devices()));
  }
  if (!config.device.supports(config.plan.precision)) {
    throw std::invalid_argument("training replay: " + config.device.name + " has no " + std::string(to_string(config.plan.precision)) + " support");
  }
  Replay replay(config, trace);
  return replay.run();
}

}  // namespace dlsim::models
