#include <gtest/gtest.h>

#include <cmath>

#include "models/catalog.hpp"
#include "models/iteration_program.hpp"
#include "models/job_performance.hpp"
#include "models/memory_model.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "network/collectives.hpp"
#include "network/topology_builders.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

using test::config;
using test::dgx_cluster;
using test::pipeline_plan;
using test::sum_of_parts;
using test::uniform_model;

TEST(TrainingReplay, GPipeBubbleIsPMinusOneOverMPlusPMinusOne) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = uniform_model(8);
  for (auto [p, m] : {std::pair{4, 8}, {8, 8}, {4, 32}, {2, 3}}) {
    const auto b = replay_iteration(config(model, topology, pipeline_plan(PipelineSchedule::gpipe, p, m)));
    const double passes = b.iteration_s - b.optimizer_s;
    const double expected = double(p - 1) / double(m + p - 1);
    EXPECT_NEAR(b.pipeline_bubble_s / passes, expected, 0.01 * expected) << "p=" << p << " m=" << m;
    // The same bubble as a fraction of the ideal (bubble-free) time: (p - 1) / m.
    EXPECT_NEAR(b.pipeline_bubble_s / b.compute_s, double(p - 1) / m, 0.01 * (p - 1) / m);
    EXPECT_NEAR(sum_of_parts(b), b.iteration_s, 1e-6 * b.iteration_s);
  }
}

TEST(TrainingReplay, OneFOneBHasGPipesBubbleAndInterleavingDividesIt) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = uniform_model(16);
  const int p = 4, m = 8;
  const auto gpipe = replay_iteration(config(model, topology, pipeline_plan(PipelineSchedule::gpipe, p, m)));
  const auto one_f = replay_iteration(config(model, topology, pipeline_plan(PipelineSchedule::one_f_one_b, p, m)));
  const auto inter = replay_iteration(config(model, topology, pipeline_plan(PipelineSchedule::interleaved, p, m, 2)));
  EXPECT_NEAR(one_f.iteration_s, gpipe.iteration_s, 0.01 * gpipe.iteration_s);
  // Narayanan et al. SC21: the interleaved bubble is (p - 1) / (v m) of the ideal time.
  EXPECT_NEAR(inter.pipeline_bubble_s / inter.compute_s, double(p - 1) / (2.0 * m), 0.05 * (p - 1) / (2.0 * m));
  EXPECT_LT(inter.iteration_s, one_f.iteration_s);
}

// The bubble of the reported rank (the first stage under 1F1B: it finishes last) splits into the
// schedule's fill and drain and what its stage has less work than the busiest. A first stage
// that is the busiest has no imbalance; one of 1 block against 3 on the others waits 2 blocks'
// forward and backward per micro-batch beyond the fill and drain.
TEST(TrainingReplay, TheBubbleSaysWhatStageImbalanceAddsToFillAndDrain) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = uniform_model(10);
  const int p = 4, m = 8;
  ParallelPlan plan = pipeline_plan(PipelineSchedule::one_f_one_b, p, m);
  plan.stage_layers = {4, 2, 2, 2};  // the reported first stage is the busiest: nothing to add
  const auto heavy_first = replay_iteration(config(model, topology, plan));
  EXPECT_EQ(heavy_first.pipeline_imbalance_s, 0);
  plan.stage_layers = {1, 3, 3, 3};
  const auto light_first = replay_iteration(config(model, topology, plan));
  const double per_block = light_first.compute_s / (1.0 * m);  // the first stage's block, forward and backward
  EXPECT_NEAR(light_first.pipeline_imbalance_s, 2 * m * per_block, 0.01 * 2 * m * per_block);
  EXPECT_LE(light_first.pipeline_imbalance_s, light_first.pipeline_bubble_s);
  // What is left is the fill and drain: one micro-batch through every stage but a busiest one,
  // (1 + 3 + 3 + 3 - 3) blocks.
  EXPECT_NEAR(light_first.pipeline_bubble_s - light_first.pipeline_imbalance_s, 7 * per_block, 0.05 * 7 * per_block);
  EXPECT_NEAR(sum_of_parts(light_first), light_first.iteration_s, 1e-6 * light_first.iteration_s);
}

