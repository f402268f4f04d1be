#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/iteration_program.hpp"
#include "models/memory_model.hpp"
#include "models/parallel_plan.hpp"
#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

std::string rejection(const ParallelPlan& plan, const ModelGraph& model, int devices) {
  try {
    validate_plan(plan, model, devices);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(ParallelPlan, RejectsSizesThatDoNotMultiplyToTheDevices) {
  ParallelPlan plan;
  plan.tensor = 8;
  plan.pipeline = 2;
  plan.data = 2;
  const std::string why = rejection(plan, decoder_model("gpt3-1.3b"), 64);
  EXPECT_NE(why.find("8 x 2 = 32"), std::string::npos) << why;
  EXPECT_NE(why.find("cluster has 64"), std::string::npos) << why;
}

// Blocks of each stage, read back from the partition (a layer's block index, -1 outside blocks).
std::vector<int> blocks_per_stage(const ParallelPlan& plan, const ModelGraph& model) {
  std::vector<int> out;
  for (const LayerRange& r : stage_partition(plan, model)) {
    std::set<int> blocks;
    for (int i = r.first; i < r.last; ++i) {
      if (model.layers[static_cast<std::size_t>(i)].block >= 0) blocks.insert(model.layers[static_cast<std::size_t>(i)].block);
    }
    out.push_back(static_cast<int>(blocks.size()));
  }
  return out;
}

TEST(ParallelPlan, BlocksThatDoNotDivideGoToTheMiddleStagesFirst) {
  ParallelPlan plan;
  plan.pipeline = 5;
  const ModelGraph model = decoder_model("gpt3-1.3b");  // 24 layers: 4 each, 4 more
  EXPECT_EQ(rejection(plan, model, 5), "");
  EXPECT_EQ(blocks_per_stage(plan, model), (std::vector<int>{4, 5, 5, 5, 5}));
  plan.pipeline = 16;
  const ModelGraph llama = decoder_model("llama3-405b");  // 126 layers over 16 stages: the Llama 3 paper's split
  EXPECT_EQ(stage_blocks(plan, llama), (std::vector<int>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}));
  plan.pipeline = 25;
  const std::string why = rejection(plan, model, 25);
  EXPECT_NE(why.find("24 blocks"), std::string::npos) << why;
  EXPECT_EQ(why.rfind("plan.pipeline", 0), 0u) << why;
}

TEST(ParallelPlan, StageSplitsAsMegatronStatesThem) {
  const ModelGraph model = decoder_model("gpt3-1.3b");  // 24 layers
  ParallelPlan plan;
  plan.pipeline = 4;
  plan.stage_layers = {5, 7, 7, 5};
  EXPECT_EQ(blocks_per_stage(plan, model), (std::vector<int>{5, 7, 7, 5}));
  plan.stage_layers = {0, 12, 12, 0};  // the ends hold only the embedding, and the head and loss
  EXPECT_EQ(rejection(plan, model, 4), "");
  EXPECT_EQ(blocks_per_stage(plan, model), (std::vector<int>{0, 12, 12, 0}));
  EXPECT_EQ(stage_partition(plan, model).back().last, static_cast<int>(model.layers.size()));
  plan.stage_layers = {6, 0, 12, 6};
  EXPECT_NE(rejection(plan, model, 4).find("plan.stage_layers: stage 1 has 0"), std::string::npos);
  plan.stage_layers = {6, 6, 6};
  EXPECT_NE(rejection(plan, model, 4).find("lists 3 stages, the plan has 4"), std::string::npos);
  plan.stage_layers = {6, 6, 6, 7};
  EXPECT_NE(rejection(plan, model, 4).find("adds up to 25"), std::string::npos);
  plan.stage_layers.clear();
  plan.first_stage_layers = 3;  // Megatron-Core's --decoder-first-pipeline-num-layers: 21 left over 3 stages
  EXPECT_EQ(blocks_per_stage(plan, model), (std::vector<int>{3, 7, 7, 7}));
  plan.last_stage_layers = 4;  // 17 left over 2 stages: does not divide
  EXPECT_NE(rejection(plan, model, 4).find("17 left"), std::string::npos) << rejection(plan, model, 4);
  plan.first_stage_layers = plan.last_stage_layers = 0;
  plan.account_for_embedding = plan.account_for_loss = true;  // 26 units over 4 stages: no
  EXPECT_NE(rejection(plan, model, 4).find("26 do not divide"), std::string::npos) << rejection(plan, model, 4);
  plan.account_for_loss = false;  // 25 over 5 stages: the first stage one layer short
  plan.pipeline = 5;
  EXPECT_EQ(blocks_per_stage(plan, model), (std::vector<int>{4, 5, 5, 5, 5}));
  plan.first_stage_layers = 4;
  EXPECT_NE(rejection(plan, model, 5).find("give one way"), std::string::npos);
}

TEST(ParallelPlan, InterleavedStagesSplitOverVirtualStages) {
  const ModelGraph model = decoder_model("gpt3-1.3b");
  ParallelPlan plan;
  plan.pipeline = 2;
  plan.virtual_stages = 5;  // 24 over 10 virtual stages
  plan.schedule = PipelineSchedule::interleaved;
  plan.micro_batches = 2;
  EXPECT_EQ(rejection(plan, model, 2), "");
  const auto counts = blocks_per_stage(plan, model);
  EXPECT_EQ(counts, (std::vector<int>{2, 3, 3, 3, 3, 2, 2, 2, 2, 2}));
}

TEST(ParallelPlan, RejectsTensorParallelismWithoutALayoutAndOtherMismatches) {
  ParallelPlan plan;
  plan.tensor = 2;
  EXPECT_NE(rejection(plan, resnet50(), 2).find("no tensor-parallel layout"), std::string::npos);
  ParallelPlan moe;
  moe.expert = 2;
  moe.data = 2;
  EXPECT_NE(rejection(moe, decoder_model("gpt3-125m"), 2).find("no mixture-of-experts"), std::string::npos);
  ParallelPlan inter;
  inter.pipeline = 4;
  inter.schedule = PipelineSchedule::interleaved;
  inter.virtual_stages = 2;
  inter.micro_batches = 6;
  EXPECT_NE(rejection(inter, decoder_model("gpt3-1.3b"), 4).find("multiple of pipeline"), std::string::npos);
  ParallelPlan zero;
  zero.pipeline = 2;
  zero.zero_stage = 3;
  EXPECT_NE(rejection(zero, decoder_model("gpt3-1.3b"), 2).find("ZeRO stage 3"), std::string::npos);
  EXPECT_EQ(rejection(ParallelPlan{}, resnet50(), 1), "");
}

TEST(ParallelPlan, StagesCutAtBlocksWithEmbeddingFirstAndHeadLast) {
  const ModelGraph model = decoder_model("gpt3-1.3b");
  ParallelPlan plan;
  plan.pipeline = 4;
  const auto stages = stage_partition(plan, model);
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[0].first, 0);
  EXPECT_EQ(stages[3].last, static_cast<int>(model.layers.size()));
  for (std::size_t s = 1; s < stages.size(); ++s) EXPECT_EQ(stages[s].first, stages[s - 1].last);
  EXPECT_EQ(model.layers[static_cast<std::size_t>(stages[1].first)].block, 6);
  EXPECT_EQ(model.layers[0].block, -1);  // the embedding joins the first stage
}

