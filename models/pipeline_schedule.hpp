// The order in which one pipeline rank runs its forward and backward passes over micro-batches.
// - GPipe (Huang et al. 2019): all forwards, then all backwards (pipeline flush).
// - 1F1B (PipeDream-Flush, Narayanan et al. 2021): p - r - 1 warm-up forwards on rank r, then
//   one forward and one backward alternately, then the remaining backwards. Same bubble as
//   GPipe, but at most p micro-batches in flight instead of m.
// - Interleaved 1F1B (Narayanan et al. SC21, Megatron-LM schedules.py): each rank holds v model
//   chunks; micro-batches advance in groups of p through the chunks; the bubble shrinks by v.
// - ZB-H1 (Qi, Wan, Huang, Lin: "Zero Bubble Pipeline Parallelism", ICLR 2024, sec. 2.1 and
//   Figure 3 top): backward is split into B (gradients of the stage's input, what the previous
//   stage waits for) and W (gradients of the weights, needed by nobody but the optimizer). The
//   paper keeps 1F1B's warm-up (p - r - 1 forwards on rank r) and "delays the start of W passes
//   by the number of warm-up micro-batches" so that every rank holds the same number of micro-
//   batches in flight (forward done, W not yet): p, the first rank's count under 1F1B. Rank r
//   therefore runs F B pairs for its first r steady rounds, then F B W; the cool-down runs B W
//   and ends with the r deferred W passes, which fill the tail bubble. With equal F, B and W
//   times the bubble is (p - 1)(T_F + T_B - T_W) per rank instead of 1F1B's (p - 1)(T_F + T_B +
//   T_W) (the paper: one third). With p == 1 it is plain gradient accumulation (F, B+W).
#pragma once
#include <vector>

#include "models/parallel_plan.hpp"

namespace dlsim::models {

// A backward pass (forward false) computes all gradients, except under ZB-H1 (pipeline > 1),
// whose backward is B (input gradients) and whose weight passes (weight true) are W.
struct PassId {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;       // model chunk on this rank (virtual stage = chunk * pipeline + rank)
  bool weight = false; // a W pass (ZB-H1): the weight gradients of a micro-batch whose B ran
};

// Whether the plan's backward runs as separate B and W passes (ZB-H1 with a pipeline).
bool splits_weight_gradients(const ParallelPlan& plan);

// The passes of pipeline rank `rank` (0-based) in execution order: 2 * micro_batches *
// virtual_stages passes. The plan must be valid (validate_plan).
std::vector<PassId> pipeline_order(const ParallelPlan& plan, int rank);

// Largest number of micro-batch chunks whose activations rank `rank` holds at once (forward done,
// backward not yet), weighting chunk passes equally: p for 1F1B on the first rank, m for GPipe.
// Under ZB-H1 this counts B, not W: a micro-batch between its B and its W holds less (what its
// W reads), counted by peak_held.
int peak_in_flight(const ParallelPlan& plan, int rank);

// The most rank `rank` holds at once, in any unit, when a micro-batch chunk holds `forward_held`
// from its forward to its backward (B) and `weight_held` from its B to its W (ZB-H1 only),
// counted after each pass of pipeline_order.
double peak_held(const ParallelPlan& plan, int rank, double forward_held, double weight_held);

}  // namespace dlsim::models