// Megatron's pipeline exchange waits for its requests and synchronizes the device
// (p2p_communication.py): a stage starts its next pass only when its send has arrived. The first
// stage of a 1F1B pipeline (the rank that finishes last) sends one activation per micro-batch,
// so its blocked time is the busy time of its sends when they run beside compute instead.
TEST(TrainingReplay, BlockingPipelineSendsHoldTheSendersNextPass) {
  const network::Topology topology = dgx_cluster(1);
  ModelGraph model = uniform_model(8);
  for (Layer& l : model.layers) l.activation_elements = 64e6;  // 128 MB of fp16 per micro-batch
  const int p = 2, m = 4;
  ParallelPlan overlapped_plan = pipeline_plan(PipelineSchedule::one_f_one_b, p, m);
  overlapped_plan.overlap_p2p = true;
  const auto blocking = replay_iteration(config(model, topology, pipeline_plan(PipelineSchedule::one_f_one_b, p, m)));
  const auto overlapped = replay_iteration(config(model, topology, overlapped_plan));
  ASSERT_EQ(blocking.critical_rank, 0);
  ASSERT_EQ(overlapped.critical_rank, 0);
  EXPECT_EQ(overlapped.pipeline_comm_s, 0);
  EXPECT_GT(overlapped.pipeline_comm_busy_s, 0);
  EXPECT_NEAR(blocking.pipeline_comm_s, overlapped.pipeline_comm_busy_s, 0.01 * overlapped.pipeline_comm_busy_s);
  EXPECT_GT(blocking.iteration_s, overlapped.iteration_s);
  EXPECT_NEAR(sum_of_parts(blocking), blocking.iteration_s, 1e-6 * blocking.iteration_s);
  EXPECT_NEAR(sum_of_parts(overlapped), overlapped.iteration_s, 1e-6 * overlapped.iteration_s);
  // Without a pipeline nothing is sent.
  const auto alone = replay_iteration(config(model, topology, pipeline_plan(PipelineSchedule::one_f_one_b, 1, m)));
  EXPECT_EQ(alone.pipeline_comm_s, 0);
}

TEST(TrainingReplay, DataParallelTimeLiesBetweenOverlappedAndExposedBounds) {
  const network::Topology topology = dgx_cluster(4, 100);
  const ModelGraph model = bert_large(128);
  ParallelPlan plan;
  plan.data = 32;
  plan.micro_batch_size = 16;
  plan.precision = Precision::fp16;
  plan.optimizer = Optimizer::adam;
  TrainingConfig c = config(model, topology, plan);
  const auto overlapped = replay_iteration(c);
  c.plan.overlap_grad_reduce = false;
  const auto exposed = replay_iteration(c);
  const double compute = overlapped.compute_s + overlapped.optimizer_s;
  // Lower bound: communication fully hidden; upper bound: compute then every bucket in turn.
  EXPECT_GE(overlapped.iteration_s, compute);
  EXPECT_GE(overlapped.iteration_s, overlapped.dp_comm_busy_s);
  EXPECT_LE(overlapped.iteration_s, compute + exposed.dp_comm_busy_s * 1.0001);
  EXPECT_NEAR(exposed.iteration_s, compute + exposed.dp_comm_busy_s, 1e-6 * exposed.iteration_s);
  EXPECT_LT(overlapped.iteration_s, exposed.iteration_s);
  EXPECT_GT(overlapped.gradient_buckets, 1);
  EXPECT_NEAR(sum_of_parts(overlapped), overlapped.iteration_s, 1e-6 * overlapped.iteration_s);
}