TEST(ParallelPlan, CnnStagesBalanceForwardFlops) {
  const ModelGraph model = resnet50();
  ParallelPlan plan;
  plan.pipeline = 4;
  const auto stages = stage_partition(plan, model);
  double most = 0, total = model.forward_flops_per_sample();
  for (const auto& r : stages) {
    double f = 0;
    for (int i = r.first; i < r.last; ++i) f += model.layers[static_cast<std::size_t>(i)].forward_flops;
    most = std::max(most, f);
    EXPECT_LT(r.first, r.last);
  }
  EXPECT_LT(most, 0.4 * total);  // no stage far above a quarter
}

TEST(ParallelPlan, DefaultPlacementPutsTensorInsideAndDataOutside) {
  ParallelPlan plan;
  plan.tensor = 8;
  plan.pipeline = 16;
  plan.data = 8;
  EXPECT_EQ(global_rank(plan, 0, 0, 7), 7);
  EXPECT_EQ(global_rank(plan, 0, 1, 0), 8);
  EXPECT_EQ(global_rank(plan, 1, 0, 0), 128);
  plan.order = {Axis::tensor, Axis::data, Axis::pipeline};  // Megatron's own rank order
  EXPECT_EQ(global_rank(plan, 1, 0, 0), 8);
  EXPECT_EQ(global_rank(plan, 0, 1, 0), 64);
}

