// The order in which one pipeline rank runs its forward and backward passes over micro-batches.
// - GPipe (Huang et al. 2019): all forwards, then all backwards (pipeline flush).
// - 1F1B (PipeDream-Flush, Narayanan et al. 2021): p - r - 1 warm-up forwards on rank r, then
//   one forward and one backward alternately, then the remaining backwards. Same bubble as
//   GPipe, but at most p micro-batches in flight instead of m.
// - Interleaved 1F1B (Narayanan et al. SC21, Megatron-LM schedules.py): each rank holds v model
//   chunks; micro-batches advance in groups of p through the chunks; the bubble shrinks by v.
#pragma once
#include <vector>

#include "models/parallel_plan.hpp"

namespace dlsim::models {

struct PassId {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;     // model chunk on this rank (virtual stage = chunk * pipeline + rank)
};

// The passes of pipeline rank `rank` (0-based) in execution order: 2 * micro_batches *
// virtual_stages passes. The plan must be valid (validate_plan).
std::vector<PassId> pipeline_order(const ParallelPlan& plan, int rank);

// Largest number of micro-batch chunks whose activations rank `rank` holds at once (forward done,
// backward not yet), weighting chunk passes equally: p for 1F1B on the first rank, m for GPipe.
int peak_in_flight(const ParallelPlan& plan, int rank);

}  // namespace dlsim::models