TEST(TrainingReplay, TensorParallelCollectivesCostWhatTheFabricSays) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.tensor = 8;
  plan.precision = Precision::fp16;
  const auto b = replay_iteration(config(model, topology, plan));
  // Per layer two all-reduces forward and two backward (plus the embedding's one each way),
  // each of micro-batch x sequence x hidden x 2 bytes, inside one NVSwitch node.
  network::CollectiveSpec spec;
  spec.bytes = 2048.0 * 2048 * 2;
  for (int i = 0; i < 8; ++i) spec.ranks.push_back(topology.accelerators()[static_cast<std::size_t>(i)]);
  const double one = network::run_collective(topology, spec).time_s;
  const double count = 2 * (2 * 24 + 1);
  EXPECT_NEAR(b.tensor_comm_s, count * one, 1e-6 * count * one);
  // Sequence parallelism moves the same bytes as reduce-scatter + all-gather.
  plan.sequence_parallel = true;
  const auto sp = replay_iteration(config(model, topology, plan));
  EXPECT_NEAR(sp.tensor_comm_s, b.tensor_comm_s, 0.35 * b.tensor_comm_s);
  EXPECT_LT(sp.compute_s, b.compute_s);  // norms and residuals split 8 ways
}

TEST(TrainingReplay, SameConfigurationGivesIdenticalResults) {
  const network::Topology topology = dgx_cluster(4);
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.tensor = 2;
  plan.pipeline = 4;
  plan.data = 4;
  plan.micro_batches = 8;
  plan.precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  const auto a = replay_iteration(config(model, topology, plan));
  const auto b = replay_iteration(config(model, topology, plan));
  EXPECT_EQ(a.iteration_s, b.iteration_s);
  EXPECT_EQ(a.pipeline_bubble_s, b.pipeline_bubble_s);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.simulated_ranks, 4);  // one timeline per pipeline rank, not 32
}

TEST(TrainingReplay, TraceHasALanePerRankAndStreamAndSpansInsideTheIteration) {
  const network::Topology topology = dgx_cluster(2);
  const ModelGraph model = decoder_model("gpt3-350m", 1024);
  ParallelPlan plan;
  plan.tensor = 2;
  plan.pipeline = 4;
  plan.data = 2;
  plan.micro_batches = 4;
  plan.precision = Precision::fp16;
  IterationTrace trace;
  const auto b = replay_iteration(config(model, topology, plan), &trace);
  EXPECT_EQ(trace.lanes.size(), 4u * 5u);  // compute, tensor, 2 pipeline directions, data-parallel
  int passes = 0;
  for (const TraceSpan& s : trace.spans) {
    ASSERT_GE(s.lane, 0);
    ASSERT_LT(s.lane, static_cast<int>(trace.lanes.size()));
    EXPECT_GE(s.start_ns, 0);
    EXPECT_LE(s.start_ns + s.duration_ns, static_cast<std::int64_t>(std::llround(b.iteration_s * 1e9)) + 1);
    if (s.category == "compute" && trace.lanes[static_cast<std::size_t>(s.lane)].thread == "compute") ++passes;
  }
  EXPECT_EQ(passes, 4 * 2 * 4);  // 4 ranks x (forward + backward) x 4 micro-batches
}

