// The state and the event handlers of one cluster simulation run (cluster_simulation.hpp is the
// interface). Private to scheduler/: the class is one run's mutable world, its member functions
// are defined by concern in cluster_*.cpp:
//   cluster_simulation.cpp  construction, run            cluster_scheduling.cpp  scheduling passes
//   cluster_nodes.cpp       node lifecycle, hazards       cluster_jobs.cpp        job lifecycle
//   cluster_market.cpp      spot markets, fallbacks       cluster_autoscaling.cpp auto-scalers
//   cluster_fabric.cpp      fabric sharing between jobs   cluster_elastic.cpp     elastic resizing
//   cluster_placement.cpp   gang placement rules          cluster_results.cpp     the results
#pragma once
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
#include "scheduler/free_node_index.hpp"
#include "scheduler/rank_walk.hpp"
#include "scheduler/pool_billing.hpp"
#include "sim/engine.hpp"
#include "sim/random_streams.hpp"

namespace dlsim::scheduler::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kProgressEvents = 4096;  // engine events between progress reports, at least

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
  // The distinct nodes it holds (an elastic job can hold two allocations on one node).
  int node_count() const {
    std::vector<int> seen;
    for (const Allocation& a : alloc) {
      if (std::find(seen.begin(), seen.end(), a.node) == seen.end()) seen.push_back(a.node);
    }
    return static_cast<int>(seen.size());
  }
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
  std::int64_t active_key = -1;    // its key in active_ while placed (-1: not placed)
  std::vector<std::pair<int, double>> egress_per_iteration;  // (pool the bytes leave, USD) of its ring
  JobResult result;
};

class Simulation {
 public:
  Simulation(const ClusterSpec& spec, const SimulationOptions& options);

  ClusterResult run();

 private:
  sim::Recorder& recorder() { return result_.recorder; }

  // ---- nodes -------------------------------------------------------------------------------
  void add_node(int pool, bool initial);

  int pool_node_count(int pool) const { return pool_results_[static_cast<std::size_t>(pool)].nodes_requested; }

  // Nodes of a pool that are provisioning or in service (not lost, not released).
  int live_nodes(int pool) const;

  // Auto-scaling: asks the auto-scaler of each auto-scaled pool in turn (or of `only_pool`),
  // each seeing the queued GPUs it may serve less what the pools before it requested, and
  // applies its decision.
  void autoscale(ScaleTrigger trigger, int unplaced_gpus, int only_pool = -1, int idle_node = -1);

  // Requests nodes for `gpus` GPUs from the fallbacks of `pool`, in chain order, each auto-scaled
  // fallback within its max_nodes and only while its market is open; returns the GPUs requested.
  int overflow(int pool, int gpus);

  AutoscaleView scale_view(int pool, ScaleTrigger trigger, int unplaced_gpus, int idle_node);

  // Requests and releases within the pool's bounds (no requests while its spot market is
  // closed); returns the nodes requested.
  int apply_scaling(int pool, const ScaleDecision& d);

  // GPUs asked by the queued jobs that `pool` may serve (all of them when no job names a pool).
  int demand_for(int pool, int unplaced_gpus) const;

  // GPUs asked by the jobs in the queue.
  int queued_gpus() const;

  void scale_tick(int pool);

  // A node idle since `since`: its idle timeout has passed; the auto-scaler decides whether it goes.
  void idle_check(int id, int gen, sim::Time since);

  void note_idle(int id);

  void set_state(Node& n, NodeState to);

  // Nodes by state (provisioning, ready, busy, draining: the live ones), per pool and in series.
  static constexpr std::array<NodeState, 4> kCountedStates{NodeState::provisioning, NodeState::ready, NodeState::busy,
                                                           NodeState::draining};
  static constexpr std::size_t state_index(NodeState s) { return static_cast<std::size_t>(s); }

  static bool is_live(const Node& n) { return state_index(n.state) < kCountedStates.size(); }
  int id_of_last_node() const { return static_cast<int>(nodes_.size()) - 1; }

