// The zero-bubble schedule ZB-H1 (pipeline_schedule.hpp): its order, its memory and its replay.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "models/iteration_program.hpp"
#include "models/memory_model.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

using test::config;
using test::dgx_cluster;
using test::sum_of_parts;

ParallelPlan plan_of(PipelineSchedule s, int p, int m) { return test::pipeline_plan(s, p, m); }

TEST(ZeroBubble, EveryMicroBatchRunsFThenBThenWOnEveryRank) {
  for (auto [p, m] : {std::pair{4, 8}, {4, 4}, {8, 3}, {2, 16}}) {
    const ParallelPlan plan = plan_of(PipelineSchedule::zb_h1, p, m);
    for (int r = 0; r < p; ++r) {
      const auto order = pipeline_order(plan, r);
      ASSERT_EQ(order.size(), static_cast<std::size_t>(3 * m)) << "p=" << p << " m=" << m << " rank " << r;
      std::set<int> f, b, w;
      int next_w = 0;
      for (const PassId& pass : order) {
        EXPECT_EQ(pass.chunk, 0);
        if (pass.forward) {
          EXPECT_TRUE(f.insert(pass.micro_batch).second);
        } else if (!pass.weight) {
          EXPECT_TRUE(f.count(pass.micro_batch)) << "B before F";
          EXPECT_TRUE(b.insert(pass.micro_batch).second);
        } else {
          EXPECT_TRUE(b.count(pass.micro_batch)) << "W before B";
          EXPECT_EQ(pass.micro_batch, next_w++) << "W passes run in micro-batch order";
          w.insert(pass.micro_batch);
        }
      }
      EXPECT_EQ(w.size(), static_cast<std::size_t>(m));
    }
  }
}

TEST(ZeroBubble, WithoutItsWPassesTheOrderIs1F1BAndEveryRankHoldsPMicroBatches) {
  const int p = 4, m = 8;
  for (int r = 0; r < p; ++r) {
    const auto zb = pipeline_order(plan_of(PipelineSchedule::zb_h1, p, m), r);
    const auto one_f = pipeline_order(plan_of(PipelineSchedule::one_f_one_b, p, m), r);
    std::vector<PassId> without_w;
    for (const PassId& pass : zb) {
      if (!pass.weight) without_w.push_back(pass);
    }
    ASSERT_EQ(without_w.size(), one_f.size());
    for (std::size_t i = 0; i < one_f.size(); ++i) {
      EXPECT_EQ(without_w[i].forward, one_f[i].forward) << "rank " << r << " pass " << i;
      EXPECT_EQ(without_w[i].micro_batch, one_f[i].micro_batch) << "rank " << r << " pass " << i;
    }
    // The paper: W deferred by the warm-up count, so that every rank has p micro-batches in
    // flight (forward done, W not yet) at its peak: what the first rank holds under 1F1B.
    int in_flight = 0, peak = 0;
    for (const PassId& pass : zb) {
      if (pass.forward) ++in_flight;
      if (pass.weight) --in_flight;
      peak = std::max(peak, in_flight);
    }
    EXPECT_EQ(peak, p) << "rank " << r;
    // The last rank defers p - 1 W passes to its end, the first none.
    int trailing_w = 0;
    for (auto it = zb.rbegin(); it != zb.rend() && it->weight; ++it) ++trailing_w;
    EXPECT_EQ(trailing_w, r + 1) << "rank " << r;  // the deferred ones and the last B's own
  }
}

TEST(ZeroBubble, WithoutAPipelineItIsGradientAccumulation) {
  const ParallelPlan plan = plan_of(PipelineSchedule::zb_h1, 1, 4);
  EXPECT_FALSE(splits_weight_gradients(plan));
  const auto order = pipeline_order(plan, 0);
  ASSERT_EQ(order.size(), 8u);
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].forward, i % 2 == 0);
    EXPECT_FALSE(order[i].weight);
  }
}

