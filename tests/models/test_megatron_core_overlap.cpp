// Megatron-Core's overlaps: plan.tp_comm_overlap (sequence parallelism's all-gathers and
// reduce-scatters pipelined with the tensor-split GEMMs next to them, --tp-comm-overlap) and
// plan.overlap_param_gather (the distributed optimizer's parameter all-gather hidden behind the
// next forward, --overlap-param-gather).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/iteration_program.hpp"
#include "models/parallel_plan.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

using test::config;
using test::dgx_cluster;
using test::sum_of_parts;

ParallelPlan tensor_plan(bool overlap) {
  ParallelPlan plan;
  plan.tensor = 8;
  plan.sequence_parallel = true;
  plan.tp_comm_overlap = overlap;
  plan.micro_batch_size = 1;
  plan.micro_batches = 2;
  plan.precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  return plan;
}

TEST(TpCommOverlap, EachCollectiveTakesTheGemmNextToIt) {
  const ModelGraph model = decoder_model("gpt3-6.7b", 2048);
  const TrainingConfig c = config(model, dgx_cluster(1), tensor_plan(true));
  const IterationProgram program = build_iteration_program(model, c.plan, c.device, c.profile);
  const PassProgram& forward = program.stages.front().forward;
  int tensor = 0, with_gemm = 0;
  double overlapped = 0, compute = 0;
  for (const Segment& s : forward.segments) {
    if (s.kind == SegmentKind::tensor) {
      ++tensor;
      with_gemm += s.overlap_s > 0 ? 1 : 0;
      overlapped += s.overlap_s;
    }
    if (s.kind == SegmentKind::compute) compute += s.seconds;
  }
  EXPECT_EQ(tensor, 4 * 32 + 2);  // per layer a reduce-scatter and an all-gather twice; the embedding's
  EXPECT_GE(with_gemm, tensor - 2);  // all but the last have a GEMM to run with
  EXPECT_NEAR(compute + overlapped, forward.compute_s, 1e-9 * forward.compute_s);  // the GEMMs moved, not lost
}

TEST(TpCommOverlap, HidesTensorParallelCommunicationBehindTheGemms) {
  const ModelGraph model = decoder_model("gpt3-6.7b", 2048);
  const network::Topology topology = dgx_cluster(1);
  const IterationBreakdown off = replay_iteration(config(model, topology, tensor_plan(false)));
  const IterationBreakdown on = replay_iteration(config(model, topology, tensor_plan(true)));
  EXPECT_LT(on.iteration_s, off.iteration_s);
  EXPECT_LT(on.tensor_comm_s, 0.6 * off.tensor_comm_s);
  EXPECT_NEAR(on.compute_s, off.compute_s, 1e-6 * off.compute_s);   // the same GEMMs, counted as compute
  EXPECT_NEAR(sum_of_parts(on), on.iteration_s, 1e-6 * on.iteration_s);
  // What is saved is at most what was exposed: no time is created.
  EXPECT_GE(on.iteration_s, off.iteration_s - off.tensor_comm_s - 1e-9);
  EXPECT_GT(on.tensor_comm_s, 0);  // the pipelines' fill stays exposed
}

TEST(TpCommOverlap, NeedsSequenceParallelism) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = tensor_plan(true);
  plan.sequence_parallel = false;
  try {
    validate_plan(plan, model, 8);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("plan.tp_comm_overlap: ", 0), 0u) << e.what();
  }
}

ParallelPlan distributed_optimizer(bool overlap) {
  ParallelPlan plan;
  plan.data = 16;
  plan.zero_stage = 1;
  plan.overlap_param_gather = overlap;
  plan.micro_batch_size = 8;  // a long first forward to hide the gather behind
  plan.micro_batches = 2;
  plan.bucket_bytes = 80e6;   // Megatron-Core's buckets: 40M elements
  plan.precision = Precision::bf16;
  plan.gradient_precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  return plan;
}

TEST(OverlapParamGather, HidesTheParameterGatherBehindForward) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  const network::Topology topology = dgx_cluster(2, 100);  // 16 GPUs, 100 Gbps NICs: the gather matters
  const IterationBreakdown off = replay_iteration(config(model, topology, distributed_optimizer(false)));
  const IterationBreakdown on = replay_iteration(config(model, topology, distributed_optimizer(true)));
  EXPECT_LT(on.iteration_s, off.iteration_s);
  EXPECT_LT(on.exposed_dp_comm_s + on.gather_wait_s, off.exposed_dp_comm_s + off.gather_wait_s);
  EXPECT_NEAR(on.compute_s, off.compute_s, 1e-9 * off.compute_s);
  EXPECT_NEAR(sum_of_parts(on), on.iteration_s, 1e-6 * on.iteration_s);
  EXPECT_NEAR(sum_of_parts(off), off.iteration_s, 1e-6 * off.iteration_s);
  // The same bytes go over the data-parallel stream, only earlier.
  EXPECT_NEAR(on.dp_comm_busy_s, off.dp_comm_busy_s, 0.25 * off.dp_comm_busy_s);
}

TEST(OverlapParamGather, NeedsAShardedOptimizer) {
  ParallelPlan plan = distributed_optimizer(true);
  plan.zero_stage = 0;
  try {
    validate_plan(plan, decoder_model("gpt3-1.3b", 2048), 16);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("plan.overlap_param_gather: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::models