  void count_node(int pool, NodeState s, int change);

  void record_nodes();

  void node_ready(int id);

  void arm_hazards(int id);

  void spot_notice(int id, int gen);

  void remove_ready(Node& n);

  void node_lost(int id, int gen, bool reclaimed);

  // Bills the node from its request until now.
  void close_node(Node& n);

  // ---- spot markets, fallbacks, commitments, egress ----------------------------------------
  void init_markets();

  bool serves(int pool, const std::string& name) const;

  // The next crossing of a market's maximum price, as an engine event.
  void arm_market(int pool);

  // The price crossed the pool's maximum. Up: as under AWS's old bidding model, every node of
  // the pool gets the notice and is reclaimed after it; no node can be had while it stays up.
  // Down: the replacement requests that waited are served.
  void market_crossing(int pool);

  // A replacement node for `pool`: from it while its market is open, else from its fallbacks
  // (an auto-scaled fallback within its max_nodes), else it waits for the market to reopen.
  void request_node(int pool);

  // Checkpoint bytes moved between the job's nodes and its storage (a write, or a read when
  // restoring), each node its GPUs' share; egress is charged to the job and the node's pool.
  void charge_checkpoint_transfer(Job& j, bool write);

  // At the end of the run: reserved commitments over the whole run, markets still closed.
  void settle_pools();

  // ---- jobs --------------------------------------------------------------------------------
  void set_state(Job& j, JobState to);

  void close_state(Job& j);        // counts the time in its current state up to now, and its span
  void record_span(const Job& j);  // the span of its current state, up to now
  void arrive(int id);

  int pool_index(const std::string& name) const;

  // Into the queue: the arrival-order list, and the keyed order when the policy has one.
  void enqueue(int id);

  bool fits_anywhere(const JobSpec& s) const;

  // Progress of a running job at now: whole iterations since its spell began.
  std::int64_t progress(const Job& j) const;

  // One iteration at g GPUs (linear scaling from the job's reference size).
  sim::Time iteration_at(const Job& j, int g) const;

  int held_gpus(const Job& j) const;

  // Placed: restore (load the checkpoint, warm up), then run.
  void place(int id, const std::vector<Allocation>& alloc);

  double checkpoint_interval(const Job& j) const;

  void start_running(int id, int gen);

  // Schedules the end of the current running spell: completion, the next checkpoint, or a
  // policy review, whichever comes first. `into`: how far into its current iteration the job
  // already is (carried over when only its speed changed; shorter than one iteration).
  void resume(int id, sim::Time into = {});

  // Closes the running spell: counts whole iterations and service. Returns how far into the
  // iteration under way the job was (lost when it stops; carried when only its speed changes).
  sim::Time pause_running(Job& j);
  // Seconds a running job is into its current iteration (fabric_.flow's phase source; 0 else).
  double phase_of(int id) const;

  // ---- the shared fabric -------------------------------------------------------------------
  // The leaf uplink of (pool, leaf), made on first use.
  int uplink(int pool, int leaf);

  // A job's traffic per iteration where it is placed now (see fabric_share.hpp). Its ring runs
  // through its nodes ordered by region, zone, pool, leaf and node. Every node's NIC carries one
  // ring share, and so does every spanned leaf's uplink when it spans leaves, and the WAN link
  // of two regions the ring crosses between. Each ring edge between zones or regions pays
  // egress for its share. No link loads when its nodes have no modelled NIC; nothing at all in
  // one node.
  struct JobTraffic {
    std::vector<LinkLoad> loads;                         // bytes per iteration on modelled links
    std::vector<std::pair<int, double>> egress_usd;      // per iteration, by the pool the bytes leave
  };
  JobTraffic traffic_of(const Job& j);
  int wan_link(const std::string& a, const std::string& b);
  void charge_traffic_egress(Job& j, std::int64_t iterations);

  // After a job's GPUs changed (placed, resized, released): its traffic on the fabric, and new
  // iteration times for every job that shares links with it, before or after.
  void update_fabric(int id);

