// ZeRO-3 / FSDP (zero3_schedule.hpp, zero3_stream.hpp): per-module gathers and their sizes, the
// persistence threshold, the prefetch window against live parameters and memory, re-gathers in
// backward and for recomputation, DeepSpeed's activation-checkpointing options in memory and
// time, and the replay's single data-parallel stream.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/catalog.hpp"
#include "models/iteration_program.hpp"
#include "models/memory_model.hpp"
#include "models/training_replay.hpp"
#include "models/zero3_schedule.hpp"
#include "models/zero3_stream.hpp"
#include "models/zoo.hpp"
#include "network/topology_builders.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

using network::CollectiveKind;

// GPT-3 1.3B: hidden h = 2048, 24 layers, vocabulary 50257, 2048 positions, tied head.
constexpr double kH = 2048;
constexpr int kLayers = 24;
constexpr double kTable = (50257.0 + 2048.0) * kH;

ParallelPlan zero3(DeepSpeedFetch fetch = DeepSpeedFetch::per_parameter) {
  ParallelPlan p;
  p.data = 16;
  p.zero_stage = 3;
  p.precision = Precision::fp16;
  p.gradient_precision = Precision::fp16;
  p.optimizer = Optimizer::adam;
  p.zero.fetch = fetch;
  return p;
}

Zero3Schedule schedule(const ModelGraph& model, const ParallelPlan& plan) {
  return build_zero3_schedule(model, plan, {0, static_cast<int>(model.layers.size())}, ZeroHostCosts{});
}

std::vector<double> sizes(const ZeroPass& pass, CollectiveKind kind) {
  std::vector<double> out;
  for (const ZeroCollective& c : pass.collectives) {
    if (c.kind == kind) out.push_back(c.bytes);
  }
  return out;
}

TEST(Zero3Schedule, ModulesAreLinearWeightsAndBiasesAndLayerNormScaleAndShift) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  const ParallelPlan plan = zero3();
  const auto find = [&](const std::string& name) {
    return *std::find_if(model.layers.begin(), model.layers.end(), [&](const Layer& l) { return l.name == name; });
  };
  const Layer qkv = find("decoder.layer.0.attn.qkv");
  EXPECT_EQ(parameter_tensors(rank_share(qkv, plan), qkv), (std::vector<double>{kH * 3 * kH, 3 * kH}));
  const Layer norm = find("decoder.layer.0.attn.norm");
  EXPECT_EQ(parameter_tensors(rank_share(norm, plan), norm), (std::vector<double>{kH, kH}));
  EXPECT_TRUE(parameter_tensors(rank_share(find("decoder.layer.0.attn.softmax"), plan), find("decoder.layer.0.attn.softmax")).empty());
  // Tensor parallelism splits what one rank holds.
  ParallelPlan t4 = plan;
  t4.tensor = 4;
  EXPECT_EQ(parameter_tensors(rank_share(qkv, t4), qkv), (std::vector<double>{kH * 3 * kH / 4, 3 * kH / 4}));
}

TEST(Zero3Schedule, DeepSpeedGathersEachModulesWeightsOnePerParameterWithTheirSizes) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3();
  plan.zero.max_reuse_distance = 0;   // release every module after use: every use gathers
  const Zero3Schedule z = schedule(model, plan);
  // Per use, the qkv, attention-output, up and down weights (biases and LayerNorms are below the
  // persistence threshold of 1e5 elements); the embedding table once (the head is tied to it).
  EXPECT_EQ(z.gathers, 2 * 4 * kLayers + 1);
  const auto forward = sizes(z.forward, CollectiveKind::all_gather);
  ASSERT_GE(forward.size(), 5u);
  EXPECT_DOUBLE_EQ(forward[0], kTable * 2);                    // fp16 bytes of the whole table
  EXPECT_DOUBLE_EQ(forward[1], kH * 3 * kH * 2);               // layer 0 qkv
  EXPECT_DOUBLE_EQ(forward[2], kH * kH * 2);                   // attention output
  EXPECT_DOUBLE_EQ(forward[3], kH * 4 * kH * 2);               // up
  EXPECT_DOUBLE_EQ(forward[4], 4 * kH * kH * 2);               // down
  for (const ZeroCollective& c : z.forward.collectives) EXPECT_EQ(c.tensors, 1);
  // Every tensor's gradient is reduce-scattered, biases and LayerNorms included (12 per layer,
  // the table, the final norm's two).
  EXPECT_EQ(sizes(z.backward, CollectiveKind::reduce_scatter).size(), static_cast<std::size_t>(12 * kLayers + 1 + 2));

  // Coalesced (DeepSpeed since 2022): one all-gather per fetch and one per prefetch, fewer
  // collectives, the same bytes.
  plan.zero.fetch = DeepSpeedFetch::coalesced;
  const Zero3Schedule c = schedule(model, plan);
  const auto total = [](const Zero3Schedule& x) {
    double sum = 0;
    for (const ZeroPass* pass : {&x.forward, &x.backward}) {
      for (double b : sizes(*pass, CollectiveKind::all_gather)) sum += b;
    }
    return sum;
  };
  EXPECT_DOUBLE_EQ(total(c), total(z));
  EXPECT_LT(c.gathers, z.gathers);
}

