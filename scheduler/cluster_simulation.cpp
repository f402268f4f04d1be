// The multi-job cluster simulation (see cluster_simulation.hpp).
#include "scheduler/cluster_simulation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <stdexcept>

#include "scheduler/autoscaler.hpp"
#include "scheduler/checkpoint_math.hpp"
#include "scheduler/fabric_share.hpp"
#include "scheduler/rank_walk.hpp"
#include "scheduler/pool_billing.hpp"
#include "sim/engine.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler {

std::string to_string(Placement p) {
  switch (p) {
    case Placement::packed: return "packed";
    case Placement::spread: return "spread";
    case Placement::topology_aware: return "topology-aware";
  }
  return "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Node {
  int pool = 0;
  int leaf = 0;
  int free = 0;
  NodeState state = NodeState::provisioning;
  sim::Time requested, ready_at, busy_since, idle_since;
  double busy_s = 0;
  std::vector<int> jobs;           // jobs holding GPUs here
  int generation = 0;              // invalidates stale reclaim/failure events
  int nic_link = -1;               // its NIC on the shared fabric (-1: not modelled)
  bool committed = false;          // reserved: covered by the pool's commitment
};

struct Allocation {
  int node = 0;
  int gpus = 0;
  sim::Time since;                 // when the job took these GPUs
};

struct Job {
  const JobSpec* spec = nullptr;
  JobState state = JobState::queued;
  std::vector<Allocation> alloc;
  std::int64_t saved = 0;          // iterations safe in the last checkpoint (or suspension)
  std::int64_t done_at_start = 0;  // iterations done when the current running spell began
  sim::Time run_start;             // origin of the iterations of the current spell (see resume)
  sim::Time spell_start;           // when the current running spell began
  sim::Time t_iter;                // one iteration at the GPUs it holds, fabric sharing included
  sim::Time base_iter;             // one iteration at spec->gpus
  int gpus = 0;                    // GPUs held now
  sim::Time state_since;
  double interval_s = kInf;        // running time between checkpoints
  int generation = 0;              // invalidates stale events of an earlier spell
  bool emergency = false;          // checkpointing because of a spot notice
  double attained_gpu_s = 0;       // closed spells
  int rank_position = -1;          // in rank_walk_ (ranked policies), -1: in neither set
  bool rank_running = false;       // in its running set (else queued)
  int rank_gpus = 0;               // the GPUs it counts there
  JobResult result;
};

class Simulation {
 public:
  Simulation(const ClusterSpec& spec, const SimulationOptions& options)
      : spec_(spec), options_(options), policy_(make_policy(options.policy, options.backfill, options.las_thresholds_gpu_s)),
        streams_(options.seed) {
    for (const JobSpec& j : spec.jobs) {
      Job job;
      job.spec = &j;
      job.t_iter = sim::Time::from_seconds(j.iteration_s);
      job.base_iter = job.t_iter;
      if (job.t_iter.count_ns() <= 0) throw std::invalid_argument("job " + j.name + ": iteration time below 1 ns");
      job.result.name = j.name;
      job.result.gpus = j.gpus;
      job.result.submit_s = j.submit_s;
      jobs_.push_back(job);
      if (std::find(queue_names_.begin(), queue_names_.end(), j.queue) == queue_names_.end()) queue_names_.push_back(j.queue);
    }
    queue_gpus_.assign(queue_names_.size(), 0.0);
    queue_weight_ = queue_weights(options.queue_weights);
    pool_results_.resize(spec.pools.size());
    last_scale_up_.assign(spec.pools.size(), -1.0);
    for (const PoolSpec& p : spec.pools) {
      autoscalers_.push_back(p.autoscaled() ? make_autoscaler(p) : nullptr);
      autoscaling_ = autoscaling_ || p.autoscaled();
    }
    pool_nodes_.assign(spec.pools.size(), {});
    pool_live_.resize(spec.pools.size());
    for (const JobSpec& j : spec.jobs) elastic_ = elastic_ || j.elastic();
    for (const JobSpec& j : spec.jobs) pinned_jobs_ = pinned_jobs_ || !j.pool.empty();
    keyed_ = policy_->has_queue_key() && !policy_->preemptive();
    if (options.rank_index && policy_->preemptive() && policy_->rank_levels() > 0) {
      // Rank positions: level x jobs + arrival order (submit time, then index), as by_arrival.
      by_arrival_.resize(jobs_.size());
      for (std::size_t i = 0; i < jobs_.size(); ++i) by_arrival_[i] = static_cast<int>(i);
      std::stable_sort(by_arrival_.begin(), by_arrival_.end(),
                       [&spec](int a, int b) { return spec.jobs[static_cast<std::size_t>(a)].submit_s < spec.jobs[static_cast<std::size_t>(b)].submit_s; });
      arrival_rank_.resize(jobs_.size());
      for (std::size_t r = 0; r < by_arrival_.size(); ++r) arrival_rank_[static_cast<std::size_t>(by_arrival_[r])] = static_cast<int>(r);
      rank_walk_ = std::make_unique<RankWalk>(policy_->rank_levels() * static_cast<int>(jobs_.size()));
    }
    for (std::size_t p = 0; p < spec.pools.size(); ++p) pool_results_[p].name = spec.pools[p].name;
    init_markets();
    busy_series_ = recorder().series("busy_gpus");
    ready_series_ = recorder().series("ready_gpus");
    cost_series_ = recorder().series("cost_usd");
    for (NodeState s : kCountedStates) node_series_[state_index(s)] = recorder().series("nodes_" + to_string(s));
  }