  // A job's iteration time changes (its fabric share did): a running job keeps the iterations it
  // has done and how far it is into the current one, and goes on at the new speed.
  void retime(int id, sim::Time t_iter);

  void begin_checkpoint(int id, bool emergency);

  void end_checkpoint(int id, int gen);

  void complete(int id, int gen);

  // Capacity lost under the job (by_scheduler false) or the scheduler suspending it (true: it
  // checkpoints on the way out, keeping everything it has done).
  void preempt_job(int id, bool by_scheduler);

  void take(int node, int gpus, int job);

  void release(int id);

  // Returns `gpus` of allocation `k` of job `id` to its node (the whole allocation when all).
  void give_back(int id, std::size_t k, int gpus);

  void record_gpus();

  void sample_tick();

  bool all_jobs_finished() const { return finished_ == static_cast<int>(jobs_.size()); }

  // One more job done or failed: counts it, reports progress (options_.progress, throttled),
  // stops the engine after the last.
  void job_finished();
  void report_progress();

  // ---- scheduling --------------------------------------------------------------------------
  void request_pass();

  // Elastic jobs: shrink to their minimum while others wait, grow into free GPUs when nobody does.
  void adjust_elastic();

  // Changes a running job's GPUs: pause, take or give back GPUs, reconfigure, run on.
  void resize(int id, int to, const std::vector<Allocation>& extra);

  int smallest_queued() const;

  JobView view_of(int id) const;

  int queue_of(const std::string& name) const;

  // Fair-share weight per queue (in queue_names_ order): 1 unless the options say otherwise.
  std::vector<double> queue_weights(const std::vector<std::pair<std::string, double>>& given) const;

  // Keyed non-preemptive policies: start queued jobs in key order (see SchedulingPolicy::has_queue_key).
  void keyed_pass();

  // ---- ranked preemptive policies (see SchedulingPolicy::rank_levels) --------------------
  int rank_position_of(int id) const;
  int job_at(int position) const { return by_arrival_[static_cast<std::size_t>(position) % by_arrival_.size()]; }

  // Puts a job where it belongs in rank_walk_: queued, placed (any state holding GPUs), or out.
  void rank_update(int id);

  // The decision ranked() would take on the full view (policy.cpp), from the index.
  void ranked_pass();

  void drop_left_queue();

  void schedule_pass();

  // Nodes for a gang of `gpus`, by the placement rule; empty when it does not fit now.
  std::vector<Allocation> find_nodes(int gpus, const std::string& pool);

  // ---- results -----------------------------------------------------------------------------
  ClusterResult finish();

  const ClusterSpec& spec_;
  const SimulationOptions& options_;
  std::unique_ptr<SchedulingPolicy> policy_;
  // Placed jobs (restarting, running, checkpointing) in the order they were placed, keyed by a
  // placement counter: ending a job erases its key instead of searching a list.
  std::map<std::int64_t, int> active_;
  std::int64_t placements_ = 0;
  std::vector<int> active_ids() const;  // the placed jobs, in placement order
  std::vector<double> queue_gpus_;   // GPUs held per queue
  sim::Engine engine_;
  sim::RandomStreams streams_;
  std::vector<Node> nodes_;
  std::vector<Job> jobs_;
  std::vector<int> queued_;
  std::vector<int> candidates_;
  FreeNodeIndex free_index_;       // nodes in service with free GPUs (placement's fast path)
  void index_node(const Node& n);  // refiles n after its state or free count changed
  FabricShare fabric_;
  std::map<std::pair<int, int>, int> uplinks_;  // (pool, leaf) -> its uplink on fabric_
  std::map<std::pair<std::string, std::string>, int> wan_links_;  // (region, region) -> its link on fabric_
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
  int reported_ = -1;                  // finished_ at the last progress report
  std::uint64_t reported_at_ = 0;      // engine events executed then
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

}  // namespace dlsim::scheduler::detail