// GPT-3 175B, mixed precision with Adam, on A100-80GB.
TEST(MemoryModel, Gpt3DataParallelOnlyDoesNotFitAndMegatronsPlanDoes) {
  const ModelGraph model = decoder_model("gpt3-175b", 2048);
  const double capacity = Catalog::builtin().find_device("A100-80GB")->memory_bytes;
  ParallelPlan dp;
  dp.data = 8;
  dp.precision = Precision::fp16;
  dp.optimizer = Optimizer::adam;
  validate_plan(dp, model, 8);
  const MemoryBreakdown dp_mem = peak_memory(model, dp);
  EXPECT_GT(dp_mem.total(), 20 * capacity);          // ~175e9 x 18 bytes before activations
  EXPECT_NEAR(dp_mem.weights + dp_mem.gradients + dp_mem.optimizer_state, model.parameters() * 18, 0.01 * model.parameters() * 18);

  ParallelPlan megatron;                              // Narayanan et al. SC21
  megatron.tensor = 8;
  megatron.pipeline = 16;
  megatron.data = 8;
  megatron.micro_batches = 64;
  megatron.micro_batch_size = 1;
  megatron.precision = Precision::fp16;
  megatron.optimizer = Optimizer::adam;
  megatron.recompute = Recompute::full;
  validate_plan(megatron, model, 1024);
  const MemoryBreakdown mem = peak_memory(model, megatron);
  EXPECT_LT(mem.total(), capacity) << describe(mem);
  // Without recomputation the first stage keeps 16 micro-batches of every layer's activations
  // instead of one hidden state per layer.
  const double kept_with_recompute = mem.activations;
  megatron.recompute = Recompute::none;
  EXPECT_GT(peak_memory(model, megatron).activations, 5 * kept_with_recompute);
}

TEST(MemoryModel, ActivationsFollowTheScheduleAndRecomputation) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.pipeline = 4;
  plan.micro_batches = 16;
  plan.schedule = PipelineSchedule::gpipe;
  const double gpipe = memory_per_rank(model, plan)[1].activations;
  plan.schedule = PipelineSchedule::one_f_one_b;
  const double one_f = memory_per_rank(model, plan)[1].activations;
  EXPECT_NEAR(gpipe / one_f, 16.0 / 3.0, 0.01);  // rank 1 holds m vs p - 1 micro-batches
  plan.recompute = Recompute::selective;
  const double selective = memory_per_rank(model, plan)[1].activations;
  plan.recompute = Recompute::full;
  const double full = memory_per_rank(model, plan)[1].activations;
  EXPECT_LT(selective, one_f);
  EXPECT_LT(full, selective);
}

// Selective recomputation drops each block's attention core and rebuilds one block's core at a
// time in backward: it holds (held micro-batches) x (kept without the cores) + one core, so it
// saves (held - 1 / blocks) x the cores of the stage, never more than it drops. It used to add a
// whole block's activations as its working set, so that with FlashAttention (whose core keeps
// little) selective needed more memory than no recomputation.
TEST(MemoryModel, SelectiveRecomputationRebuildsOneAttentionCoreAtATime) {
  const ModelGraph unfused = decoder_model("gpt3-1.3b", 2048);
  DecoderConfig c = decoder_config("gpt3-1.3b");
  c.flash_attention = true;
  const ModelGraph flash = decoder_transformer(c, 2048);
  ParallelPlan plan;
  plan.pipeline = 4;
  plan.micro_batches = 16;
  plan.precision = Precision::fp16;
  for (const ModelGraph* model : {&unfused, &flash}) {
    plan.recompute = Recompute::none;
    const double none = memory_per_rank(*model, plan)[1].activations;
    plan.recompute = Recompute::selective;
    const double selective = memory_per_rank(*model, plan)[1].activations;
    // Stage 1's 6 blocks, 3 micro-batches held under 1F1B on rank 1 (p - 1 - r + 1).
    double core = 0;
    const LayerRange r = stage_partition(plan, *model)[1];
    for (int i = r.first; i < r.last; ++i) {
      const Layer& l = model->layers[static_cast<std::size_t>(i)];
      if (l.attention_core) core += saved_elements(l);
    }
    const double per_block_core = core / 6 * 2;  // fp16 bytes
    EXPECT_NEAR(none - selective, (3 * 6 - 1) * per_block_core, 1e-6 * none) << model->name;
    EXPECT_LE(selective, none) << model->name;
  }
}

