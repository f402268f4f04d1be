// Context parallelism (plan.context): every sequence split over the context group, ring
// attention's key/value exchange pipelined with the attention kernels, gradients reduced over
// data x context ranks.
#include <gtest/gtest.h>

#include <string>

#include "models/iteration_program.hpp"
#include "models/layer_kernels.hpp"
#include "models/memory_model.hpp"
#include "models/parallel_plan.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

using test::config;
using test::dgx_cluster;
using test::sum_of_parts;

ModelGraph flash_decoder(const std::string& name, int sequence_length) {
  DecoderConfig c = decoder_config(name);
  c.flash_attention = true;
  return decoder_transformer(c, sequence_length);
}

ParallelPlan cp_plan(int tensor, int context, int data = 1) {
  ParallelPlan plan;
  plan.tensor = tensor;
  plan.sequence_parallel = tensor > 1;
  plan.context = context;
  plan.data = data;
  plan.micro_batch_size = 1;
  plan.micro_batches = 2;
  plan.precision = Precision::bf16;
  plan.gradient_precision = Precision::bf16;
  plan.optimizer = Optimizer::adam;
  return plan;
}

std::string rejection(const ParallelPlan& plan, const ModelGraph& model) {
  try {
    validate_plan(plan, model, plan.devices());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ContextParallel, CountsInTheDevicesAndTheGradientReplicas) {
  const ParallelPlan plan = cp_plan(2, 4, 3);
  EXPECT_EQ(plan.devices(), 24);
  EXPECT_EQ(plan.gradient_replicas(), 12);
  // Default order: tensor innermost, then context, pipeline, data.
  EXPECT_EQ(global_rank(plan, 0, 0, 1, 0), 1);
  EXPECT_EQ(global_rank(plan, 0, 0, 0, 1), 2);
  EXPECT_EQ(global_rank(plan, 1, 0, 0, 0), 8);
  EXPECT_EQ(global_rank(plan, 2, 0, 1, 3), 16 + 6 + 1);
}

TEST(ContextParallel, RefusesWhatItCannotSplit) {
  const ModelGraph flash = flash_decoder("gpt3-1.3b", 2048);
  EXPECT_EQ(rejection(cp_plan(1, 2), flash), "");
  // 2c chunks per sequence: 2048 tokens do not split into 2 x 3 chunks.
  EXPECT_EQ(rejection(cp_plan(1, 3), flash).rfind("plan.context: splits each sequence into 2 x context = 6 chunks", 0), 0u);
  // Unfused attention keeps the score matrix: ring attention needs the fused kernel.
  const ModelGraph unfused = decoder_model("gpt3-1.3b", 2048);
  EXPECT_NE(rejection(cp_plan(1, 2), unfused).find("set attention: flash"), std::string::npos);
  // No attention at all.
  EXPECT_NE(rejection(cp_plan(1, 2), resnet50()).find("has no attention layer"), std::string::npos);
  ParallelPlan zero3 = cp_plan(1, 2, 2);
  zero3.zero_stage = 3;
  EXPECT_EQ(rejection(zero3, flash).rfind("plan.context: is not modelled with ZeRO-3", 0), 0u);
  ParallelPlan wrong = cp_plan(1, 2);
  EXPECT_EQ(rejection(wrong, flash), "");
  EXPECT_THROW(validate_plan(wrong, flash, 4), std::invalid_argument);  // 1 x 1 x 1 x 2 = 2 accelerators
}

TEST(ContextParallel, EachRankDoesItsShareOfEveryLayer) {
  const ModelGraph model = flash_decoder("gpt3-1.3b", 2048);
  const ParallelPlan whole = cp_plan(1, 1), split = cp_plan(1, 4);
  for (const Layer& layer : model.layers) {
    const Layer a = rank_share(layer, whole), b = rank_share(layer, split);
    EXPECT_NEAR(b.forward_flops, a.forward_flops / 4, 1e-9 * a.forward_flops) << layer.name;
    EXPECT_NEAR(b.activation_elements, a.activation_elements / 4, 1e-9 * a.activation_elements) << layer.name;
    EXPECT_EQ(b.parameters, a.parameters) << layer.name;  // every context rank holds the whole layer
    if (layer.kind == LayerKind::attention) {
      EXPECT_EQ(b.attention.ring_steps, 4);
      EXPECT_EQ(b.attention.query_length, 512);
      EXPECT_EQ(b.attention.key_length, 512);
    }
  }
}

TEST(ContextParallel, RingStepsCostMoreThanAnEvenShareOfTheAttention) {
  const Catalog catalog = Catalog::builtin();
  const DeviceSpec device = *catalog.find_device("A100-80GB");
  DeviceProfile profile;  // attention is timed from the device's figures; a GEMM profile makes it kernel-level
  profile.kernels.gemm[static_cast<std::size_t>(Precision::bf16)].peak_fraction = 1;
  const ModelGraph model = flash_decoder("gpt3-1.3b", 2048);
  for (const Layer& layer : model.layers) {
    if (layer.kind != LayerKind::attention) continue;
    const LayerKernelTimes whole = layer_kernel_times(rank_share(layer, cp_plan(1, 1)), 1, Precision::bf16, device, profile);
    const LayerKernelTimes split = layer_kernel_times(rank_share(layer, cp_plan(1, 4)), 1, Precision::bf16, device, profile);
    EXPECT_EQ(split.forward.kernels, 4);  // one kernel per ring step
    // The same FLOPs in 4 smaller kernels: at least an even share, less than the whole.
    EXPECT_GT(split.forward.seconds, whole.forward.seconds / 4);
    EXPECT_LT(split.forward.seconds, whole.forward.seconds);
    EXPECT_GT(split.backward.seconds, whole.backward.seconds / 4);
    break;
  }
}

TEST(ContextParallel, AttentionRunsWithItsRingExchange) {
  const ModelGraph model = flash_decoder("gpt3-1.3b", 2048);
  const TrainingConfig c = config(model, dgx_cluster(1), cp_plan(2, 4));
  const IterationProgram program = build_iteration_program(model, c.plan, c.device, c.profile);
  const StageProgram& stage = program.stages.front();
  int attention_layers = 0;
  for (const Layer& l : model.layers) attention_layers += l.kind == LayerKind::attention ? 1 : 0;
  for (const PassProgram* pass : {&stage.forward, &stage.backward}) {
    int rings = 0;
    double compute = 0, overlapped = 0, bytes = 0;
    for (const Segment& s : pass->segments) {
      if (s.kind == SegmentKind::context) {
        ++rings;
        overlapped += s.overlap_s;
        bytes = s.bytes;
        EXPECT_EQ(s.collective, network::CollectiveKind::all_gather);
      }
      if (s.kind == SegmentKind::compute) compute += s.seconds;
    }
    EXPECT_EQ(rings, attention_layers);
    EXPECT_GT(overlapped, 0);
    EXPECT_NEAR(compute + overlapped, pass->compute_s, 1e-9 * pass->compute_s);  // kernels moved, not lost
    // K and V of this rank's 512 tokens on its tensor rank (kv heads / 2), gathered from 4 ranks;
    // backward passes their gradients too.
    const DecoderConfig d = decoder_config("gpt3-1.3b");
    const double block = 2.0 * decoder_kv_features(d) / 2 * 512 * 2;
    EXPECT_NEAR(bytes, block * 4 * (pass == &stage.backward ? 2 : 1), 1e-9 * bytes);
  }
}

TEST(ContextParallel, SplitsTheComputeAndReducesGradientsOverContextRanks) {
  const ModelGraph model = flash_decoder("llama3-8b", 8192);
  const network::Topology topology = dgx_cluster(1);
  const IterationBreakdown alone = replay_iteration(config(model, topology, cp_plan(2, 1)));
  const IterationBreakdown ring = replay_iteration(config(model, topology, cp_plan(2, 4)));
  EXPECT_NEAR(sum_of_parts(ring), ring.iteration_s, 1e-6 * ring.iteration_s);
  // A quarter of the tokens each: about a quarter of the compute, a little more (smaller kernels).
  EXPECT_GT(ring.compute_s, alone.compute_s / 4);
  EXPECT_LT(ring.compute_s, alone.compute_s / 4 * 1.5);
  EXPECT_GE(ring.context_comm_s, 0);
  EXPECT_EQ(alone.context_comm_s, 0);
  // The four context ranks hold the same parameters: their gradients are all-reduced.
  EXPECT_EQ(alone.dp_comm_busy_s, 0);
  EXPECT_GT(ring.dp_comm_busy_s, 0);
  EXPECT_GT(ring.gradient_wire_bytes, 0);
  // The same samples per iteration on 4x the devices, faster.
  EXPECT_LT(ring.iteration_s, alone.iteration_s);
  EXPECT_NEAR(ring.model_flops_per_iteration, alone.model_flops_per_iteration, 1e-9 * alone.model_flops_per_iteration);
  // Same configuration, same result, bit for bit.
  const IterationBreakdown again = replay_iteration(config(model, topology, cp_plan(2, 4)));
  EXPECT_EQ(again.iteration_s, ring.iteration_s);
}

TEST(ContextParallel, RingsAcrossNodesExposeMoreThanRingsInside) {
  const ModelGraph model = flash_decoder("llama3-8b", 8192);
  const network::Topology topology = dgx_cluster(2, 100);
  ParallelPlan inside = cp_plan(2, 4, 2);   // ranks t + 2c: a context group in one node
  ParallelPlan across = inside;
  across.order = {Axis::tensor, Axis::data, Axis::pipeline, Axis::context};  // c outermost: across nodes
  const IterationBreakdown a = replay_iteration(config(model, topology, inside));
  const IterationBreakdown b = replay_iteration(config(model, topology, across));
  EXPECT_GT(b.context_comm_s, a.context_comm_s);
  EXPECT_NEAR(b.compute_s, a.compute_s, 1e-9 * a.compute_s);
}

TEST(ContextParallel, ActivationsSplitWithTheTokens) {
  const ModelGraph model = flash_decoder("llama3-8b", 8192);
  const MemoryBreakdown alone = peak_memory(model, cp_plan(1, 1));
  const MemoryBreakdown ring = peak_memory(model, cp_plan(1, 4));
  EXPECT_NEAR(ring.activations, alone.activations / 4, 1e-6 * alone.activations);
  EXPECT_EQ(ring.weights, alone.weights);
  ParallelPlan sharded = cp_plan(1, 4);
  sharded.zero_stage = 1;  // the distributed optimizer shards over data x context ranks
  EXPECT_NEAR(peak_memory(model, sharded).optimizer_state, ring.optimizer_state / 4, 1e-6 * ring.optimizer_state);
}

}  // namespace
}  // namespace dlsim::models
