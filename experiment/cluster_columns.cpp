// The result columns of cluster scenarios: one row per variant, one per job, one per pool.
#include "experiment/columns.hpp"

namespace dlsim::experiment {
namespace {
constexpr auto kReal = TableColumn::Type::real;
constexpr auto kInteger = TableColumn::Type::integer;
constexpr auto kText = TableColumn::Type::text;
}  // namespace

const std::vector<Column<ClusterRow>>& cluster_columns() {
  using R = ClusterRow;
  static const std::vector<Column<R>> columns{
      {"variant", "", "the sweep values of this row ('base' without a sweep)", kText, nullptr, [](const R& r) { return r.variant; }},
      {"policy", "", "scheduling policy", kText, nullptr, [](const R& r) { return r.policy; }},
      {"placement", "", "placement rule", kText, nullptr, [](const R& r) { return r.placement; }},
      {"jobs", "", "jobs submitted", kInteger, [](const R& r) { return double(r.jobs); }},
      {"done", "", "jobs finished", kInteger, [](const R& r) { return double(r.done); }},
      {"failed", "", "jobs that could never run (larger than every pool)", kInteger, [](const R& r) { return double(r.failed); }},
      {"unfinished", "", "jobs still under way at the horizon (scheduler.horizon)", kInteger,
       [](const R& r) { return double(r.unfinished); }},
      {"makespan", "s", "time of the last completion", kReal, [](const R& r) { return r.makespan_s; }},
      {"mean_jct", "s", "mean job completion time (finish - submit)", kReal, [](const R& r) { return r.mean_jct_s; }},
      {"median_jct", "s", "median job completion time", kReal, [](const R& r) { return r.median_jct_s; }},
      {"p99_jct", "s", "99th percentile job completion time", kReal, [](const R& r) { return r.p99_jct_s; }},
      {"mean_queueing", "s", "mean time a job spent queued (all waits)", kReal, [](const R& r) { return r.mean_queueing_s; }},
      {"gpu_utilization", "1", "GPU-hours held by jobs (those still under way at the horizon included) / GPU-hours of nodes held", kReal, [](const R& r) { return r.gpu_utilization; }},
      {"preemptions", "", "jobs stopped by lost capacity (spot reclamation, node failure)", kInteger,
       [](const R& r) { return double(r.preemptions); }},
      {"suspensions", "", "jobs stopped by the scheduler (they keep their progress)", kInteger,
       [](const R& r) { return double(r.suspensions); }},
      {"checkpoints", "", "checkpoints written", kInteger, [](const R& r) { return double(r.checkpoints); }},
      {"nodes_requested", "", "nodes requested, initial and replacements", kInteger, [](const R& r) { return double(r.nodes_requested); }},
      {"nodes_reclaimed", "", "spot nodes reclaimed", kInteger, [](const R& r) { return double(r.nodes_reclaimed); }},
      {"nodes_failed", "", "nodes failed", kInteger, [](const R& r) { return double(r.nodes_failed); }},
      {"lost_gpu_hours", "GPU-h", "computed work thrown away by preemptions (since the last checkpoint)", kReal,
       [](const R& r) { return r.lost_gpu_hours; }},
      {"comm_gpu_hours", "GPU-h", "GPU-hours jobs spent in exposed inter-node communication (fabric sharing included)", kReal,
       [](const R& r) { return r.comm_gpu_hours; }},
      {"jobs_cost", "USD", "node time attributed to jobs by their GPU share (up to the horizon for jobs still under way), plus checkpoint storage and egress", kReal,
       [](const R& r) { return r.jobs_cost; }},
      {"total_cost", "USD", "compute (billed node time) + checkpoint storage + egress", kReal, [](const R& r) { return r.total_cost; }},
      {"compute_cost", "USD", "billed node time, per second with a minimum per node", kReal, [](const R& r) { return r.compute_cost; }},
      {"idle_cost", "USD", "share of compute_cost for node time without jobs (idle, provisioning)", kReal,
       [](const R& r) { return r.idle_cost; }},
      {"storage_cost", "USD", "checkpoint storage", kReal, [](const R& r) { return r.storage_cost; }},
      {"on_demand_cost", "USD", "node time at on-demand prices (reserved nodes beyond the commitment included)", kReal,
       [](const R& r) { return r.costs.on_demand; }},
      {"spot_cost", "USD", "spot node time (at the price history's prices with a spot_trace)", kReal,
       [](const R& r) { return r.costs.spot; }},
      {"reserved_cost", "USD", "reserved commitments: committed nodes x the whole run (whole hours) x price", kReal,
       [](const R& r) { return r.costs.reserved; }},
      {"provisioning_cost", "USD", "share of idle_cost for nodes requested and not ready yet", kReal,
       [](const R& r) { return r.costs.provisioning; }},
      {"egress_cost", "USD", "checkpoint writes and reads across zones or regions", kReal, [](const R& r) { return r.costs.egress; }},
      {"fallback_nodes", "", "nodes fallback pools gave in place of pools that could not", kInteger,
       [](const R& r) { return double(r.fallback_nodes); }},
      {"unavailable_time", "s", "spot markets: pool-seconds with the price above the maximum", kReal,
       [](const R& r) { return r.unavailable_s; }},
      {"cost_vs_first", "1", "total_cost / that of the first variant", kReal, [](const R& r) { return r.cost_vs_first; }},
      {"makespan_vs_first", "1", "makespan / that of the first variant", kReal, [](const R& r) { return r.makespan_vs_first; }},
      {"events", "", "engine events executed", kInteger, [](const R& r) { return double(r.events); }},
  };
  return columns;
}

const std::vector<Column<JobRow>>& job_columns() {
  using R = JobRow;
  static const std::vector<Column<R>> columns{
      {"variant", "", "index of the variant (row of the results table)", kInteger, [](const R& r) { return double(r.variant); }},
      {"job", "", "job name", kText, nullptr, [](const R& r) { return r.job.name; }},
      {"gpus", "", "GPUs requested", kInteger, [](const R& r) { return double(r.job.gpus); }},
      {"state", "", "done or failed; for a job under way at the horizon its state there (queued, running, checkpointing, restarting, resizing, preempted)", kText, nullptr, [](const R& r) { return scheduler::to_string(r.job.state); }},
      {"submit", "s", "submission time", kReal, [](const R& r) { return r.job.submit_s; }},
      {"first_start", "s", "first placement (-1: never)", kReal, [](const R& r) { return r.job.first_start_s; }},
      {"finish", "s", "completion (-1: never)", kReal, [](const R& r) { return r.job.finish_s; }},
      {"queueing", "s", "time spent queued", kReal, [](const R& r) { return r.job.queueing_s; }},
      {"jct", "s", "finish - submit", kReal, [](const R& r) { return r.job.jct_s; }},
      {"gpu_hours", "GPU-h", "GPUs held x time held (up to the horizon)", kReal, [](const R& r) { return r.job.gpu_hours; }},
      {"preemptions", "", "capacity lost under it", kInteger, [](const R& r) { return double(r.job.preemptions); }},
      {"suspensions", "", "stopped by the scheduler", kInteger, [](const R& r) { return double(r.job.suspensions); }},
      {"checkpoints", "", "checkpoints written", kInteger, [](const R& r) { return double(r.job.checkpoints); }},
      {"resizes", "", "elastic grow or shrink steps", kInteger, [](const R& r) { return double(r.job.resizes); }},
      {"useful_iterations", "", "iterations kept (its work, when done)", kInteger, [](const R& r) { return double(r.job.useful_iterations); }},
      {"computed_iterations", "", "iterations computed, lost ones included", kInteger,
       [](const R& r) { return double(r.job.computed_iterations); }},
      {"lost_gpu_seconds", "GPU-s", "computed work lost to preemptions", kReal, [](const R& r) { return r.job.lost_gpu_s; }},
      {"run_time", "s", "time running: computing iterations, lost ones included", kReal, [](const R& r) { return r.job.run_s; }},
      {"restart_time", "s", "time restoring (checkpoint read, warm-up)", kReal, [](const R& r) { return r.job.restart_s; }},
      {"checkpoint_time", "s", "time writing checkpoints", kReal, [](const R& r) { return r.job.checkpoint_s; }},
      {"checkpoint_interval", "s", "running time between checkpoints (inf: none)", kReal,
       [](const R& r) { return r.job.checkpoint_interval_s; }},
      {"network_time", "s", "running time in exposed inter-node communication (slowed by jobs sharing its links)", kReal,
       [](const R& r) { return r.job.network_s; }},
      {"cost", "USD", "its share of node time (GPU fraction) + checkpoint storage + egress", kReal, [](const R& r) { return r.job.cost_usd; }},
      {"on_demand_cost", "USD", "of cost: on-demand node time", kReal, [](const R& r) { return r.job.costs.on_demand; }},
      {"spot_cost", "USD", "of cost: spot node time", kReal, [](const R& r) { return r.job.costs.spot; }},
      {"reserved_cost", "USD", "of cost: committed reserved node time at the reserved price", kReal,
       [](const R& r) { return r.job.costs.reserved; }},
      {"storage_cost", "USD", "of cost: checkpoint storage", kReal, [](const R& r) { return r.job.costs.storage; }},
      {"egress_cost", "USD", "of cost: checkpoint transfer across zones or regions", kReal, [](const R& r) { return r.job.costs.egress; }},
      {"plan", "", "the parallel plan of a job with a plan or planned (as workload.plan describes it); empty otherwise", kText, nullptr,
       [](const R& r) { return r.job.plan; }},
  };
  return columns;
}

const std::vector<Column<PoolRow>>& pool_columns() {
  using R = PoolRow;
  static const std::vector<Column<R>> columns{
      {"variant", "", "index of the variant (row of the results table)", kInteger, [](const R& r) { return double(r.variant); }},
      {"pool", "", "pool name", kText, nullptr, [](const R& r) { return r.pool.name; }},
      {"capacity", "", "on-demand, spot or reserved", kText, nullptr, [](const R& r) { return r.capacity; }},
      {"nodes_requested", "", "nodes requested, initial ones included", kInteger, [](const R& r) { return double(r.pool.nodes_requested); }},
      {"reclaimed", "", "spot nodes reclaimed", kInteger, [](const R& r) { return double(r.pool.reclaimed); }},
      {"failed", "", "nodes failed", kInteger, [](const R& r) { return double(r.pool.failed); }},
      {"fallback_nodes", "", "nodes it gave in place of a pool that could not", kInteger, [](const R& r) { return double(r.pool.fallback_nodes); }},
      {"unavailable_time", "s", "spot market: time the price was above the maximum", kReal, [](const R& r) { return r.pool.unavailable_s; }},
      {"node_hours", "h", "node time held", kReal, [](const R& r) { return r.pool.node_hours; }},
      {"busy_node_hours", "h", "node time with at least one job", kReal, [](const R& r) { return r.pool.busy_node_hours; }},
      {"cost", "USD", "billed node time (reserved: the commitment and on-demand nodes beyond it)", kReal,
       [](const R& r) { return r.pool.cost_usd; }},
      {"on_demand_cost", "USD", "of cost: at on-demand prices", kReal, [](const R& r) { return r.pool.costs.on_demand; }},
      {"spot_cost", "USD", "of cost: spot", kReal, [](const R& r) { return r.pool.costs.spot; }},
      {"reserved_cost", "USD", "of cost: the commitment", kReal, [](const R& r) { return r.pool.costs.reserved; }},
      {"idle_cost", "USD", "of cost: node time without jobs (provisioning included)", kReal, [](const R& r) { return r.pool.costs.idle; }},
      {"provisioning_cost", "USD", "of idle_cost: nodes not ready yet", kReal, [](const R& r) { return r.pool.costs.provisioning; }},
      {"egress_cost", "USD", "checkpoint transfer of its nodes across zones or regions (not in cost)", kReal,
       [](const R& r) { return r.pool.costs.egress; }},
  };
  return columns;
}

const std::vector<Column<JobSpanRow>>& job_span_columns() {
  using R = JobSpanRow;
  static const std::vector<Column<R>> columns{
      {"variant", "", "index of the variant (row of the results table)", kInteger, [](const R& r) { return double(r.variant); }},
      {"job", "", "job name", kText, nullptr, [](const R& r) { return r.job; }},
      {"state", "", "queued, restarting, running, checkpointing or resizing", kText, nullptr,
       [](const R& r) { return scheduler::to_string(r.span.state); }},
      {"start", "s", "when the job entered the state", kReal, [](const R& r) { return r.span.start_s; }},
      {"end", "s", "when it left it (the horizon for jobs under way then)", kReal, [](const R& r) { return r.span.end_s; }},
  };
  return columns;
}

const std::vector<Column<PreemptionRow>>& preemption_columns() {
  using R = PreemptionRow;
  static const std::vector<Column<R>> columns{
      {"variant", "", "index of the variant (row of the results table)", kInteger, [](const R& r) { return double(r.variant); }},
      {"job", "", "job name", kText, nullptr, [](const R& r) { return r.job; }},
      {"time", "s", "when the job lost its GPUs", kReal, [](const R& r) { return r.preemption.time_s; }},
      {"cause", "", "capacity lost (spot reclaim, node failure) or suspended (by the scheduling policy)", kText, nullptr,
       [](const R& r) { return std::string(r.preemption.by_scheduler ? "suspended" : "capacity lost"); }},
  };
  return columns;
}

}  // namespace dlsim::experiment
