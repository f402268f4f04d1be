// Pipeline schedules (see pipeline_schedule.hpp), after Megatron-LM's
// forward_backward_pipelining_without_interleaving / _with_interleaving.
#include "models/pipeline_schedule.hpp"

#include <algorithm>

namespace dlsim::models {
namespace {

// Interleaved: the k-th forward (or backward) pass of a rank works on this chunk and micro-batch
// (Megatron's get_model_chunk_id: groups of p micro-batches go through the chunks in turn).
PassId interleaved_pass(const ParallelPlan& plan, int k, bool forward) {
  const int p = plan.pipeline, v = plan.virtual_stages;
  const int in_group = k % (p * v);
  int chunk = in_group / p;
  if (!forward) chunk = v - 1 - chunk;
  return PassId{forward, (k / (p * v)) * p + k % p, chunk};
}

// ZB-H1 on rank r (see the header): 1F1B's warm-up and steady F B pairs, with W passes in
// micro-batch order, each steady round from round r on ending with one, each cool-down B
// followed by one, the rest at the end.
std::vector<PassId> zb_h1_order(const ParallelPlan& plan, int rank) {
  const int m = plan.micro_batches, p = plan.pipeline;
  const int warmup = std::min(p - rank - 1, m);
  const int steady = m - warmup;
  std::vector<PassId> order;
  int next_w = 0;
  const auto w = [&] { order.push_back({false, next_w++, 0, true}); };
  for (int i = 0; i < warmup; ++i) order.push_back({true, i, 0});
  for (int i = 0; i < steady; ++i) {
    order.push_back({true, warmup + i, 0});
    order.push_back({false, i, 0});
    if (i >= rank) w();
  }
  for (int i = steady; i < m; ++i) {
    order.push_back({false, i, 0});
    w();
  }
  while (next_w < m) w();
  return order;
}

}  // namespace

bool splits_weight_gradients(const ParallelPlan& plan) {
  return plan.schedule == PipelineSchedule::zb_h1 && plan.pipeline > 1;
}

std::vector<PassId> pipeline_order(const ParallelPlan& plan, int rank) {
  const int m = plan.micro_batches, p = plan.pipeline;
  std::vector<PassId> order;
  order.reserve(static_cast<std::size_t>(2 * m * plan.virtual_stages));
  if (plan.schedule == PipelineSchedule::gpipe || p == 1) {
    // Without a pipeline every schedule is gradient accumulation: forward and backward of each
    // micro-batch in turn (keeps one micro-batch of activations). GPipe with p > 1 flushes.
    if (p == 1 && plan.schedule != PipelineSchedule::gpipe) {
      for (int i = 0; i < m; ++i) {
        order.push_back({true, i, 0});
        order.push_back({false, i, 0});
      }
      return order;
    }
    for (int i = 0; i < m; ++i) order.push_back({true, i, 0});
    for (int i = 0; i < m; ++i) order.push_back({false, i, 0});
    return order;
  }
  if (plan.schedule == PipelineSchedule::zb_h1) return zb_h1_order(plan, rank);
  if (plan.schedule == PipelineSchedule::one_f_one_b) {
    const int warmup = std::min(p - rank - 1, m);
    const int steady = m - warmup;
    for (int i = 0; i < warmup; ++i) order.push_back({true, i, 0});
    for (int i = 0; i < steady; ++i) {
      order.push_back({true, warmup + i, 0});
      order.push_back({false, i, 0});
    }
    for (int i = steady; i < m; ++i) order.push_back({false, i, 0});
    return order;
  }
  const int total = m * plan.virtual_stages;
  const int warmup = std::min((p - rank - 1) * 2 + (plan.virtual_stages - 1) * p, total);
  const int steady = total - warmup;
  for (int k = 0; k < warmup; ++k) order.push_back(interleaved_pass(plan, k, true));
  for (int k = 0; k < steady; ++k) {
    order.push_back(interleaved_pass(plan, warmup + k, true));
    order.push_back(interleaved_pass(plan, k, false));
  }
  for (int k = steady; k < total; ++k) order.push_back(interleaved_pass(plan, k, false));
  return order;
}

int peak_in_flight(const ParallelPlan& plan, int rank) {
  int live = 0, peak = 0;
  for (const PassId& pass : pipeline_order(plan, rank)) {
    if (pass.weight) continue;
    live += pass.forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

double peak_held(const ParallelPlan& plan, int rank, double forward_held, double weight_held) {
  const bool split = splits_weight_gradients(plan);
  int live = 0, waiting = 0;  // forward done and B not; B done and W not
  double peak = 0;
  for (const PassId& pass : pipeline_order(plan, rank)) {
    if (pass.forward) {
      ++live;
    } else if (pass.weight) {
      --waiting;
    } else {
      --live;
      if (split) ++waiting;
    }
    peak = std::max(peak, live * forward_held + waiting * weight_held);
  }
  return peak;
}

}  // namespace dlsim::models