  ClusterResult run() {
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      for (int i = 0; i < spec_.pools[p].nodes; ++i) {
        if (market_open_[p]) add_node(static_cast<int>(p), true);
        else request_node(static_cast<int>(p));  // closed at time 0: fallback, or wait
      }
      if (spec_.pools[p].market.enabled()) arm_market(static_cast<int>(p));
    }
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      engine_.schedule_at(sim::Time::from_seconds(spec_.jobs[j].submit_s), [this, j] { arrive(static_cast<int>(j)); });
    }
    if (options_.series_interval_s > 0) sample_tick();
    for (std::size_t p = 0; p < autoscalers_.size(); ++p) {
      if (autoscalers_[p] && autoscalers_[p]->interval_s() > 0 && !jobs_.empty()) scale_tick(static_cast<int>(p));
    }
    if (!jobs_.empty()) engine_.run_until(sim::Time::from_seconds(options_.horizon_s));
    return finish();
  }

 private:
  sim::Recorder& recorder() { return result_.recorder; }

  // ---- nodes -------------------------------------------------------------------------------
  void add_node(int pool, bool initial) {
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
    Node n;
    n.pool = pool;
    n.leaf = pool_node_count(pool) / std::max(1, ps.nodes_per_leaf);
    n.free = ps.gpus_per_node;
    n.requested = engine_.now();
    if (ps.nic_bandwidth > 0) n.nic_link = fabric_.add_link(ps.nic_bandwidth);
    if (ps.capacity == Capacity::reserved && committed_live_[static_cast<std::size_t>(pool)] < ps.nodes) {
      n.committed = true;  // takes a free place in the commitment
      ++committed_live_[static_cast<std::size_t>(pool)];
    }
    nodes_.push_back(n);
    ++pool_results_[static_cast<std::size_t>(pool)].nodes_requested;
    count_node(pool, NodeState::provisioning, +1);
    if (autoscaling_) pool_live_[static_cast<std::size_t>(pool)].push_back(id_of_last_node());
    const int id = static_cast<int>(nodes_.size()) - 1;
    if (initial) {
      node_ready(id);
    } else {
      const double delay = ps.provisioning_random ? streams_.stream("provisioning").exponential(ps.provisioning_s) : ps.provisioning_s;
      engine_.schedule_in(sim::Time::from_seconds(delay), [this, id] { node_ready(id); });
    }
  }

  int pool_node_count(int pool) const { return pool_results_[static_cast<std::size_t>(pool)].nodes_requested; }

  // Nodes of a pool that are provisioning or in service (not lost, not released).
  int live_nodes(int pool) const {
    const auto& c = pool_nodes_[static_cast<std::size_t>(pool)];
    int n = 0;
    for (NodeState s : kCountedStates) n += c[state_index(s)];
    return n;
  }

  // Auto-scaling: asks the auto-scaler of each auto-scaled pool in turn (or of `only_pool`),
  // each seeing the queued GPUs it may serve less what the pools before it requested, and
  // applies its decision.
  void autoscale(ScaleTrigger trigger, int unplaced_gpus, int only_pool = -1, int idle_node = -1) {
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      if (!autoscalers_[p] || (only_pool >= 0 && static_cast<int>(p) != only_pool)) continue;
      const int pool = static_cast<int>(p);
      const int demand = std::max(0, std::min(unplaced_gpus, demand_for(pool, unplaced_gpus)));
      const int coming = pool_nodes_[p][state_index(NodeState::provisioning)] * spec_.pools[p].gpus_per_node;
      const ScaleDecision d = autoscalers_[p]->decide(scale_view(pool, trigger, demand, idle_node));
      int requested = apply_scaling(pool, d) * spec_.pools[p].gpus_per_node;
      // What the pool cannot give for the queued jobs (its market closed, or at max_nodes) goes
      // down its fallback chain.
      if (trigger == ScaleTrigger::pass && fallback_[p] >= 0) requested += overflow(pool, demand - coming - requested);
      unplaced_gpus -= requested;
    }
  }

  // Requests nodes for `gpus` GPUs from the fallbacks of `pool`, in chain order, each auto-scaled
  // fallback within its max_nodes and only while its market is open; returns the GPUs requested.
  int overflow(int pool, int gpus) {
    int requested = 0;
    for (int f = fallback_[static_cast<std::size_t>(pool)]; f >= 0 && f != pool && gpus > 0; f = fallback_[static_cast<std::size_t>(f)]) {
      const PoolSpec& fs = spec_.pools[static_cast<std::size_t>(f)];
      if (!fs.autoscaled() || !market_open_[static_cast<std::size_t>(f)]) continue;
      const int coming = pool_nodes_[static_cast<std::size_t>(f)][state_index(NodeState::provisioning)] * fs.gpus_per_node;
      const int need = gpus - coming;
      gpus -= coming;
      if (need <= 0) break;
      const int n = std::min((need + fs.gpus_per_node - 1) / fs.gpus_per_node, std::max(0, fs.max_nodes - live_nodes(f)));
      for (int i = 0; i < n; ++i) add_node(f, false);
      pool_results_[static_cast<std::size_t>(f)].fallback_nodes += n;
      if (n > 0) last_scale_up_[static_cast<std::size_t>(f)] = engine_.now().seconds();
      gpus -= n * fs.gpus_per_node;
      requested += n * fs.gpus_per_node;
    }
    return requested;
  }

  AutoscaleView scale_view(int pool, ScaleTrigger trigger, int unplaced_gpus, int idle_node) {
    AutoscaleView v;
    v.now_s = engine_.now().seconds();
    v.trigger = trigger;
    v.idle_node = idle_node;
    v.unplaced_gpus = unplaced_gpus;
    v.arrivals = arrivals_;
    PoolScaleView& pv = v.pool;
    const auto& c = pool_nodes_[static_cast<std::size_t>(pool)];
    pv.pool = pool;
    pv.gpus_per_node = spec_.pools[static_cast<std::size_t>(pool)].gpus_per_node;
    pv.nodes_provisioning = c[state_index(NodeState::provisioning)];
    pv.nodes_ready = c[state_index(NodeState::ready)];
    pv.nodes_busy = c[state_index(NodeState::busy)];
    pv.nodes_draining = c[state_index(NodeState::draining)];
    pv.last_scale_up_s = last_scale_up_[static_cast<std::size_t>(pool)];
    // The pool's live nodes (those released or lost since the last view drop out here).
    std::vector<int>& live = pool_live_[static_cast<std::size_t>(pool)];
    live.erase(std::remove_if(live.begin(), live.end(), [this](int id) { return !is_live(nodes_[static_cast<std::size_t>(id)]); }),
               live.end());
    for (int id : live) {
      const Node& n = nodes_[static_cast<std::size_t>(id)];
      if (n.state == NodeState::busy) pv.busy_gpus += pv.gpus_per_node - n.free;
      if (n.state == NodeState::ready) pv.idle.push_back({id, n.idle_since.seconds()});
    }
    std::stable_sort(pv.idle.begin(), pv.idle.end(), [](const IdleNode& a, const IdleNode& b) { return a.idle_since_s < b.idle_since_s; });
    return v;
  }

  // Requests and releases within the pool's bounds (no requests while its spot market is
  // closed); returns the nodes requested.
  int apply_scaling(int pool, const ScaleDecision& d) {
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
    const int add = market_open_[static_cast<std::size_t>(pool)] ? std::min(d.add_nodes, std::max(0, ps.max_nodes - live_nodes(pool))) : 0;
    for (int i = 0; i < add; ++i) add_node(pool, false);
    if (add > 0) last_scale_up_[static_cast<std::size_t>(pool)] = engine_.now().seconds();
    for (int id : d.release) {
      Node& n = nodes_[static_cast<std::size_t>(id)];
      if (n.pool != pool || n.state != NodeState::ready || live_nodes(pool) <= ps.min_nodes) continue;
      remove_ready(n);
      set_state(n, NodeState::terminated);
      ++n.generation;
      close_node(n);
    }
    return add;
  }

  // GPUs asked by the queued jobs that `pool` may serve (all of them when no job names a pool).
  int demand_for(int pool, int unplaced_gpus) const {
    if (!pinned_jobs_) return unplaced_gpus;
    int demand = 0;
    const auto add = [&](int id) {
      const Job& j = jobs_[static_cast<std::size_t>(id)];
      if (j.state == JobState::queued && (j.spec->pool.empty() || serves(pool, j.spec->pool))) demand += j.spec->start_gpus();
    };
    if (keyed_) {
      for (const auto& k : keyed_queue_) add(std::get<2>(k));
    } else {
      for (int id : queued_) add(id);
    }
    return demand;
  }

  // GPUs asked by the jobs in the queue.
  int queued_gpus() const {
    int g = 0;
    for (int id : queued_) {
      if (jobs_[static_cast<std::size_t>(id)].state == JobState::queued) g += jobs_[static_cast<std::size_t>(id)].spec->start_gpus();
    }
    return g;
  }

  void scale_tick(int pool) {
    autoscale(ScaleTrigger::tick, queued_gpus(), pool);
    if (all_jobs_finished()) return;
    engine_.schedule_in(sim::Time::from_seconds(autoscalers_[static_cast<std::size_t>(pool)]->interval_s()),
                        [this, pool] { scale_tick(pool); });
  }

  // A node idle since `since`: its idle timeout has passed; the auto-scaler decides whether it goes.
  void idle_check(int id, int gen, sim::Time since) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    if (n.generation != gen || n.state != NodeState::ready || n.idle_since != since) return;
    autoscale(ScaleTrigger::idle_timeout, queued_gpus(), n.pool, id);
  }

  void note_idle(int id) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
    n.idle_since = engine_.now();
    if (!ps.autoscaled()) return;
    const int gen = n.generation;
    const sim::Time since = n.idle_since;
    engine_.schedule_in(sim::Time::from_seconds(ps.idle_timeout_s), [this, id, gen, since] { idle_check(id, gen, since); });
  }

  void set_state(Node& n, NodeState to) {
    if (!allowed(n.state, to)) throw std::logic_error("node transition " + to_string(n.state) + " -> " + to_string(to));
    count_node(n.pool, n.state, -1);
    n.state = to;
    count_node(n.pool, to, +1);
  }

  // Nodes by state (provisioning, ready, busy, draining: the live ones), per pool and in series.
  static constexpr std::array<NodeState, 4> kCountedStates{NodeState::provisioning, NodeState::ready, NodeState::busy,
                                                           NodeState::draining};
  static constexpr std::size_t state_index(NodeState s) { return static_cast<std::size_t>(s); }

  static bool is_live(const Node& n) { return state_index(n.state) < kCountedStates.size(); }
  int id_of_last_node() const { return static_cast<int>(nodes_.size()) - 1; }

  void count_node(int pool, NodeState s, int change) {
    if (state_index(s) >= kCountedStates.size()) return;
    pool_nodes_[static_cast<std::size_t>(pool)][state_index(s)] += change;
    nodes_in_[state_index(s)] += change;
    if (options_.series_interval_s <= 0) record_nodes();  // else sampled by the tick
  }

  void record_nodes() {
    for (NodeState s : kCountedStates) recorder().record(node_series_[state_index(s)], engine_.now(), nodes_in_[state_index(s)]);
  }

  void node_ready(int id) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    set_state(n, NodeState::ready);
    n.ready_at = engine_.now();
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
    ready_gpus_ += ps.gpus_per_node;
    record_gpus();
    if (!market_open_[static_cast<std::size_t>(n.pool)]) {
      node_lost(id, n.generation, true);  // the price passed the maximum while it booted
      return;
    }
    arm_hazards(id);
    note_idle(id);
    request_pass();
  }

  void arm_hazards(int id) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
    const int gen = n.generation;
    if (ps.reclaim.kind != Hazard::Kind::none) {
      const double t = sample_time_to_event(ps.reclaim, 0.0, streams_.stream("reclaim/" + ps.name));
      const double notice = std::min(ps.notice_s, t);
      engine_.schedule_in(sim::Time::from_seconds(t - notice), [this, id, gen] { spot_notice(id, gen); });
      engine_.schedule_in(sim::Time::from_seconds(t), [this, id, gen] { node_lost(id, gen, true); });
    }
    if (ps.failure.kind != Hazard::Kind::none) {
      const double t = sample_time_to_event(ps.failure, 0.0, streams_.stream("failure/" + ps.name));
      engine_.schedule_in(sim::Time::from_seconds(t), [this, id, gen] { node_lost(id, gen, false); });
    }
  }

  void spot_notice(int id, int gen) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    if (n.generation != gen || (n.state != NodeState::ready && n.state != NodeState::busy)) return;
    if (n.state == NodeState::ready) remove_ready(n);
    set_state(n, NodeState::draining);
    // Jobs that can write a checkpoint within the notice do so now.
    const double notice = spec_.pools[static_cast<std::size_t>(n.pool)].notice_s;
    for (int j : std::vector<int>(n.jobs)) {
      Job& job = jobs_[static_cast<std::size_t>(j)];
      if (job.state == JobState::running && job.spec->checkpoint.policy != CheckpointPolicy::none &&
          job.spec->checkpoint.write_s() <= notice) {
        begin_checkpoint(j, true);
      }
    }
  }

  void remove_ready(Node& n) {
    // A node leaving service: its free GPUs no longer count.
    ready_gpus_ -= spec_.pools[static_cast<std::size_t>(n.pool)].gpus_per_node;
    record_gpus();
  }

  void node_lost(int id, int gen, bool reclaimed) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    if (n.generation != gen) return;
    if (n.state != NodeState::ready && n.state != NodeState::busy && n.state != NodeState::draining) return;
    if (n.state != NodeState::draining) remove_ready(n);
    if (reclaimed) {
      if (n.state != NodeState::draining) set_state(n, NodeState::draining);
      set_state(n, NodeState::preempted);
      ++pool_results_[static_cast<std::size_t>(n.pool)].reclaimed;
    } else {
      set_state(n, NodeState::failed);
      ++pool_results_[static_cast<std::size_t>(n.pool)].failed;
    }
    ++n.generation;
    close_node(n);
    for (int j : std::vector<int>(n.jobs)) preempt_job(j, false);
    if (spec_.pools[static_cast<std::size_t>(n.pool)].replace_lost_nodes && !all_jobs_finished()) request_node(n.pool);
    request_pass();
  }

  // Bills the node from its request until now.
  void close_node(Node& n) {
    PoolResult& pr = pool_results_[static_cast<std::size_t>(n.pool)];
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
    const double held = (engine_.now() - n.requested).seconds();
    if (n.free < ps.gpus_per_node) n.busy_s += (engine_.now() - n.busy_since).seconds();
    pr.node_hours += held / 3600.0;
    pr.busy_node_hours += n.busy_s / 3600.0;
    const double cost = node_bill(ps, n.committed, n.requested.seconds(), held, spec_.billing);
    const double provisioning_s = ((n.state == NodeState::provisioning ? engine_.now() : n.ready_at) - n.requested).seconds();
    pr.cost_usd += cost;
    billed_ += cost;
    busy_billed_ += held > 0 ? cost * std::min(1.0, n.busy_s / held) : 0.0;
    node_category(pr.costs, ps, n.committed) += cost;
    if (held > 0) {
      pr.costs.idle += cost * (1.0 - std::min(1.0, n.busy_s / held));
      pr.costs.provisioning += cost * std::min(1.0, provisioning_s / held);
    }
    if (n.committed) {
      // Covered by the commitment (billed in finish()): count what its time was worth.
      --committed_live_[static_cast<std::size_t>(n.pool)];
      committed_busy_usd_[static_cast<std::size_t>(n.pool)] += node_value(ps, true, 0, n.busy_s);
      committed_provisioning_usd_[static_cast<std::size_t>(n.pool)] += node_value(ps, true, 0, provisioning_s);
    }
    recorder().record(cost_series_, engine_.now(), billed_);
  }

  // ---- spot markets, fallbacks, commitments, egress ----------------------------------------
  void init_markets() {
    const std::size_t n = spec_.pools.size();
    fallback_.assign(n, -1);
    served_names_.assign(n, {});
    market_open_.assign(n, 1);
    closed_since_.assign(n, 0.0);
    waiting_.assign(n, 0);
    committed_live_.assign(n, 0);
    committed_busy_usd_.assign(n, 0.0);
    committed_provisioning_usd_.assign(n, 0.0);
    for (std::size_t p = 0; p < n; ++p) {
      for (std::size_t q = 0; q < n; ++q) {
        if (!spec_.pools[p].fallback.empty() && spec_.pools[q].name == spec_.pools[p].fallback) fallback_[p] = static_cast<int>(q);
      }
      if (spec_.pools[p].market.enabled()) market_open_[p] = spec_.pools[p].market.open_at(0) ? 1 : 0;
    }
    // A pool serves jobs that name it, or a pool whose fallbacks lead to it.
    for (std::size_t p = 0; p < n; ++p) {
      for (int q = static_cast<int>(p); q >= 0; q = fallback_[static_cast<std::size_t>(q)]) {
        served_names_[static_cast<std::size_t>(q)].push_back(spec_.pools[p].name);
      }
    }
  }

  bool serves(int pool, const std::string& name) const {
    const auto& names = served_names_[static_cast<std::size_t>(pool)];
    return std::find(names.begin(), names.end(), name) != names.end();
  }

  // The next crossing of a market's maximum price, as an engine event.
  void arm_market(int pool) {
    const double at = spec_.pools[static_cast<std::size_t>(pool)].market.next_crossing(engine_.now().seconds());
    if (!(at < options_.horizon_s)) return;
    engine_.schedule_at(sim::Time::from_seconds(at), [this, pool] { market_crossing(pool); });
  }

  // The price crossed the pool's maximum. Up: as under AWS's old bidding model, every node of
  // the pool gets the notice and is reclaimed after it; no node can be had while it stays up.
  // Down: the replacement requests that waited are served.
  void market_crossing(int pool) {
    const std::size_t p = static_cast<std::size_t>(pool);
    const PoolSpec& ps = spec_.pools[p];
    const bool open = ps.market.open_at(engine_.now().seconds());
    if (open != static_cast<bool>(market_open_[p])) {
      market_open_[p] = open ? 1 : 0;
      if (!open) {
        closed_since_[p] = engine_.now().seconds();
        for (std::size_t id = 0; id < nodes_.size(); ++id) {
          const Node& n = nodes_[id];
          if (n.pool != pool || (n.state != NodeState::ready && n.state != NodeState::busy)) continue;
          const int node = static_cast<int>(id), gen = n.generation;
          spot_notice(node, gen);
          engine_.schedule_in(sim::Time::from_seconds(ps.notice_s), [this, node, gen] { node_lost(node, gen, true); });
        }
      } else {
        pool_results_[p].unavailable_s += engine_.now().seconds() - closed_since_[p];
        const int waiting = waiting_[p];
        waiting_[p] = 0;
        if (!all_jobs_finished()) {
          for (int i = 0; i < waiting; ++i) add_node(pool, false);
        }
        request_pass();
      }
    }
    arm_market(pool);
  }

  // A replacement node for `pool`: from it while its market is open, else from its fallbacks
  // (an auto-scaled fallback within its max_nodes), else it waits for the market to reopen.
  void request_node(int pool) {
    for (int p = pool; p >= 0; p = fallback_[static_cast<std::size_t>(p)]) {
      const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(p)];
      if (!market_open_[static_cast<std::size_t>(p)]) continue;
      if (p != pool && ps.autoscaled() && live_nodes(p) >= ps.max_nodes) continue;
      if (p != pool) ++pool_results_[static_cast<std::size_t>(p)].fallback_nodes;
      add_node(p, false);
      return;
    }
    ++waiting_[static_cast<std::size_t>(pool)];
  }

  // Checkpoint bytes moved between the job's nodes and its storage (a write, or a read when
  // restoring), each node its GPUs' share; egress is charged to the job and the node's pool.
  void charge_checkpoint_transfer(Job& j, bool write) {
    const CheckpointSpec& c = j.spec->checkpoint;
    if (!(c.size_bytes > 0) || j.alloc.empty()) return;
    const int gpus = held_gpus(j);
    for (const Allocation& a : j.alloc) {
      const int pool = nodes_[static_cast<std::size_t>(a.node)].pool;
      const Location node = spec_.pools[static_cast<std::size_t>(pool)].location();
      const double bytes = c.size_bytes * a.gpus / gpus;
      const double usd = write ? egress_cost(bytes, node, c.storage(), spec_.egress)
                               : egress_cost(bytes, c.storage(), node, spec_.egress);
      j.result.costs.egress += usd;
      j.result.cost_usd += usd;
      pool_results_[static_cast<std::size_t>(pool)].costs.egress += usd;
    }
  }

  // At the end of the run: reserved commitments over the whole run, markets still closed.
  void settle_pools() {
    const double end_s = engine_.now().seconds();
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      const PoolSpec& ps = spec_.pools[p];
      PoolResult& pr = pool_results_[p];
      if (!market_open_[p]) pr.unavailable_s += end_s - closed_since_[p];
      if (ps.capacity != Capacity::reserved || ps.nodes == 0) continue;
      const double commitment = committed_cost(ps.price_per_node_hour, ps.nodes, end_s);
      pr.cost_usd += commitment;
      pr.costs.reserved += commitment;
      pr.costs.idle += commitment - std::min(commitment, committed_busy_usd_[p]);
      pr.costs.provisioning += std::min(commitment, committed_provisioning_usd_[p]);
      billed_ += commitment;
      busy_billed_ += std::min(commitment, committed_busy_usd_[p]);
    }
  }

  // ---- jobs --------------------------------------------------------------------------------
  void set_state(Job& j, JobState to) {
    if (!allowed(j.state, to)) throw std::logic_error("job " + j.spec->name + " transition " + to_string(j.state) + " -> " + to_string(to));
    if (j.state == JobState::queued) j.result.queueing_s += (engine_.now() - j.state_since).seconds();
    if (j.state == JobState::restarting) j.result.restart_s += (engine_.now() - j.state_since).seconds();
    if (j.state == JobState::checkpointing) j.result.checkpoint_s += (engine_.now() - j.state_since).seconds();
    j.state = to;
    j.state_since = engine_.now();
  }

  void arrive(int id) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    j.state_since = engine_.now();
    if (!fits_anywhere(*j.spec)) {
      set_state(j, JobState::failed);
      j.result.state = JobState::failed;
      ++finished_;
      if (all_jobs_finished()) engine_.stop();
      return;
    }
    if (autoscaling_) arrivals_.push_back({engine_.now().seconds(), j.spec->start_gpus(), pool_index(j.spec->pool)});
    enqueue(id);
    request_pass();
  }

  int pool_index(const std::string& name) const {
    for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
      if (spec_.pools[p].name == name) return static_cast<int>(p);
    }
    return -1;
  }

  // Into the queue: the arrival-order list, and the keyed order when the policy has one.
  void enqueue(int id) {
    queued_.push_back(id);
    rank_update(id);
    if (keyed_) {
      const JobView v = view_of(id);
      keyed_queue_.insert({policy_->queue_key(v), v.submit_s, id});
    }
  }

  bool fits_anywhere(const JobSpec& s) const {
    for (std::size_t i = 0; i < spec_.pools.size(); ++i) {
      const PoolSpec& p = spec_.pools[i];
      if ((s.pool.empty() || serves(static_cast<int>(i), s.pool)) && s.start_gpus() <= p.gpus_per_node * std::max(p.nodes, p.max_nodes)) return true;
    }
    return false;
  }

  // Progress of a running job at now: whole iterations since its spell began.
  std::int64_t progress(const Job& j) const {
    if (j.state != JobState::running) return j.done_at_start;
    return j.done_at_start + (engine_.now() - j.run_start).count_ns() / j.t_iter.count_ns();
  }

  // One iteration at g GPUs (linear scaling from the job's reference size).
  sim::Time iteration_at(const Job& j, int g) const {
    if (g == j.spec->gpus) return j.base_iter;
    return sim::Time::ns(std::max<std::int64_t>(1, std::llround(static_cast<double>(j.base_iter.count_ns()) * j.spec->gpus / g)));
  }

  int held_gpus(const Job& j) const {
    int g = 0;
    for (const Allocation& a : j.alloc) g += a.gpus;
    return g;
  }

  // Placed: restore (load the checkpoint, warm up), then run.
  void place(int id, const std::vector<Allocation>& alloc) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    set_state(j, JobState::restarting);
    j.alloc = alloc;
    for (Allocation& a : j.alloc) a.since = engine_.now();
    if (j.result.first_start_s < 0) j.result.first_start_s = engine_.now().seconds();
    for (const Allocation& a : alloc) take(a.node, a.gpus, id);
    j.gpus = held_gpus(j);
    j.t_iter = iteration_at(j, j.gpus);
    update_fabric(id);
    active_.push_back(id);
    rank_update(id);
    queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] += j.gpus;
    j.interval_s = checkpoint_interval(j);
    j.result.checkpoint_interval_s = j.interval_s;
    std::vector<std::pair<int, int>> leaves;
    for (const Allocation& a : alloc) {
      const Node& n = nodes_[static_cast<std::size_t>(a.node)];
      if (std::find(leaves.begin(), leaves.end(), std::make_pair(n.pool, n.leaf)) == leaves.end()) leaves.emplace_back(n.pool, n.leaf);
    }
    j.result.max_leaves = std::max(j.result.max_leaves, static_cast<int>(leaves.size()));
    const CheckpointSpec& c = j.spec->checkpoint;
    const double restore = (j.saved > 0 ? c.read_s() : 0.0) + c.warmup_s;
    if (j.saved > 0) charge_checkpoint_transfer(j, false);
    ++j.generation;
    const int gen = j.generation;
    engine_.schedule_in(sim::Time::from_seconds(restore), [this, id, gen] { start_running(id, gen); });
  }

  double checkpoint_interval(const Job& j) const {
    const CheckpointSpec& c = j.spec->checkpoint;
    if (c.policy == CheckpointPolicy::none) return kInf;
    if (c.policy == CheckpointPolicy::fixed) return c.interval_s;
    // Young/Daly from the failure rate of the nodes the job holds.
    double rate = 0;
    for (const Allocation& a : j.alloc) {
      const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(nodes_[static_cast<std::size_t>(a.node)].pool)];
      rate += 1.0 / ps.reclaim.mean() + 1.0 / ps.failure.mean();
    }
    if (rate <= 0) return kInf;
    return daly_interval(c.write_s(), 1.0 / rate);
  }

  void start_running(int id, int gen) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.generation != gen || j.state != JobState::restarting) return;
    set_state(j, JobState::running);
    j.done_at_start = j.saved;
    resume(id);
    if (j.spec->elastic()) request_pass();  // it may grow now
  }

  // Schedules the end of the current running spell: completion, the next checkpoint, or a
  // policy review, whichever comes first. `into`: how far into its current iteration the job
  // already is (carried over when only its speed changed; shorter than one iteration).
  void resume(int id, sim::Time into = {}) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    j.spell_start = engine_.now();
    j.run_start = engine_.now() - into;
    ++j.generation;
    const int gen = j.generation;
    const std::int64_t left = j.spec->iterations - j.done_at_start;
    const sim::Time finish = sim::Time::ns(left * j.t_iter.count_ns()) - into;
    engine_.schedule_in(finish, [this, id, gen] { complete(id, gen); });
    if (j.interval_s < kInf) {
      // At the first iteration boundary after the interval (checkpoints happen between steps).
      const std::int64_t steps = static_cast<std::int64_t>(std::ceil(j.interval_s / j.t_iter.seconds()));
      const sim::Time every = sim::Time::ns(std::max<std::int64_t>(1, steps) * j.t_iter.count_ns()) - into;
      if (every < finish) engine_.schedule_in(every, [this, id, gen] { if (jobs_[static_cast<std::size_t>(id)].generation == gen) begin_checkpoint(id, false); });
    }
    JobView v = view_of(id);
    const double review = policy_->next_review_gpu_s(v);
    if (review < kInf) {
      const double after_s = (review - v.attained_gpu_s) / j.gpus;
      if (sim::Time::from_seconds(after_s) < finish) {
        engine_.schedule_in(sim::Time::from_seconds(after_s) + sim::Time::ns(1), [this, id, gen] {
          if (jobs_[static_cast<std::size_t>(id)].generation != gen) return;
          rank_update(id);  // its level may have changed
          request_pass();
        });
      }
    }
  }

  // Closes the running spell: counts whole iterations and service. Returns how far into the
  // iteration under way the job was (lost when it stops; carried when only its speed changes).
  sim::Time pause_running(Job& j) {
    const std::int64_t now_done = progress(j);
    const sim::Time spell = engine_.now() - j.spell_start;
    j.result.computed_iterations += now_done - j.done_at_start;
    j.attained_gpu_s += spell.seconds() * j.gpus;
    const sim::Time own = iteration_at(j, j.gpus);
    if (j.t_iter > own) j.result.network_s += spell.seconds() * (1.0 - own.seconds() / j.t_iter.seconds());
    const sim::Time into = sim::Time::ns((engine_.now() - j.run_start).count_ns() - (now_done - j.done_at_start) * j.t_iter.count_ns());
    j.done_at_start = now_done;
    return into;
  }

  // ---- the shared fabric -------------------------------------------------------------------
  // The leaf uplink of (pool, leaf), made on first use.
  int uplink(int pool, int leaf) {
    const auto key = std::make_pair(pool, leaf);
    auto it = uplinks_.find(key);
    if (it != uplinks_.end()) return it->second;
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
    const int link = fabric_.add_link(ps.nodes_per_leaf * ps.nic_bandwidth / ps.oversubscription);
    uplinks_.emplace(key, link);
    return link;
  }

  // A job's traffic per iteration on the links it uses now: every node's NIC carries one ring
  // share, and so does every spanned leaf's uplink when it spans more than one leaf (see
  // fabric_share.hpp). None when it sits in one node or its nodes have no modelled NIC.
  std::vector<LinkLoad> loads_of(const Job& j) {
    std::vector<LinkLoad> loads;
    const int k = static_cast<int>(j.alloc.size());
    if (k <= 1 || j.spec->gradient_bytes <= 0) return loads;
    const double bytes = ring_bytes_per_node(j.spec->gradient_bytes, k);
    std::vector<std::pair<int, int>> leaves;
    for (const Allocation& a : j.alloc) {
      const Node& n = nodes_[static_cast<std::size_t>(a.node)];
      if (n.nic_link < 0) return {};
      loads.push_back({n.nic_link, bytes});
      if (std::find(leaves.begin(), leaves.end(), std::make_pair(n.pool, n.leaf)) == leaves.end()) leaves.emplace_back(n.pool, n.leaf);
    }
    if (leaves.size() > 1) {
      for (const auto& [pool, leaf] : leaves) loads.push_back({uplink(pool, leaf), bytes});
    }
    return loads;
  }

  // After a job's GPUs changed (placed, resized, released): its traffic on the fabric, and new
  // iteration times for every job that shares links with it, before or after.
  void update_fabric(int id) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.spec->gradient_bytes <= 0) return;
    std::vector<int> links = fabric_.links_of(id);
    std::vector<LinkLoad> loads = j.gpus > 0 ? loads_of(j) : std::vector<LinkLoad>{};
    if (links.empty() && loads.empty()) return;
    const bool on_fabric = !loads.empty();
    for (const LinkLoad& l : loads) links.push_back(l.link);
    const double own_s = iteration_at(j, std::max(1, j.gpus)).seconds();
    fabric_.set_job(id, own_s, j.spec->overlap_s * own_s / j.base_iter.seconds(), std::move(loads));
    for (int k : fabric_.settle(links)) retime(k, sim::Time::from_seconds(fabric_.iteration_s(k)));
    if (!on_fabric && j.gpus > 0) retime(id, iteration_at(j, j.gpus));
  }

  // A job's iteration time changes (its fabric share did): a running job keeps the iterations it
  // has done and how far it is into the current one, and goes on at the new speed.
  void retime(int id, sim::Time t_iter) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    t_iter = std::max(t_iter, sim::Time::ns(1));
    if (t_iter == j.t_iter) return;
    // Done at this very instant (its completion event has not run yet): nothing to change.
    if (j.state == JobState::running && progress(j) >= j.spec->iterations) return;
    if (j.state != JobState::running) {
      j.t_iter = t_iter;
      return;
    }
    const sim::Time into = pause_running(j);
    const sim::Time carried = sim::Time::ns(static_cast<std::int64_t>(
        static_cast<double>(into.count_ns()) / static_cast<double>(j.t_iter.count_ns()) * static_cast<double>(t_iter.count_ns())));
    j.t_iter = t_iter;
    resume(id, std::min(carried, t_iter - sim::Time::ns(1)));
  }

  void begin_checkpoint(int id, bool emergency) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.state != JobState::running) return;
    pause_running(j);
    set_state(j, JobState::checkpointing);
    charge_checkpoint_transfer(j, true);
    j.emergency = emergency;
    ++j.generation;
    const int gen = j.generation;
    engine_.schedule_in(sim::Time::from_seconds(j.spec->checkpoint.write_s()), [this, id, gen] { end_checkpoint(id, gen); });
  }

  void end_checkpoint(int id, int gen) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.generation != gen || j.state != JobState::checkpointing) return;
    j.saved = j.done_at_start;
    ++j.result.checkpoints;
    if (first_checkpoint_s_[id] < 0) first_checkpoint_s_[id] = engine_.now().seconds();
    // After an emergency checkpoint the job computes on until the node goes; what it does
    // then is lost, as on a real spot node.
    set_state(j, JobState::running);
    resume(id);
  }

  void complete(int id, int gen) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.generation != gen || j.state != JobState::running) return;
    pause_running(j);
    j.saved = j.done_at_start;
    set_state(j, JobState::done);
    release(id);
    j.result.state = JobState::done;
    j.result.finish_s = engine_.now().seconds();
    j.result.useful_iterations = j.saved;
    ++finished_;
    if (all_jobs_finished()) engine_.stop();
    request_pass();
  }

  // Capacity lost under the job (by_scheduler false) or the scheduler suspending it (true: it
  // checkpoints on the way out, keeping everything it has done).
  void preempt_job(int id, bool by_scheduler) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.state == JobState::running) pause_running(j);
    if (by_scheduler) {
      if (j.state == JobState::running || j.state == JobState::resizing) charge_checkpoint_transfer(j, true);
      if (j.state == JobState::running || j.state == JobState::checkpointing || j.state == JobState::resizing) j.saved = j.done_at_start;
      ++j.result.suspensions;
    } else {
      ++j.result.preemptions;
    }
    const std::int64_t lost = j.done_at_start - j.saved;
    j.result.lost_gpu_s += static_cast<double>(lost) * j.base_iter.seconds() * j.spec->gpus;
    j.done_at_start = j.saved;
    set_state(j, JobState::preempted);
    ++j.generation;
    release(id);
    set_state(j, JobState::queued);
    enqueue(id);
  }

  void take(int node, int gpus, int job) {
    Node& n = nodes_[static_cast<std::size_t>(node)];
    const int per_node = spec_.pools[static_cast<std::size_t>(n.pool)].gpus_per_node;
    if (n.free == per_node) n.busy_since = engine_.now();
    n.free -= gpus;
    n.jobs.push_back(job);
    if (n.state == NodeState::ready) set_state(n, NodeState::busy);
    busy_gpus_ += gpus;
    record_gpus();
  }

  void release(int id) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] -= j.gpus;
    while (!j.alloc.empty()) give_back(id, j.alloc.size() - 1, j.alloc.back().gpus);
    j.gpus = 0;
    update_fabric(id);
    active_.erase(std::find(active_.begin(), active_.end(), id));
    rank_update(id);
    record_gpus();
  }

  // Returns `gpus` of allocation `k` of job `id` to its node (the whole allocation when all).
  void give_back(int id, std::size_t k, int gpus) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    Allocation& a = j.alloc[k];
    {
      const double held_s = (engine_.now() - a.since).seconds();
      Node& n = nodes_[static_cast<std::size_t>(a.node)];
      const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(n.pool)];
      n.free += gpus;
      if (gpus == a.gpus) n.jobs.erase(std::find(n.jobs.begin(), n.jobs.end(), id));
      if (n.free == ps.gpus_per_node) {
        n.busy_s += (engine_.now() - n.busy_since).seconds();
        if (n.state == NodeState::busy) {
          set_state(n, NodeState::ready);
          note_idle(a.node);
        }
      }
      busy_gpus_ -= gpus;
      j.result.gpu_hours += gpus * held_s / 3600.0;
      const double share = node_value(ps, n.committed, a.since.seconds(), engine_.now().seconds()) * gpus / ps.gpus_per_node;
      j.result.cost_usd += share;
      node_category(j.result.costs, ps, n.committed) += share;
    }
    a.gpus -= gpus;
    if (a.gpus == 0) j.alloc.erase(j.alloc.begin() + static_cast<long>(k));
  }

  void record_gpus() {
    if (options_.series_interval_s > 0) return;  // sampled by the tick instead
    recorder().record(busy_series_, engine_.now(), busy_gpus_);
    recorder().record(ready_series_, engine_.now(), ready_gpus_);
  }

  void sample_tick() {
    recorder().record(busy_series_, engine_.now(), busy_gpus_);
    recorder().record(ready_series_, engine_.now(), ready_gpus_);
    record_nodes();
    if (all_jobs_finished()) return;
    engine_.schedule_in(sim::Time::from_seconds(options_.series_interval_s), [this] { sample_tick(); });
  }

  bool all_jobs_finished() const { return finished_ == static_cast<int>(jobs_.size()); }

  // ---- scheduling --------------------------------------------------------------------------
  void request_pass() {
    if (pass_pending_) return;
    pass_pending_ = true;
    engine_.schedule_in(sim::Time{}, [this] {
      pass_pending_ = false;
      schedule_pass();
    });
  }

  // Elastic jobs: shrink to their minimum while others wait, grow into free GPUs when nobody does.
  void adjust_elastic() {
    const bool waiting = std::any_of(queued_.begin(), queued_.end(),
                                     [this](int id) { return jobs_[static_cast<std::size_t>(id)].state == JobState::queued; });
    if (waiting) {
      int freed = 0;
      for (int id : std::vector<int>(active_)) {
        Job& j = jobs_[static_cast<std::size_t>(id)];
        if (j.spec->elastic() && j.state == JobState::running && j.gpus > j.spec->min_gpus) {
          freed += j.gpus - j.spec->min_gpus;
          resize(id, j.spec->min_gpus, {});
        }
      }
      if (freed > 0) request_pass();
      return;
    }
    for (int id : std::vector<int>(active_)) {
      Job& j = jobs_[static_cast<std::size_t>(id)];
      const int free_now = ready_gpus_ - busy_gpus_;
      if (free_now <= 0) break;
      if (!j.spec->elastic() || j.state != JobState::running || j.gpus >= j.spec->max_gpus) continue;
      const int extra = std::min(free_now, j.spec->max_gpus - j.gpus);
      auto alloc = find_nodes(extra, j.spec->pool);
      if (alloc.empty()) continue;
      resize(id, j.gpus + extra, alloc);
    }
  }

  // Changes a running job's GPUs: pause, take or give back GPUs, reconfigure, run on.
  void resize(int id, int to, const std::vector<Allocation>& extra) {
    Job& j = jobs_[static_cast<std::size_t>(id)];
    pause_running(j);
    set_state(j, JobState::resizing);
    ++j.result.resizes;
    queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] -= j.gpus;
    if (to > j.gpus) {
      for (Allocation a : extra) {
        a.since = engine_.now();
        take(a.node, a.gpus, id);
        j.alloc.push_back(a);
      }
    } else {
      int surplus = j.gpus - to;
      while (surplus > 0) {
        const std::size_t k = j.alloc.size() - 1;
        const int g = std::min(surplus, j.alloc[k].gpus);
        give_back(id, k, g);
        surplus -= g;
      }
      record_gpus();
    }
    j.gpus = held_gpus(j);
    j.t_iter = iteration_at(j, j.gpus);
    update_fabric(id);
    rank_update(id);
    queue_gpus_[static_cast<std::size_t>(queue_of(j.spec->queue))] += j.gpus;
    ++j.generation;
    const int gen = j.generation;
    engine_.schedule_in(sim::Time::from_seconds(j.spec->resize_pause_s), [this, id, gen] {
      Job& job = jobs_[static_cast<std::size_t>(id)];
      if (job.generation != gen || job.state != JobState::resizing) return;
      set_state(job, JobState::running);
      resume(id);
      request_pass();
    });
  }

  int smallest_queued() const {
    int smallest = std::numeric_limits<int>::max();
    for (int id : queued_) smallest = std::min(smallest, jobs_[static_cast<std::size_t>(id)].spec->start_gpus());
    return smallest;
  }

  JobView view_of(int id) const {
    const Job& j = jobs_[static_cast<std::size_t>(id)];
    JobView v;
    v.id = id;
    v.gpus = j.state == JobState::queued ? j.spec->start_gpus() : j.gpus;
    v.submit_s = j.spec->submit_s;
    v.total_s = static_cast<double>(j.spec->iterations) * j.base_iter.seconds();
    const std::int64_t done = j.state == JobState::running ? progress(j) : (j.state == JobState::queued ? j.saved : j.done_at_start);
    v.remaining_s = static_cast<double>(j.spec->iterations - done) * j.base_iter.seconds();
    v.attained_gpu_s = j.attained_gpu_s + (j.state == JobState::running ? (engine_.now() - j.spell_start).seconds() * j.gpus : 0.0);
    v.priority = j.spec->priority;
    v.queue = queue_of(j.spec->queue);
    v.running = j.state != JobState::queued;
    return v;
  }

  int queue_of(const std::string& name) const {
    return static_cast<int>(std::find(queue_names_.begin(), queue_names_.end(), name) - queue_names_.begin());
  }

  // Fair-share weight per queue (in queue_names_ order): 1 unless the options say otherwise.
  std::vector<double> queue_weights(const std::vector<std::pair<std::string, double>>& given) const {
    std::vector<double> w(queue_names_.size(), 1.0);
    for (const auto& [name, weight] : given) {
      const auto q = static_cast<std::size_t>(queue_of(name));
      if (q >= queue_names_.size()) throw std::invalid_argument("queue_weights: no job is in queue '" + name + "'");
      if (!(weight > 0) || !std::isfinite(weight)) throw std::invalid_argument("queue_weights: weight of '" + name + "' must be > 0");
      w[q] = weight;
    }
    return w;
  }

  // Keyed non-preemptive policies: start queued jobs in key order (see SchedulingPolicy::has_queue_key).
  void keyed_pass() {
    const bool backfill = policy_->backfills();
    for (auto it = keyed_queue_.begin(); it != keyed_queue_.end();) {
      const int free_now = ready_gpus_ - busy_gpus_;
      if (free_now <= 0) break;
      const int id = std::get<2>(*it);
      const JobSpec& js = *jobs_[static_cast<std::size_t>(id)].spec;
      std::vector<Allocation> alloc;
      if (js.start_gpus() <= free_now) alloc = find_nodes(js.start_gpus(), js.pool);
      if (alloc.empty()) {
        if (!backfill) break;
        ++it;
        continue;
      }
      it = keyed_queue_.erase(it);
      place(id, alloc);
    }
    // The arrival-order list only serves the auto-scaler and elastic jobs here: compact it now
    // and then rather than on every pass.
    if (queued_.size() > 2 * keyed_queue_.size() + 64) drop_left_queue();
    if (elastic_) adjust_elastic();
    if (autoscaling_) {
      int unplaced = 0;
      for (const auto& k : keyed_queue_) unplaced += jobs_[static_cast<std::size_t>(std::get<2>(k))].spec->start_gpus();
      autoscale(ScaleTrigger::pass, unplaced);
    }
  }

  // ---- ranked preemptive policies (see SchedulingPolicy::rank_levels) --------------------
  int rank_position_of(int id) const {
    return policy_->rank_level(view_of(id)) * static_cast<int>(jobs_.size()) + arrival_rank_[static_cast<std::size_t>(id)];
  }
  int job_at(int position) const { return by_arrival_[static_cast<std::size_t>(position) % by_arrival_.size()]; }

  // Puts a job where it belongs in rank_walk_: queued, placed (any state holding GPUs), or out.
  void rank_update(int id) {
    if (!rank_walk_) return;
    Job& j = jobs_[static_cast<std::size_t>(id)];
    if (j.rank_position >= 0) {
      if (j.rank_running) rank_walk_->remove_running(j.rank_position, j.rank_gpus);
      else rank_walk_->remove_queued(j.rank_position);
      j.rank_position = -1;
    }
    const bool placed = j.state == JobState::restarting || j.state == JobState::running || j.state == JobState::checkpointing ||
                        j.state == JobState::resizing;
    if (j.state != JobState::queued && !placed) return;
    j.rank_position = rank_position_of(id);
    j.rank_running = placed;
    j.rank_gpus = j.gpus;
    if (placed) rank_walk_->add_running(j.rank_position, j.gpus);
    else rank_walk_->add_queued(j.rank_position);
  }

  // The decision ranked() would take on the full view (policy.cpp), from the index.
  void ranked_pass() {
    const RankWalk::Decision d = rank_walk_->walk(ready_gpus_, [this](int position) {
      return jobs_[static_cast<std::size_t>(job_at(position))].spec->start_gpus();
    });
    if (d.preempt_from >= 0) {
      for (int position : rank_walk_->running_from(d.preempt_from)) preempt_job(job_at(position), true);
    }
    for (int position : d.start) {
      if (ready_gpus_ - busy_gpus_ <= 0) break;
      const int id = job_at(position);
      const JobSpec& js = *jobs_[static_cast<std::size_t>(id)].spec;
      const auto alloc = find_nodes(js.start_gpus(), js.pool);
      if (alloc.empty()) break;
      place(id, alloc);
    }
    if (queued_.size() > 2 * rank_walk_->queued_size() + 64) drop_left_queue();
    if (elastic_) adjust_elastic();
    if (autoscaling_) autoscale(ScaleTrigger::pass, queued_gpus());
  }

  void drop_left_queue() {
    queued_.erase(std::remove_if(queued_.begin(), queued_.end(),
                                 [this](int id) { return jobs_[static_cast<std::size_t>(id)].state != JobState::queued; }),
                  queued_.end());
  }

  void schedule_pass() {
    if (keyed_) {
      keyed_pass();
      return;
    }
    if (rank_walk_) {
      ranked_pass();
      return;
    }
    ClusterView view;
    view.now_s = engine_.now().seconds();
    view.total_gpus = ready_gpus_;
    view.free_gpus = ready_gpus_ - busy_gpus_;
    view.queue_gpus = queue_gpus_;
    view.queue_weight = queue_weight_;
    // Keep the queue in order of (re)entry, dropping jobs that left it.
    queued_.erase(std::remove_if(queued_.begin(), queued_.end(),
                                 [this](int id) { return jobs_[static_cast<std::size_t>(id)].state != JobState::queued; }),
                  queued_.end());
    if (queued_.empty()) {
      if (elastic_) adjust_elastic();
      return;
    }
    // Nothing can start and nothing may be preempted: no need to ask (unless the pools may grow).
    const int free_now = ready_gpus_ - busy_gpus_;
    if (!policy_->preemptive() && !autoscaling_ && free_now < smallest_queued()) {
      if (elastic_) adjust_elastic();  // elastic jobs may make room
      return;
    }
    int asked = 0;
    for (int id : queued_) {
      view.queued.push_back(view_of(id));
      asked += view.queued.back().gpus;
    }
    // A preemptive policy needs the running jobs only when the queue asks for more than is free:
    // otherwise its ranking keeps every running job and starts every queued one anyway.
    if (policy_->preemptive() && asked > view.free_gpus) {
      for (int id : active_) view.running.push_back(view_of(id));
    }
    const Decisions d = policy_->decide(view);
    for (int id : d.preempt) {
      const Job& j = jobs_[static_cast<std::size_t>(id)];
      if (j.state == JobState::running || j.state == JobState::checkpointing || j.state == JobState::restarting ||
          j.state == JobState::resizing) {
        preempt_job(id, true);
      }
    }
    for (int id : d.start) {
      if (ready_gpus_ - busy_gpus_ <= 0) break;
      if (jobs_[static_cast<std::size_t>(id)].state != JobState::queued) continue;
      const JobSpec& js = *jobs_[static_cast<std::size_t>(id)].spec;
      const auto alloc = find_nodes(js.start_gpus(), js.pool);
      if (alloc.empty()) {
        if (!d.backfill) break;
        continue;
      }
      place(id, alloc);
    }
    if (elastic_) adjust_elastic();
    if (autoscaling_) {
      int unplaced = 0;
      for (int id : queued_) {
        if (jobs_[static_cast<std::size_t>(id)].state == JobState::queued) unplaced += jobs_[static_cast<std::size_t>(id)].spec->start_gpus();
      }
      autoscale(ScaleTrigger::pass, unplaced);
    }
  }

  // Nodes for a gang of `gpus`, by the placement rule; empty when it does not fit now.
  std::vector<Allocation> find_nodes(int gpus, const std::string& pool) {
    candidates_.clear();
    int free_total = 0;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = nodes_[i];
      if ((n.state != NodeState::ready && n.state != NodeState::busy) || n.free == 0) continue;
      if (!pool.empty() && !serves(n.pool, pool)) continue;
      candidates_.push_back(static_cast<int>(i));
      free_total += n.free;
    }
    if (free_total < gpus) return {};
    std::vector<Allocation> out;
    const auto free_of = [this](int i) { return nodes_[static_cast<std::size_t>(i)].free; };
    if (options_.placement != Placement::spread) {
      // One node if any can hold the whole gang: the fullest that can (best fit).
      int best = -1;
      for (int i : candidates_) {
        if (free_of(i) >= gpus && (best < 0 || free_of(i) < free_of(best))) best = i;
      }
      if (best >= 0) return {{best, gpus}};
    }
    if (options_.placement == Placement::topology_aware) {
      // As few nodes as the gang needs (every extra node is one more NIC in its all-reduce ring,
      // shared with whoever else is there), then one leaf if a leaf has such nodes: of those
      // leaves, the one with the fewest free GPUs on them (best fit). Otherwise packed below.
      std::stable_sort(candidates_.begin(), candidates_.end(), [&](int a, int b) { return free_of(a) > free_of(b); });
      int fewest = 0;
      for (int left = gpus; left > 0; ++fewest) left -= free_of(candidates_[static_cast<std::size_t>(fewest)]);
      std::map<std::pair<int, int>, std::pair<int, int>> leaves;  // (pool, leaf) -> (nodes taken, their free GPUs)
      for (int i : candidates_) {  // emptiest first, so each leaf's first `fewest` are its best
        const Node& n = nodes_[static_cast<std::size_t>(i)];
        auto& [taken, free] = leaves[{n.pool, n.leaf}];
        if (taken < fewest) {
          ++taken;
          free += n.free;
        }
      }
      const std::pair<int, int>* chosen = nullptr;
      int chosen_free = 0;
      for (const auto& [key, use] : leaves) {
        if (use.second >= gpus && (chosen == nullptr || use.second < chosen_free)) {
          chosen = &key;
          chosen_free = use.second;
        }
      }
      if (chosen != nullptr) {
        const auto key = *chosen;
        candidates_.erase(std::remove_if(candidates_.begin(), candidates_.end(), [&](int i) {
                            const Node& n = nodes_[static_cast<std::size_t>(i)];
                            return std::make_pair(n.pool, n.leaf) != key;
                          }),
                          candidates_.end());
      }
    }
    if (options_.placement == Placement::spread) {
      // One GPU at a time to the node with the most free GPUs left.
      std::vector<int> give(nodes_.size(), 0);
      for (int k = 0; k < gpus; ++k) {
        int best = -1;
        for (int i : candidates_) {
          const int left = free_of(i) - give[static_cast<std::size_t>(i)];
          if (left > 0 && (best < 0 || left > free_of(best) - give[static_cast<std::size_t>(best)])) best = i;
        }
        ++give[static_cast<std::size_t>(best)];
      }
      for (int i : candidates_) {
        if (give[static_cast<std::size_t>(i)] > 0) out.push_back({i, give[static_cast<std::size_t>(i)]});
      }
      return out;
    }
    // Packed across nodes: emptiest nodes first (whole nodes), in node order on ties.
    std::stable_sort(candidates_.begin(), candidates_.end(), [&](int a, int b) { return free_of(a) > free_of(b); });
    int need = gpus;
    for (int i : candidates_) {
      const int g = std::min(need, free_of(i));
      out.push_back({i, g});
      need -= g;
      if (need == 0) break;
    }
    return need == 0 ? out : std::vector<Allocation>{};
  }

  // ---- results -----------------------------------------------------------------------------
  ClusterResult finish() {
    for (Node& n : nodes_) {
      if (n.state == NodeState::ready || n.state == NodeState::busy || n.state == NodeState::draining) {
        if (n.state == NodeState::ready) set_state(n, NodeState::terminated);
        close_node(n);
      } else if (n.state == NodeState::provisioning) {
        close_node(n);  // requested, never ready: billed while provisioning
      }
    }
    ClusterResult& r = result_;
    // Jobs still under way at the horizon: count what they computed and kept.
    for (Job& j : jobs_) {
      if (j.state == JobState::done || j.state == JobState::failed) continue;
      if (j.state == JobState::running) pause_running(j);
      j.result.state = j.state;
      j.result.useful_iterations = j.saved;
      ++r.unfinished;
      r.makespan_s = engine_.now().seconds();
    }
    std::vector<double> jct;
    double queueing = 0;
    double storage = 0;
    for (std::size_t id = 0; id < jobs_.size(); ++id) {
      Job& j = jobs_[id];
      JobResult jr = j.result;
      if (jr.state == JobState::done) {
        jr.jct_s = jr.finish_s - jr.submit_s;
        jct.push_back(jr.jct_s);
        r.makespan_s = std::max(r.makespan_s, jr.finish_s);
        queueing += jr.queueing_s;
        const CheckpointSpec& c = j.spec->checkpoint;
        if (first_checkpoint_s_[static_cast<int>(id)] >= 0) {
          const double months = (jr.finish_s - first_checkpoint_s_[static_cast<int>(id)]) / (30.0 * 86400.0);
          const double s = c.size_bytes / 1e9 * c.storage_price_per_gb_month * months;
          jr.cost_usd += s;
          jr.costs.storage += s;
          storage += s;
        }
      }
      r.lost_gpu_hours += jr.lost_gpu_s / 3600.0;
      r.jobs.push_back(jr);
    }
    std::sort(jct.begin(), jct.end());
    if (jct.empty()) {
      r.mean_jct_s = r.median_jct_s = r.p99_jct_s = r.mean_queueing_s = std::numeric_limits<double>::quiet_NaN();
    } else {
      double sum = 0;
      for (double v : jct) sum += v;
      r.mean_jct_s = sum / jct.size();
      r.median_jct_s = jct[jct.size() / 2];
      r.p99_jct_s = jct[std::min(jct.size() - 1, static_cast<std::size_t>(std::ceil(0.99 * jct.size())) - 1)];
      r.mean_queueing_s = queueing / jct.size();
    }
    double gpu_hours = 0, busy_gpu_hours = 0;
    for (std::size_t p = 0; p < pool_results_.size(); ++p) {
      gpu_hours += pool_results_[p].node_hours * spec_.pools[p].gpus_per_node;
    }
    for (const JobResult& jr : r.jobs) busy_gpu_hours += jr.gpu_hours;
    r.gpu_utilization = gpu_hours > 0 ? busy_gpu_hours / gpu_hours : 0;
    settle_pools();
    r.pools = pool_results_;
    for (const PoolResult& pr : r.pools) r.costs += pr.costs;
    r.costs.storage = storage;
    r.compute_cost_usd = r.costs.node_time();
    r.idle_cost_usd = r.costs.idle;
    r.storage_cost_usd = storage;
    r.total_cost_usd = r.costs.total();
    r.events = static_cast<std::int64_t>(engine_.events_executed());
    return std::move(result_);
  }

  const ClusterSpec& spec_;
  const SimulationOptions& options_;
  std::unique_ptr<SchedulingPolicy> policy_;
  std::vector<int> active_;          // placed jobs (restarting, running, checkpointing)
  std::vector<double> queue_gpus_;   // GPUs held per queue
  sim::Engine engine_;
  sim::RandomStreams streams_;
  std::vector<Node> nodes_;
  std::vector<Job> jobs_;
  std::vector<int> queued_;
  std::vector<int> candidates_;
  FabricShare fabric_;
  std::map<std::pair<int, int>, int> uplinks_;  // (pool, leaf) -> its uplink on fabric_
  std::vector<std::string> queue_names_;
  std::vector<PoolResult> pool_results_;
  struct FirstCheckpoint {
    std::vector<double> v;
    double& operator[](int i) {
      if (static_cast<std::size_t>(i) >= v.size()) v.resize(static_cast<std::size_t>(i) + 1, -1.0);
      return v[static_cast<std::size_t>(i)];
    }
  } first_checkpoint_s_;
  int ready_gpus_ = 0, busy_gpus_ = 0;
  bool autoscaling_ = false;
  bool elastic_ = false;
  bool pinned_jobs_ = false;           // some job names a pool
  bool keyed_ = false;                 // the policy orders its queue by a key (keyed_queue_)
  std::set<std::tuple<double, double, int>> keyed_queue_;  // (key, submit, job id)
  std::unique_ptr<RankWalk> rank_walk_;  // ranked preemptive policies: the jobs by rank position
  std::vector<int> by_arrival_;        // job ids in arrival order (submit time, then index)
  std::vector<int> arrival_rank_;      // job id -> its index in by_arrival_
  std::vector<double> last_scale_up_;  // per pool, -1 before the first
  std::vector<std::unique_ptr<Autoscaler>> autoscalers_;  // per pool (null: not auto-scaled)
  std::vector<Arrival> arrivals_;      // every arrival so far (kept when auto-scaling)
  std::vector<std::array<int, 4>> pool_nodes_;  // per pool: nodes by live state
  std::array<int, 4> nodes_in_{};      // all pools: nodes by live state
  std::vector<std::vector<int>> pool_live_;  // auto-scaling: per pool, ids of live nodes (and some left since)
  std::array<sim::SeriesId, 4> node_series_{};
  std::vector<double> queue_weight_;   // fair-share weight per queue
  int finished_ = 0;
  bool pass_pending_ = false;
  double billed_ = 0, busy_billed_ = 0;
  std::vector<int> fallback_;                      // per pool: its fallback's index, -1 for none
  std::vector<std::vector<std::string>> served_names_;  // per pool: job pool names it serves
  std::vector<char> market_open_;                  // per pool: nodes can be had (1 without a market)
  std::vector<double> closed_since_;               // per pool: when its market last closed
  std::vector<int> waiting_;                       // per pool: replacements waiting for its market
  std::vector<int> committed_live_;                // per pool: live nodes under the commitment
  std::vector<double> committed_busy_usd_, committed_provisioning_usd_;  // their time's worth
  sim::SeriesId busy_series_{}, ready_series_{}, cost_series_{};
  ClusterResult result_;
};

}  // namespace

ClusterResult simulate_cluster(const ClusterSpec& spec, const SimulationOptions& options) {
  validate(spec);
  Simulation simulation(spec, options);
  return simulation.run();
}

}  // namespace dlsim::scheduler