TEST(TrainingReplay, ZeroStagesTradeMemoryForCommunication) {
  const network::Topology topology = dgx_cluster(2, 100);
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.data = 16;
  plan.precision = Precision::bf16;
  plan.gradient_precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  double previous_memory = 1e300;
  double zero0_comm = 0;
  // DeepSpeed's ZeRO-3 defaults (1e9 live elements, 1e9 reuse distance, two 5e8-element gradient
  // buckets) are sized for models of many billions of parameters: on 1.3B they would hold more
  // than ZeRO-2 does. With windows scaled to the model, stage 3 is the leanest.
  plan.zero.max_live_parameters = 1e8;
  plan.zero.max_reuse_distance = 1e8;
  plan.zero.reduce_bucket_size = 5e7;
  for (int stage = 0; stage <= 3; ++stage) {
    plan.zero_stage = stage;
    const double mem = peak_memory(model, plan).total();
    EXPECT_LT(mem, previous_memory) << "stage " << stage;
    previous_memory = mem;
    const auto b = replay_iteration(config(model, topology, plan));
    EXPECT_NEAR(sum_of_parts(b), b.iteration_s, 1e-6 * b.iteration_s)
        << "stage " << stage << ": iteration " << b.iteration_s << " compute " << b.compute_s << " gather wait " << b.gather_wait_s << " bubble "
        << b.pipeline_bubble_s << " exposed " << b.exposed_dp_comm_s << " optimizer " << b.optimizer_s;
    if (stage == 0) zero0_comm = b.dp_comm_busy_s;
    // ZeRO-3 gathers the parameters twice per step and reduce-scatters the gradients: 1.5 x
    // the bytes of an all-reduce (Rajbhandari et al. 2020, sec. 7.2.2).
    if (stage == 3) {
      EXPECT_GT(b.dp_comm_busy_s, 1.3 * zero0_comm);
    }
    if (stage > 0) {
      EXPECT_LT(b.optimizer_s, 0.1 * b.compute_s);  // the optimizer step is sharded 16 ways
    }
  }
}

TEST(TrainingReplay, ExpertParallelAllToAllsRunOverTheExpertGroup) {
  const network::Topology topology = dgx_cluster(2);
  const ModelGraph model = decoder_model("mixtral-8x7b", 1024);
  ParallelPlan plan;
  plan.data = 16;
  plan.expert = 8;
  plan.precision = Precision::bf16;
  plan.recompute = Recompute::full;
  const auto b = replay_iteration(config(model, topology, plan));
  EXPECT_GT(b.expert_comm_s, 0);
  EXPECT_NEAR(sum_of_parts(b), b.iteration_s, 1e-6 * b.iteration_s);
}

TEST(TrainingReplay, MfuIsModelFlopsOverPeak) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.data = 8;
  plan.micro_batch_size = 4;
  plan.precision = Precision::fp16;
  const TrainingConfig c = config(model, topology, plan);
  const auto b = replay_iteration(c);
  const double flops = model.training_flops_per_sample() * 32;
  EXPECT_DOUBLE_EQ(b.model_flops_per_iteration, flops);
  EXPECT_NEAR(b.mfu, flops / b.iteration_s / 8 / c.device.peak(Precision::fp16), 1e-12);
  EXPECT_GT(b.mfu, 0.05);
  EXPECT_LT(b.mfu, c.profile.matmul_efficiency);  // never above what the roofline allows
  EXPECT_NEAR(b.tokens_per_s, b.samples_per_s * 2048, 1e-9 * b.tokens_per_s);
}

}  // namespace
}  // namespace dlsim::models

namespace dlsim::models {
namespace {

TEST(JobPerformance, ReplaysOnceAndTellsConfigurationsApart) {
  const network::Topology topology = dgx_cluster(1);
  const ModelGraph model = decoder_model("gpt3-125m", 1024);
  ParallelPlan plan;
  plan.data = 8;
  plan.precision = Precision::fp16;
  TrainingConfig c = config(model, topology, plan);
  JobPerformanceCache cache;
  const double first = cache.get(c, "1 x dgx").iteration_s;
  EXPECT_EQ(cache.get(c, "1 x dgx").iteration_s, first);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  c.plan.micro_batch_size = 2;
  EXPECT_GT(cache.get(c, "1 x dgx").iteration_s, first);
  EXPECT_EQ(cache.size(), 2u);
  const ModelGraph longer = decoder_model("gpt3-125m", 2048);  // same name, other sequence length
  c.model = &longer;
  cache.get(c, "1 x dgx");
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.find(JobKey::of(c, "1 x dgx")), nullptr);
  EXPECT_EQ(cache.find(JobKey::of(c, "2 x dgx")), nullptr);
}

}  // namespace
}  // namespace dlsim::models
