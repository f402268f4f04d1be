// One training job on a fixed set of nodes, from start to its last iteration, replayed on the
// engine at cluster level: the job advances at its iteration rate, records its progress at each
// epoch boundary (or at most kMaxProgressEvents evenly spaced points), and finishes. The
// multi-job cluster (issue 5) adds queues, preemption and resizing around the same shape.
#pragma once
#include <cstdint>

#include "scheduler/billing.hpp"
#include "sim/engine.hpp"
#include "sim/recorder.hpp"

namespace dlsim::scheduler {

struct FixedClusterJob {
  int nodes = 1;
  double price_per_node_hour = 0;
  double iteration_s = 0;                 // > 0
  std::int64_t iterations = 0;            // > 0
  std::int64_t iterations_per_epoch = 0;  // 0 when the job has no epochs
  BillingRule billing;
  // Before the first iteration: container start, framework initialisation, warm-up (billed).
  double startup_s = 0;
  // An evaluation pass of evaluation_s after every `evaluation_every_epochs` epochs (0: none; needs
  // iterations_per_epoch), the training paused meanwhile (billed). The run's last iteration ends
  // its last epoch, however few iterations that epoch had (rounding of the work into steps).
  double evaluation_s = 0;
  std::int64_t evaluation_every_epochs = 0;
  // The first epoch's iterations when they differ (a dataset read from storage, then cached):
  // 0 when every iteration takes iteration_s.
  double first_epoch_iteration_s = 0;
};

struct JobOutcome {
  double time_to_train_s = 0;
  double cost_usd = 0;
  std::int64_t progress_points = 0;       // progress events recorded
  std::int64_t evaluations = 0;           // evaluation passes run
};

inline constexpr std::int64_t kMaxProgressEvents = 10'000;

// Schedules the job at engine.now(), runs the engine until it completes, and records the
// series "iterations_done" in `recorder`. Throws std::out_of_range when the run would not fit
// in sim::Time (about 292 years).
JobOutcome run_fixed_cluster_job(sim::Engine& engine, sim::Recorder& recorder, const FixedClusterJob& job);

}  // namespace dlsim::scheduler