TEST(Zero3Schedule, TiedWeightsAreHeldFromTheStartOfForwardToTheEndOfBackward) {
  // DeepSpeed's Megatron-LM tutorial registers the tied word embedding as an external parameter
  // of the top module: gathered once, kept even with no reuse allowed.
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3();
  plan.zero.max_reuse_distance = 0;
  const Zero3Schedule z = schedule(model, plan);
  int tables = 0;
  for (const ZeroPass* pass : {&z.forward, &z.backward}) {
    for (double b : sizes(*pass, CollectiveKind::all_gather)) tables += b == kTable * 2;
  }
  EXPECT_EQ(tables, 1);
  EXPECT_GE(z.peak_live_elements, kTable + 4 * kH * kH);   // the table and an MLP weight at once
  // Untied, the head has its own weight and the table is released after the embedding.
  ModelGraph untied = model;
  untied.layers.back().tied_to = -1;
  for (Layer& l : untied.layers) {
    if (l.name == "lm_head") {
      l.tied_to = -1;
      l.parameters = 50257.0 * kH;
    }
  }
  int untied_tables = 0;
  const Zero3Schedule u = schedule(untied, plan);
  for (const ZeroPass* pass : {&u.forward, &u.backward}) {
    for (double b : sizes(*pass, CollectiveKind::all_gather)) untied_tables += b == kTable * 2;
  }
  EXPECT_EQ(untied_tables, 2);   // the embedding's forward and backward
}

TEST(Zero3Schedule, PersistenceThresholdKeepsSmallParametersResident) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3();
  plan.zero.max_reuse_distance = 0;
  const Zero3Schedule base = schedule(model, plan);
  // Biases (6144, 2048, 8192, 2048) and LayerNorms (2 x 2048 per norm) stay gathered.
  const double small = kLayers * (3 * kH + kH + 4 * kH + kH + 4 * kH) + 2 * kH;
  EXPECT_DOUBLE_EQ(base.persistent_elements, small);
  // A threshold above the attention-output weight (h^2 = 4.2M elements) keeps it resident too.
  plan.zero.param_persistence_threshold = 5e6;
  const Zero3Schedule more = schedule(model, plan);
  EXPECT_DOUBLE_EQ(more.persistent_elements, small + kLayers * kH * kH);
  EXPECT_EQ(more.gathers, base.gathers - 2 * kLayers);
  for (double b : sizes(more.forward, CollectiveKind::all_gather)) EXPECT_NE(b, kH * kH * 2);
  // ... and held whole: one rank's weights grow by (1 - 1/d) of them.
  const double grown = peak_memory(model, plan).weights - [&] {
    ParallelPlan p = plan;
    p.zero.param_persistence_threshold = 1e5;
    return peak_memory(model, p).weights;
  }();
  EXPECT_NEAR(grown, kLayers * kH * kH * 2 * (1 - 1.0 / 16), 1.0);
  // Threshold 0: nothing is resident.
  plan.zero.param_persistence_threshold = 0;
  EXPECT_EQ(schedule(model, plan).persistent_elements, 0);
}

