// ClusterSimulation: many jobs on node pools over days of simulated time, on one sim::Engine.
// Jobs progress at their iteration rate in whole iterations; the cluster level handles
// arrivals, gang placement, node provisioning, spot notices and reclamations, node failures,
// checkpoints and restarts, scheduler preemption, completion, and billing. The scheduling
// policy (policy.hpp) decides; the simulation applies.
//
// Work accounting is exact: a job's progress is an integer count of iterations. A preemption
// keeps what the last completed checkpoint saved (or, when the scheduler suspends a job, what
// it has done: it checkpoints on the way out); the rest is counted as lost. A job is done when
// its useful iterations equal its work.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster_spec.hpp"
#include "scheduler/job_state.hpp"
#include "scheduler/policy.hpp"
#include "sim/recorder.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::scheduler {

enum class Placement { packed, spread, topology_aware };
std::string to_string(Placement p);

struct SimulationOptions {
  std::string policy = "fifo";
  bool backfill = false;
  std::vector<double> las_thresholds_gpu_s;
  // Fair share: weight per queue name (> 0; queues not listed weigh 1). A queue no job is in
  // is an error.
  std::vector<std::pair<std::string, double>> queue_weights;
  Placement placement = Placement::packed;
  std::uint64_t seed = 1;
  double series_interval_s = 0;    // > 0: sample utilization at this period instead of at every change
  double horizon_s = 365.0 * 86400;  // stop here; jobs not done by then are reported unfinished
  // Take ranked policies' decisions from the incremental index (rank_walk.hpp) rather than from
  // decide() on the full view: the same decisions, faster. Off only for differential tests.
  bool rank_index = true;
  // Set from another thread to abandon the run: simulate_cluster then throws sim::Interrupted.
  const sim::InterruptFlag* interrupt = nullptr;
  // Called on the simulation's thread as jobs finish (done or failed): done = jobs finished,
  // total = jobs in the spec. At most once every 4096 engine events, always when the last job
  // finishes, and once at the end when jobs are left unfinished at the horizon. Empty: never
  // called. It only observes: results are the same with or without it.
  std::function<void(double done, double total)> progress;
};

// Costs by category (USD). Node time: on_demand + spot + reserved (a reserved pool's commitment
// over the whole run; its nodes beyond the commitment are on-demand); idle and provisioning are
// parts of it. Then checkpoint storage and data transfer (egress). Jobs carry their GPUs' share
// of node time (no idle part); pools their node time and the egress of their nodes.
struct CostBreakdown {
  double on_demand = 0, spot = 0, reserved = 0;
  double idle = 0;          // of node time: nodes without jobs (provisioning included)
  double provisioning = 0;  // of idle: nodes requested and not ready yet
  double storage = 0;       // checkpoint storage
  double egress = 0;        // checkpoint writes and reads across zones or regions
  double node_time() const { return on_demand + spot + reserved; }
  double total() const { return node_time() + storage + egress; }
  CostBreakdown& operator+=(const CostBreakdown& o);
};

struct JobResult {
  std::string name;
  std::string plan;                    // the spec's (JobSpec::plan)
  int gpus = 0;
  JobState state = JobState::queued;   // done, failed (never fit), or where it was at the horizon
  double submit_s = 0;
  double first_start_s = -1;           // first placement
  double finish_s = -1;
  double queueing_s = 0;               // time spent queued, all waits together
  double jct_s = 0;                    // finish - submit
  double gpu_hours = 0;                // GPUs held x time held (restarts and checkpoints included)
  int preemptions = 0;                 // capacity lost (reclaim, failure)
  int suspensions = 0;                 // preempted by the scheduler
  int checkpoints = 0;
  int resizes = 0;                     // elastic grow or shrink steps
  std::int64_t useful_iterations = 0;  // equals the job's work when done
  std::int64_t computed_iterations = 0;  // including those lost
  double lost_gpu_s = 0;               // GPU-seconds of computed iterations lost
  double restart_s = 0;                // time in restarting (reload, warm-up)
  double run_s = 0;                    // time running (computing iterations, lost ones included)
  double checkpoint_interval_s = 0;    // running time between checkpoints in its last placement (inf: none)
  int max_leaves = 0;                  // most leaf switches one placement of it spanned
  double checkpoint_s = 0;             // time writing checkpoints
  double network_s = 0;                // running time spent in exposed inter-node communication
                                       // (the job's gradient all-reduce, slowed by jobs sharing its links)
  double cost_usd = 0;                 // its share of node time (GPU fraction) + checkpoint storage + egress
  CostBreakdown costs;                 // cost_usd by category
};

struct PoolResult {
  std::string name;
  int nodes_requested = 0;             // including the initial ones
  int reclaimed = 0;
  int failed = 0;
  double node_hours = 0;
  double busy_node_hours = 0;          // with at least one job
  double cost_usd = 0;                 // billed (per-second with a minimum per node; reserved: the commitment)
  CostBreakdown costs;                 // cost_usd by category, and the egress of its nodes
  int fallback_nodes = 0;              // nodes it gave in place of a pool that could not
  double unavailable_s = 0;            // spot market: time the price was above the maximum
};

// One span of time a job spent in one state (queued, restarting, running, checkpointing,
// resizing): what a Gantt chart draws. Spans of one job are contiguous from its submission to
// its end (or the horizon); zero-length spans are left out.
struct JobSpan {
  int job = 0;                         // index into ClusterSpec::jobs
  JobState state = JobState::queued;
  double start_s = 0, end_s = 0;
};

// A job losing its GPUs: capacity lost (spot reclaim, node failure) or suspended by the scheduler.
struct JobPreemption {
  int job = 0;
  double time_s = 0;
  bool by_scheduler = false;
};

struct ClusterResult {
  std::vector<JobResult> jobs;
  std::vector<PoolResult> pools;
  double makespan_s = 0;               // last completion (the horizon when jobs are unfinished)
  int unfinished = 0;                  // jobs neither done nor failed at the horizon
  double mean_jct_s = 0, median_jct_s = 0, p99_jct_s = 0;
  double mean_queueing_s = 0;
  double gpu_utilization = 0;          // busy GPU-hours / GPU-hours held
  double compute_cost_usd = 0;         // billed node time (reserved: the commitments)
  double idle_cost_usd = 0;            // of which nodes without jobs (and provisioning)
  double storage_cost_usd = 0;         // checkpoint storage
  double total_cost_usd = 0;
  CostBreakdown costs;                 // by category: total_cost_usd == costs.total()
  double lost_gpu_hours = 0;
  std::int64_t events = 0;
  std::vector<JobSpan> timeline;        // in the order the spans ended
  std::vector<JobPreemption> preemptions;  // in time order
  // Series: busy_gpus, ready_gpus (GPUs of nodes in service, draining ones included until they
  // are gone: busy <= ready), cost_usd (billed so far), and
  // nodes by state, all pools together: nodes_provisioning, nodes_ready (in service, idle),
  // nodes_busy (at least one job), nodes_draining (spot notice received).
  sim::Recorder recorder;
};

// Runs until every job is done (or failed), or until the horizon. Throws std::invalid_argument
// for an invalid spec or options.
ClusterResult simulate_cluster(const ClusterSpec& spec, const SimulationOptions& options);

}  // namespace dlsim::scheduler
