// The search space of the planner (planner.hpp, enumerate_plans).
#include <algorithm>
#include <stdexcept>

#include "experiment/planner.hpp"

namespace dlsim::experiment {
namespace {

// Context parallelism is worth trying where ring attention runs: fused attention and long
// sequences (Megatron-Core uses it from 8K tokens on; shorter ones split too finely).
constexpr int kContextMinTokens = 8192;

std::vector<int> powers_of_two_up_to(int most) {
  std::vector<int> out;
  for (int v = 1; v <= most; v *= 2) out.push_back(v);
  return out;
}

}  // namespace

std::vector<models::ParallelPlan> enumerate_plans(const Scenario& s, int nodes) {
  const WorkloadConfig& wl = s.workload;
  const int accelerators = nodes * s.cluster.instance.accelerators_per_node;
  const int batch = wl.batch;  // global (the plan: section requires it)
  const int blocks = std::max(1, wl.model.blocks());
  const bool context_ok = wl.decoder && wl.decoder->flash_attention && wl.sequence_length >= kContextMinTokens;
  const std::vector<int> contexts = context_ok ? std::vector<int>{1, 2, 4} : std::vector<int>{1};

  const models::ParallelPlan base = plan_with_numerics(wl);

  // Selective recomputation re-runs the attention cores (scores, softmax, dropout): a model whose
  // attention is fused (FlashAttention) has none, and its selective plans would repeat the plans
  // without recomputation exactly.
  std::vector<models::Recompute> recomputes{models::Recompute::none, models::Recompute::full};
  if (std::any_of(wl.model.layers.begin(), wl.model.layers.end(), [](const models::Layer& l) { return l.attention_core; })) {
    recomputes.insert(recomputes.begin() + 1, models::Recompute::selective);
  }

  std::vector<models::ParallelPlan> plans;
  for (int tensor : powers_of_two_up_to(s.cluster.instance.accelerators_per_node)) {
    for (int pipeline = 1; pipeline <= blocks; ++pipeline) {
      for (int context : contexts) {
        const int model_ways = tensor * pipeline * context;
        if (accelerators % model_ways != 0) continue;
        const int data = accelerators / model_ways;
        if (batch % data != 0) continue;
        const int replica_batch = batch / data;
        struct Schedule {
          models::PipelineSchedule kind;
          int virtual_stages;
        };
        std::vector<Schedule> schedules{{models::PipelineSchedule::one_f_one_b, 1}};
        if (pipeline > 1) {
          schedules.push_back({models::PipelineSchedule::interleaved, 2});
          schedules.push_back({models::PipelineSchedule::interleaved, 4});
        }
        std::vector<int> zero_stages{0};
        if (data * context > 1) {
          zero_stages.push_back(1);
          if (pipeline == 1) {
            zero_stages.push_back(2);
            zero_stages.push_back(3);
          }
        }
        for (const Schedule& schedule : schedules) {
          for (int zero : zero_stages) {
            for (int size : powers_of_two_up_to(replica_batch)) {
              if (replica_batch % size != 0) continue;
              for (models::Recompute recompute : recomputes) {
                models::ParallelPlan p = base;
                p.data = data;
                p.tensor = tensor;
                p.pipeline = pipeline;
                p.context = context;
                p.sequence_parallel = tensor > 1;
                p.schedule = schedule.kind;
                p.virtual_stages = schedule.virtual_stages;
                p.zero_stage = zero;
                p.micro_batch_size = size;
                p.micro_batches = replica_batch / size;
                p.recompute = recompute;
                try {
                  models::validate_plan(p, wl.model, accelerators);
                } catch (const std::invalid_argument&) {
                  continue;  // not a point of the space (e.g. heads not divisible, too few micro-batches)
                }
                plans.push_back(p);
              }
            }
          }
        }
      }
    }
  }
  return plans;
}

}  // namespace dlsim::experiment
