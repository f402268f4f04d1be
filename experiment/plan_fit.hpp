// What to change when a plan does not fit in accelerator memory, the way a practitioner goes
// about it: the micro-batch a replica's batch is run in (plan_yaml.cpp's default), and the
// smallest changes that make a rejected plan fit (named in `dlsim check`'s error).
#pragma once
#include <string>
#include <vector>

#include "models/model_graph.hpp"
#include "models/parallel_plan.hpp"

namespace dlsim::experiment {

// The largest micro-batch size that divides `replica_batch` and fits in `memory_bytes` with
// `plan` (its micro_batch_size and micro_batches are set here); 1 when none fits.
int largest_fitting_micro_batch(const models::ModelGraph& model, models::ParallelPlan plan, int replica_batch,
                                double memory_bytes);

// One change to a plan and the peak memory per accelerator it leads to.
struct FitChange {
  std::string change;  // as the plan keys spell it, e.g. "recompute: selective"
  double bytes = 0;
};

// Changes that make `plan` fit in `memory_bytes`, in the order a practitioner tries them:
// selective then full recomputation, a smaller micro-batch (with more of them), sequence
// parallelism, ZeRO stages 1 to 3 (2 and 3 without a pipeline); single changes first, then
// pairs of them when no single one fits. At most `most` of them; empty when none helps.
std::vector<FitChange> changes_that_fit(const models::ModelGraph& model, const models::ParallelPlan& plan, double memory_bytes,
                                        std::size_t most = 3);

// "; it fits with recompute: selective (61.2 GiB), or zero_stage: 1 (58.0 GiB)" or "" (none).
std::string describe_fits(const std::vector<FitChange>& changes);

}  // namespace dlsim::experiment
