#include "scheduler/fixed_cluster_job.hpp"

#include <algorithm>
#include <stdexcept>

namespace dlsim::scheduler {
namespace {

// State of the running job, referred to by pointer from its events.
struct RunningJob {
  sim::Engine* engine;
  sim::Recorder* recorder;
  sim::SeriesId series;
  const FixedClusterJob* job;
  sim::Time start;
  std::int64_t step = 0;          // iterations between progress events
  std::int64_t done = 0;
  std::int64_t points = 0;

  // When `iterations` are done, with the start-up before them and the evaluations they passed
  // (one that falls on `iterations` itself included).
  sim::Time time_after(std::int64_t iterations) const {
    return start + sim::Time::from_seconds(job->startup_s + static_cast<double>(iterations) * job->iteration_s +
                                           first_epoch_extra_s(iterations) +
                                           static_cast<double>(evaluations_in(iterations)) * job->evaluation_s);
  }
  double first_epoch_extra_s(std::int64_t iterations) const {
    if (!(job->first_epoch_iteration_s > 0) || job->iterations_per_epoch <= 0) return 0;
    return static_cast<double>(std::min(iterations, job->iterations_per_epoch)) * (job->first_epoch_iteration_s - job->iteration_s);
  }
  std::int64_t evaluations_in(std::int64_t iterations) const {
    const std::int64_t per_epoch = job->iterations_per_epoch;
    if (job->evaluation_every_epochs <= 0 || per_epoch <= 0) return 0;
    const std::int64_t epochs = iterations == job->iterations ? (iterations + per_epoch - 1) / per_epoch : iterations / per_epoch;
    return epochs / job->evaluation_every_epochs;
  }
  void schedule_next() {
    const std::int64_t target = std::min(done + step, job->iterations);
    engine->schedule_at(time_after(target), [this, target] { reached(target); });
  }
  void reached(std::int64_t target) {
    done = target;
    ++points;
    recorder->record(series, engine->now(), static_cast<double>(done));
    if (done < job->iterations) schedule_next();
  }
};

}  // namespace

JobOutcome run_fixed_cluster_job(sim::Engine& engine, sim::Recorder& recorder, const FixedClusterJob& job) {
  if (!(job.iteration_s > 0) || job.iterations < 1 || job.nodes < 1) {
    throw std::invalid_argument("run_fixed_cluster_job: needs nodes, iterations and a positive iteration time");
  }
  if (!(job.startup_s >= 0) || !(job.evaluation_s >= 0) || job.evaluation_every_epochs < 0 || !(job.first_epoch_iteration_s >= 0)) {
    throw std::invalid_argument("run_fixed_cluster_job: start-up and evaluation times must be >= 0");
  }
  RunningJob running{&engine, &recorder, recorder.series("iterations_done"), &job, engine.now()};
  running.time_after(job.iterations);  // throws before anything is scheduled if out of range
  const std::int64_t even_step = (job.iterations + kMaxProgressEvents - 1) / kMaxProgressEvents;
  running.step = std::max(job.iterations_per_epoch, even_step);
  running.schedule_next();
  engine.run();
  JobOutcome out;
  out.time_to_train_s = (engine.now() - running.start).seconds();
  out.cost_usd = billed_cost(job.price_per_node_hour, job.nodes, out.time_to_train_s, job.billing);
  out.progress_points = running.points;
  out.evaluations = running.evaluations_in(job.iterations);
  return out;
}

}  // namespace dlsim::scheduler