TEST(Zero3Schedule, PrefetchWindowLimitsLiveParametersAndMemory) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3();
  plan.zero.max_reuse_distance = 0;       // nothing kept for reuse: the window alone holds parameters
  plan.zero.prefetch_bucket_size = 2e8;   // prefetch far ahead ...
  plan.zero.max_live_parameters = 1e9;
  const Zero3Schedule wide = schedule(model, plan);
  const double wide_memory = peak_memory(model, plan).communication;
  plan.zero.max_live_parameters = 3e7;    // ... unless few parameters may be live
  const Zero3Schedule narrow = schedule(model, plan);
  EXPECT_GT(wide.peak_live_elements, 1e8);
  EXPECT_LT(narrow.peak_live_elements, wide.peak_live_elements / 2);
  // Prefetching starts below the limit and may overshoot it by a bucket and a module.
  EXPECT_LE(narrow.peak_live_elements, 3e7 + 2e8 + kTable);
  EXPECT_LT(peak_memory(model, plan).communication, wide_memory);
  EXPECT_DOUBLE_EQ(peak_memory(model, plan).communication, narrow.peak_buffer_bytes);   // no pipeline buffers
  EXPECT_GE(narrow.peak_buffer_bytes, narrow.peak_live_elements * 2 + narrow.bucket_bytes);
  // FSDP holds the root unit and at most two blocks.
  plan.zero.implementation = ZeroImplementation::fsdp;
  const Zero3Schedule fsdp = schedule(model, plan);
  const double block = 12 * kH * kH + 13 * kH;
  EXPECT_NEAR(fsdp.peak_live_elements, kTable + 2 * kH + 2 * block, 1.0);
}

TEST(Zero3Schedule, BackwardGathersAgainAndRecomputationGathersOnceMore) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3();
  plan.zero.max_reuse_distance = 0;
  const auto backward_gathers = [&](const ParallelPlan& p) {
    return sizes(schedule(model, p).backward, CollectiveKind::all_gather).size();
  };
  const int plain = schedule(model, plan).gathers;
  plan.recompute = Recompute::full;
  EXPECT_EQ(schedule(model, plan).gathers, plain + 4 * kLayers);   // each block's four weights for its forward again
  // Within max_reuse_distance elements a module stays gathered: from the recomputed forward into
  // its backward (DeepSpeed's default 1e9 covers a whole 1.3B block).
  plan.zero.max_reuse_distance = 1e9;
  EXPECT_LT(schedule(model, plan).gathers, plain);
  // FSDP gathers a unit once per backward; recomputation runs on the gathered unit.
  plan.zero.implementation = ZeroImplementation::fsdp;
  plan.recompute = Recompute::none;
  const std::size_t fsdp_plain = backward_gathers(plan);
  plan.recompute = Recompute::full;
  EXPECT_EQ(backward_gathers(plan), fsdp_plain);
  EXPECT_EQ(fsdp_plain, static_cast<std::size_t>(kLayers));
  EXPECT_EQ(sizes(schedule(model, plan).backward, CollectiveKind::reduce_scatter).size(), static_cast<std::size_t>(kLayers + 1));
}

TEST(Zero3Schedule, PerParameterFetchSynchronizesAndCostsTheHostPerRank) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3();
  const ZeroHostCosts host;
  const auto first_gather_host = [&](const ParallelPlan& p) {
    const Zero3Schedule z = schedule(model, p);
    for (const ZeroStep& s : z.forward.steps) {
      for (const ZeroPoint& pt : s.before) {
        if (!pt.issue.empty()) return std::pair{pt.host_s + pt.host_after_s, pt.drain};
      }
    }
    return std::pair{0.0, false};
  };
  const auto [h16, drain16] = first_gather_host(plan);
  EXPECT_TRUE(drain16);
  plan.data = 64;
  const auto [h64, drain64] = first_gather_host(plan);
  EXPECT_TRUE(drain64);
  // The list API: two Python calls and a C++ copy per rank.
  EXPECT_NEAR(h64 - h16, 48 * (2 * host.python_call_s + host.cpp_kernel_s), 1e-12);
  // Coalesced: no device-wide synchronization.
  plan.zero.fetch = DeepSpeedFetch::coalesced;
  for (const ZeroStep& s : schedule(model, plan).forward.steps) {
    for (const ZeroPoint& pt : s.before) EXPECT_FALSE(pt.drain);
  }
}

TEST(Zero3Stream, RunsCollectivesOneAtATimeInIssueOrder) {
  const ZeroCollective a{CollectiveKind::all_gather, 1, 1}, b{CollectiveKind::reduce_scatter, 2, 1};
  Zero3Stream s;
  s.begin_pass();
  s.push(&a);
  s.push(&b);
  EXPECT_EQ(s.needed(true, -1), 2);
  EXPECT_EQ(s.needed(false, 0), 1);
  EXPECT_EQ(s.needed(false, -1), 0);
  EXPECT_EQ(s.start(), &a);
  EXPECT_EQ(s.start(), nullptr);   // one at a time
  s.finish();
  EXPECT_TRUE(s.done(1));
  EXPECT_FALSE(s.done(2));
  EXPECT_EQ(s.start(), &b);
  s.finish();
  s.begin_pass();
  EXPECT_EQ(s.needed(false, 0), 3);  // a new pass counts from the collectives issued before it
}