TEST(ZeroBubble, DeferredWPassesAreCountedInPeakHeld) {
  const int p = 4, m = 8;
  const ParallelPlan zb = plan_of(PipelineSchedule::zb_h1, p, m);
  const ParallelPlan one_f = plan_of(PipelineSchedule::one_f_one_b, p, m);
  // 1F1B: W costs nothing extra, and peak_held is peak_in_flight times what one holds.
  EXPECT_DOUBLE_EQ(peak_held(one_f, 0, 10, 7), 10.0 * p);
  // ZB-H1, first rank: F B W in each round, its peak is 1F1B's.
  EXPECT_DOUBLE_EQ(peak_held(zb, 0, 10, 7), 10.0 * p);
  // Last rank: one micro-batch between F and B, p - 1 waiting for their W.
  EXPECT_DOUBLE_EQ(peak_held(zb, p - 1, 10, 7), 10.0 + 7.0 * (p - 1));
  EXPECT_DOUBLE_EQ(peak_held(one_f, p - 1, 10, 7), 10.0);
}

TEST(ZeroBubble, PeakActivationMemoryIsNotAbove1F1Bs) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = plan_of(PipelineSchedule::one_f_one_b, 4, 8);
  plan.precision = Precision::bf16;
  const auto one_f = memory_per_rank(model, plan);
  plan.schedule = PipelineSchedule::zb_h1;
  const auto zb = memory_per_rank(model, plan);
  double peak_one_f = 0, peak_zb = 0;
  for (std::size_t r = 0; r < zb.size(); ++r) {
    peak_one_f = std::max(peak_one_f, one_f[r].activations);
    peak_zb = std::max(peak_zb, zb[r].activations);
  }
  EXPECT_LE(peak_zb, peak_one_f);
  EXPECT_DOUBLE_EQ(zb[0].activations, one_f[0].activations);
  // The later ranks hold the inputs of their deferred W passes: more than under 1F1B.
  EXPECT_GT(zb[3].activations, one_f[3].activations);
  // Recomputation drops a block's activations after forward, not what a deferred W reads (B
  // recomputed it): there the paper's bound does not hold (the last stage keeps its output
  // layer's logit gradients for p - 1 micro-batches).
  plan.recompute = Recompute::full;
  const auto zb_full = memory_per_rank(model, plan);
  plan.schedule = PipelineSchedule::one_f_one_b;
  const auto one_f_full = memory_per_rank(model, plan);
  EXPECT_GT(zb_full[3].activations, one_f_full[0].activations);
}

// A model of identical blocks, each one 2048 x 4096 x 4096 linear layer, whose tiny declared
// output makes pipeline sends cost next to nothing.
ModelGraph linear_blocks(int blocks) {
  ModelGraph g = test::uniform_model(blocks);
  for (Layer& l : g.layers) {
    l.parameters = 4096.0 * 4096.0;
    l.forward_flops = 2.0 * l.parameters * 2048;  // 2048 positions per sample
    l.matmul.rows = 2048;
    l.matmul.cols = 4096;
    l.matmul.depth = 4096;
  }
  return g;
}

TEST(ZeroBubble, WithEqualFBWTheBubbleIsAThirdOf1F1Bs) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = linear_blocks(16);
  const int p = 4, m = 8;
  TrainingConfig one_f = config(model, topology, plan_of(PipelineSchedule::one_f_one_b, p, m));
  // The roofline times a backward with weights as two equal kernels of the forward's cost:
  // T_F = T_B = T_W exactly.
  one_f.profile.kernels = KernelProfile{};
  TrainingConfig zb = one_f;
  zb.plan.schedule = PipelineSchedule::zb_h1;
  const IterationProgram program = build_iteration_program(model, zb.plan, zb.device, zb.profile);
  const double t_f = program.stages[0].forward.compute_s;
  EXPECT_NEAR(program.stages[0].backward.compute_s, t_f, 1e-12);
  EXPECT_NEAR(program.stages[0].weight.compute_s, t_f, 1e-12);
  const auto a = replay_iteration(one_f);
  const auto b = replay_iteration(zb);
  // Qi et al. sec. 2.1: (p - 1)(T_F + T_B + T_W) for 1F1B, (p - 1)(T_F + T_B - T_W) for ZB-H1
  // (pipeline sends of a few KiB add little).
  EXPECT_NEAR(a.pipeline_bubble_s, (p - 1) * 3 * t_f, 0.02 * (p - 1) * 3 * t_f);
  EXPECT_NEAR(b.pipeline_bubble_s, (p - 1) * t_f, 0.02 * (p - 1) * t_f);
  EXPECT_NEAR(a.iteration_s - b.iteration_s, 2.0 * (p - 1) * t_f, 0.02 * 2.0 * (p - 1) * t_f);
  EXPECT_NEAR(a.compute_s, b.compute_s, 1e-9 * a.compute_s);
  EXPECT_NEAR(sum_of_parts(b), b.iteration_s, 1e-6 * b.iteration_s);
}

