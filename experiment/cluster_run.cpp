// Running a cluster scenario: every variant simulated, summarised in a row, its jobs and time
// series kept for the files.
#include <stdexcept>

#include "experiment/columns.hpp"
#include "experiment/results.hpp"

namespace dlsim::experiment {

void run_cluster(const Scenario& scenario, Results& results, const sim::InterruptFlag* interrupt, const RunProgress& progress) {
  const ClusterScenario& cs = *scenario.cluster_sim;
  double total_jobs = 0;
  for (const ClusterVariant& v : cs.variants) total_jobs += static_cast<double>(v.spec.jobs.size());
  double jobs_before = 0;  // jobs of the variants already run
  std::vector<JobRow> job_rows;
  std::vector<PoolRow> pool_rows;
  std::vector<JobSpanRow> span_rows;
  std::vector<PreemptionRow> preemption_rows;
  for (std::size_t v = 0; v < cs.variants.size(); ++v) {
    const ClusterVariant& variant = cs.variants[v];
    scheduler::SimulationOptions options = variant.options;
    options.interrupt = interrupt;
    if (progress) {
      options.progress = [&progress, jobs_before, total_jobs](double done, double) { progress(jobs_before + done, total_jobs); };
    }
    const scheduler::ClusterResult r = scheduler::simulate_cluster(variant.spec, options);
    jobs_before += static_cast<double>(variant.spec.jobs.size());
    for (const scheduler::JobSpan& span : r.timeline) {
      span_rows.push_back({static_cast<int>(v), r.jobs[static_cast<std::size_t>(span.job)].name, span});
    }
    for (const scheduler::JobPreemption& p : r.preemptions) {
      preemption_rows.push_back({static_cast<int>(v), r.jobs[static_cast<std::size_t>(p.job)].name, p});
    }
    ClusterRow row;
    row.variant = variant.label;
    row.policy = variant.options.policy + (variant.options.backfill ? "+backfill" : "");
    row.placement = scheduler::to_string(variant.options.placement);
    row.jobs = static_cast<int>(r.jobs.size());
    for (const auto& j : r.jobs) {
      if (j.state == scheduler::JobState::done) ++row.done;
      else if (j.state == scheduler::JobState::failed) ++row.failed;
      else ++row.unfinished;
      row.preemptions += j.preemptions;
      row.suspensions += j.suspensions;
      row.checkpoints += j.checkpoints;
      row.comm_gpu_hours += j.network_s * j.gpus / 3600.0;
      row.jobs_cost += j.cost_usd;
      job_rows.push_back({static_cast<int>(v), j});
    }
    for (std::size_t p = 0; p < r.pools.size(); ++p) {
      row.nodes_requested += r.pools[p].nodes_requested;
      row.nodes_reclaimed += r.pools[p].reclaimed;
      row.nodes_failed += r.pools[p].failed;
      row.fallback_nodes += r.pools[p].fallback_nodes;
      row.unavailable_s += r.pools[p].unavailable_s;
      pool_rows.push_back({static_cast<int>(v), scheduler::to_string(variant.spec.pools[p].capacity), r.pools[p]});
    }
    row.costs = r.costs;
    row.makespan_s = r.makespan_s;
    row.mean_jct_s = r.mean_jct_s;
    row.median_jct_s = r.median_jct_s;
    row.p99_jct_s = r.p99_jct_s;
    row.mean_queueing_s = r.mean_queueing_s;
    row.gpu_utilization = r.gpu_utilization;
    row.lost_gpu_hours = r.lost_gpu_hours;
    row.total_cost = r.total_cost_usd;
    row.compute_cost = r.compute_cost_usd;
    row.idle_cost = r.idle_cost_usd;
    row.storage_cost = r.storage_cost_usd;
    row.events = r.events;
    results.cluster_rows.push_back(row);
    for (const sim::TimeSeries& series : r.recorder.all_series()) {
      Table t;
      TableColumn time{"time", "s", "simulated time", TableColumn::Type::real, {}, {}};
      TableColumn value{"value", series.name == "cost_usd" ? "USD" : (series.name.rfind("nodes_", 0) == 0 ? "nodes" : "GPUs"), series.name, TableColumn::Type::real, {}, {}};
      for (std::size_t i = 0; i < series.times.size(); ++i) {
        time.numbers.push_back(series.times[i].seconds());
        value.numbers.push_back(series.values[i]);
      }
      t.columns = {time, value};
      results.extra_tables.emplace_back("variants/" + std::to_string(v) + "/series/" + series.name, std::move(t));
    }
  }
  for (ClusterRow& row : results.cluster_rows) {
    const ClusterRow& first = results.cluster_rows.front();
    row.cost_vs_first = first.total_cost > 0 ? row.total_cost / first.total_cost : 0;
    row.makespan_vs_first = first.makespan_s > 0 ? row.makespan_s / first.makespan_s : 0;
  }
  results.table = make_table(cluster_columns(), results.cluster_rows);
  results.jobs_table = make_table(job_columns(), job_rows);
  results.extra_tables.emplace(results.extra_tables.begin(), "jobs", results.jobs_table);
  results.extra_tables.emplace(results.extra_tables.begin() + 1, "pools", make_table(pool_columns(), pool_rows));
  results.extra_tables.emplace(results.extra_tables.begin() + 2, "job_timeline", make_table(job_span_columns(), span_rows));
  results.extra_tables.emplace(results.extra_tables.begin() + 3, "job_preemptions", make_table(preemption_columns(), preemption_rows));
}

}  // namespace dlsim::experiment