IterationBreakdown replay(const ModelGraph& model, const network::Topology& topology, const ParallelPlan& plan) {
  return replay_iteration(test::config(model, topology, plan));
}

TEST(Zero3Replay, PerParameterFetchCostsMoreThanCoalescedAndThePartsAddUp) {
  const network::Topology topology = test::dgx_cluster(2);
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan = zero3(DeepSpeedFetch::coalesced);
  plan.recompute = Recompute::full;
  const IterationBreakdown coalesced = replay(model, topology, plan);
  plan.zero.fetch = DeepSpeedFetch::per_parameter;
  const IterationBreakdown per_parameter = replay(model, topology, plan);
  plan.zero.implementation = ZeroImplementation::fsdp;
  const IterationBreakdown fsdp = replay(model, topology, plan);
  for (const IterationBreakdown* b : {&coalesced, &per_parameter, &fsdp}) {
    EXPECT_NEAR(test::sum_of_parts(*b), b->iteration_s, 1e-6 * b->iteration_s);
    EXPECT_DOUBLE_EQ(b->compute_s, coalesced.compute_s);
  }
  EXPECT_GT(per_parameter.zero_host_s, 3 * coalesced.zero_host_s);
  EXPECT_GT(per_parameter.iteration_s, coalesced.iteration_s);
  // Gathers and reduce-scatters share one stream: its busy time is their sum.
  EXPECT_GT(per_parameter.dp_comm_busy_s, 0);
}

TEST(ActivationCheckpointing, PartitioningDividesTheKeptInputsByTheTensorSize) {
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.data = 2;
  plan.tensor = 4;
  plan.micro_batch_size = 2;
  plan.precision = Precision::fp16;
  plan.recompute = Recompute::full;
  const double kept = kLayers * 2048 * kH * 2 /* samples */ * 2 /* bytes */;   // each block's input, whole on every tensor rank
  const double base = peak_memory(model, plan).activations;
  plan.checkpointing.partition_activations = true;
  EXPECT_NEAR(base - peak_memory(model, plan).activations, kept * (1 - 1.0 / 4), 1.0);
  plan.checkpointing.contiguous_memory_optimization = true;   // no fragmentation model: no change
  EXPECT_NEAR(base - peak_memory(model, plan).activations, kept * (1 - 1.0 / 4), 1.0);
  plan.checkpointing.cpu_checkpointing = true;
  EXPECT_NEAR(base - peak_memory(model, plan).activations, kept, 1.0);
  // Sequence parallelism splits them already: partitioning takes nothing more.
  ParallelPlan sp = plan;
  sp.sequence_parallel = true;
  sp.checkpointing = {};
  const double split = peak_memory(model, sp).activations;
  sp.checkpointing.partition_activations = true;
  EXPECT_DOUBLE_EQ(peak_memory(model, sp).activations, split);
}

TEST(ActivationCheckpointing, PartitionsAreGatheredAndHostCopiesCostPcieTime) {
  const network::Topology topology = test::dgx_cluster(1);
  const ModelGraph model = decoder_model("gpt3-1.3b", 2048);
  ParallelPlan plan;
  plan.data = 2;
  plan.tensor = 4;
  plan.precision = Precision::fp16;
  plan.recompute = Recompute::full;
  const IterationBreakdown base = replay(model, topology, plan);
  plan.checkpointing.partition_activations = true;
  const IterationBreakdown partitioned = replay(model, topology, plan);
  EXPECT_GT(partitioned.tensor_comm_s, base.tensor_comm_s);   // an all-gather per block before recomputation
  plan.checkpointing.cpu_checkpointing = true;
  const IterationBreakdown offloaded = replay(model, topology, plan);
  const Catalog catalog = Catalog::builtin();
  const double pcie = catalog.find_device("A100-80GB")->pcie_bandwidth;
  // Out in forward and back before recomputation: a quarter of each block's input each way.
  EXPECT_NEAR(offloaded.activation_offload_s, 2 * kLayers * (2048 * kH * 2 / 4) / pcie, 1e-9);
  EXPECT_NEAR(test::sum_of_parts(offloaded), offloaded.iteration_s, 1e-6 * offloaded.iteration_s);
}

}  // namespace
}  // namespace dlsim::models