TEST(ZeroBubble, WithKernelTimesTheBubbleFollowsThePapersFormula) {
  // The GEMMs of F (NT), B (NN) and W (TN) differ a little in time on the A100's kernel profile.
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = linear_blocks(16);
  const int p = 4, m = 8;
  const TrainingConfig one_f = config(model, topology, plan_of(PipelineSchedule::one_f_one_b, p, m));
  TrainingConfig zb = one_f;
  zb.plan.schedule = PipelineSchedule::zb_h1;
  const IterationProgram program = build_iteration_program(model, zb.plan, zb.device, zb.profile);
  const StageProgram& s = program.stages[0];
  const double t_f = s.forward.compute_s, t_b = s.backward.compute_s, t_w = s.weight.compute_s;
  EXPECT_GT(t_w, 0.2 * t_b);
  const auto a = replay_iteration(one_f);
  const auto b = replay_iteration(zb);
  const double bubble_1f1b = (p - 1) * (t_f + t_b + t_w), bubble_zb = (p - 1) * (t_f + t_b - t_w);
  EXPECT_NEAR(a.pipeline_bubble_s, bubble_1f1b, 0.02 * bubble_1f1b);
  EXPECT_NEAR(b.pipeline_bubble_s, bubble_zb, 0.02 * bubble_zb);
}

TEST(ZeroBubble, TotalsAreThoseOf1F1B) {
  // A GPT with data parallelism: the same compute, FLOPs and gradient bytes, in less time.
  const network::Topology topology = dgx_cluster(2);
  const ModelGraph model = decoder_model("gpt3-350m", 1024);
  ParallelPlan plan = plan_of(PipelineSchedule::one_f_one_b, 4, 8);
  plan.data = 4;
  plan.micro_batch_size = 2;
  const auto a = replay_iteration(config(model, topology, plan));
  plan.schedule = PipelineSchedule::zb_h1;
  const auto b = replay_iteration(config(model, topology, plan));
  EXPECT_NEAR(b.compute_s, a.compute_s, 1e-9 * a.compute_s);
  EXPECT_DOUBLE_EQ(b.model_flops_per_iteration, a.model_flops_per_iteration);
  EXPECT_DOUBLE_EQ(b.hardware_flops_per_iteration, a.hardware_flops_per_iteration);
  EXPECT_NEAR(b.gradient_wire_bytes, a.gradient_wire_bytes, 1e-9 * a.gradient_wire_bytes);
  EXPECT_GT(b.gradient_wire_bytes, 0);
  EXPECT_LT(b.iteration_s, a.iteration_s);
  EXPECT_LT(b.pipeline_bubble_s, a.pipeline_bubble_s);
  EXPECT_NEAR(sum_of_parts(b), b.iteration_s, 1e-6 * b.iteration_s);
}

TEST(ZeroBubble, TheTraceNamesWPasses) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = decoder_model("gpt3-350m", 1024);
  const ParallelPlan plan = plan_of(PipelineSchedule::zb_h1, 4, 4);
  IterationTrace trace;
  replay_iteration(config(model, topology, plan), &trace);
  int f = 0, b = 0, w = 0;
  for (const TraceSpan& s : trace.spans) {
    if (trace.lanes[static_cast<std::size_t>(s.lane)].thread != "compute" || s.category != "compute") continue;
    f += s.name.rfind("F mb", 0) == 0;
    b += s.name.rfind("B mb", 0) == 0;
    w += s.name.rfind("W mb", 0) == 0;
  }
  EXPECT_EQ(f, 4 * 4);
  EXPECT_EQ(b, 4 * 4);
  EXPECT_EQ(w, 4 * 4);
}

TEST(ZeroBubble, PlansWithChunksOrZero3AreRefused) {
  const ModelGraph model = decoder_model("gpt3-350m", 1024);
  ParallelPlan plan = plan_of(PipelineSchedule::zb_h1, 4, 8);
  EXPECT_NO_THROW(validate_plan(plan, model, plan.devices()));
  plan.virtual_stages = 2;
  EXPECT_THROW(validate_plan(plan, model, plan.devices()), std::invalid_argument);
  plan.virtual_stages = 1;
  plan.data = 2;
  plan.zero_stage = 3;
  EXPECT_THROW(validate_plan(plan, model, plan.devices()), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::models