TEST(MemoryModel, TheOutputLayerAndLossAreHeldForOneMicroBatchExceptUnderGPipe) {
  // An unfused cross-entropy keeps the FP32 softmax of the logits (2 x s x v 16-bit elements per
  // sequence) on the last stage. Its backward follows its forward at once under 1F1B, so one
  // micro-batch's worth is held however many are in flight on that rank; GPipe holds them all.
  DecoderConfig c = decoder_config("gpt3-1.3b");
  const ModelGraph fused = decoder_transformer(c, 2048);
  c.fused_cross_entropy = false;
  c.cross_entropy_in_fp32 = true;
  const ModelGraph unfused = decoder_transformer(c, 2048);
  const double softmax_bytes = 2.0 * 2048 * 50257 * 2;  // 2 s v elements of 2 bytes
  ParallelPlan plan;
  plan.pipeline = 4;
  plan.micro_batches = 16;
  plan.precision = Precision::fp16;
  for (const PipelineSchedule schedule : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved}) {
    plan.schedule = schedule;
    plan.virtual_stages = schedule == PipelineSchedule::interleaved ? 2 : 1;
    const double added = memory_per_rank(unfused, plan)[3].activations - memory_per_rank(fused, plan)[3].activations;
    EXPECT_NEAR(added, softmax_bytes, 1e-9 * softmax_bytes) << to_string(schedule);
  }
  plan.schedule = PipelineSchedule::gpipe;
  plan.virtual_stages = 1;
  const double added = memory_per_rank(unfused, plan)[3].activations - memory_per_rank(fused, plan)[3].activations;
  EXPECT_NEAR(added, 16 * softmax_bytes, 1e-9 * softmax_bytes);
}

// Megatron's --recompute-method block --recompute-num-layers N: the first N blocks of each
// stage recompute in full, the others keep their activations. GPT-3 1.3B's 24 identical layers
// over 4 stages put 6 in each; stage 1 holds no embedding or loss.
TEST(ParallelPlan, RecomputeLayersRecomputesTheFirstBlocksOfEachStageOnly) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  const Catalog catalog = Catalog::builtin();
  const DeviceSpec device = *catalog.find_device("A100-80GB");
  const DeviceProfile profile = *catalog.find_profile("A100-80GB");
  ParallelPlan plan;
  plan.pipeline = 4;
  plan.micro_batches = 8;
  plan.precision = Precision::fp16;
  const auto recompute_flops = [&](const ParallelPlan& p) {
    return build_iteration_program(model, p, device, profile).stages[1].recompute_flops;
  };
  const double none_memory = memory_per_rank(model, plan)[1].activations;
  plan.recompute = Recompute::full;
  const double full_flops = recompute_flops(plan);
  const double full_memory = memory_per_rank(model, plan)[1].activations;
  plan.recompute_layers = 3;
  validate_plan(plan, model, 4);
  EXPECT_NEAR(recompute_flops(plan), full_flops / 2, 1e-9 * full_flops);
  const double half_memory = memory_per_rank(model, plan)[1].activations;
  EXPECT_GT(half_memory, full_memory);
  EXPECT_LT(half_memory, none_memory);
  plan.recompute_layers = 6;  // every block of the stage: full recomputation as it is
  EXPECT_DOUBLE_EQ(recompute_flops(plan), full_flops);
  EXPECT_DOUBLE_EQ(memory_per_rank(model, plan)[1].activations, full_memory);
  // It counts what full recomputation re-runs, and is not modelled with ZeRO-3.
  plan.recompute_layers = 3;
  plan.recompute = Recompute::selective;
  EXPECT_NE(rejection(plan, model, 4).find("needs recompute: full"), std::string::npos) << rejection(plan, model, 4);
  ParallelPlan zero3;
  zero3.data = 4;
  zero3.zero_stage = 3;
  zero3.recompute = Recompute::full;
  zero3.recompute_layers = 2;
  EXPECT_NE(rejection(zero3, model, 4).find("ZeRO-3"), std::string::npos) << rejection(zero3, model, 4);
}

}  // namespace
}  // namespace dlsim::models
