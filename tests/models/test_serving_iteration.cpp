// One serving iteration's time and the KV-cache capacity (models/serving_iteration.hpp), on a
// made-up GPU whose numbers can be followed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernel_test_devices.hpp"
#include "models/serving_iteration.hpp"

namespace dlsim::models {
namespace {

DecoderConfig small_llama() {
  DecoderConfig c = decoder_config("llama2-7b");
  c.layers = 4;
  return c;
}

DeviceProfile ideal_profile() {
  DeviceProfile p;
  p.memory_efficiency = 0.5;  // no measured curves: memory kernels run at half the bandwidth
  p.kernels.gemm[static_cast<int>(Precision::fp16)] = test::ideal_gemm();
  return p;
}

DeviceSpec gpu() {
  DeviceSpec d = test::test_gpu("TestGPU", 100, 300e12, 2e12);
  d.memory_bytes = 80e9;
  return d;
}

ServingStepModel model(int tensor, std::vector<double>* reduced = nullptr) {
  ServingStepOptions o;
  o.tensor = tensor;
  o.max_batch_tokens = 1024;
  return ServingStepModel(small_llama(), gpu(), ideal_profile(), o, [reduced](double bytes) {
    if (reduced) reduced->push_back(bytes);
    return 20e-6;
  });
}

TEST(ServingIteration, DecodeAttentionReadsEveryCachedKeyAndValueOnce) {
  const ServingStepModel m = model(2);
  // Llama-2-7B: 32 K/V heads of 128, split over 2 ranks: 16 x 128 = 2048 features per rank.
  const double context = 10'000, decodes = 8;
  const double bytes = context * 2 * 2048 * 2 + 2 * decodes * 2048 * 2;
  EXPECT_NEAR(m.decode_attention_s(8, context), 4 * bytes / (2e12 * 0.5), 1e-12);
  EXPECT_GT(m.decode_attention_s(8, 2 * context), 1.9 * m.decode_attention_s(8, context));
  EXPECT_EQ(m.decode_attention_s(0, 0), 0);
}

TEST(ServingIteration, EveryLayerAllReducesTwiceAndTheDenseTimeGrowsWithTokens) {
  std::vector<double> reduced;
  const ServingStepModel m = model(2, &reduced);
  const double t64 = m.dense_s(64);
  ASSERT_EQ(reduced.size(), 1u) << "one all-reduce size per token count";
  EXPECT_EQ(reduced[0], 64 * 4096 * 2);
  EXPECT_EQ(m.dense_s(64), t64) << "memoized";
  EXPECT_EQ(reduced.size(), 1u);
  // 4 layers x (attention output + MLP output), plus the embedding and the final norm.
  EXPECT_GT(t64 - 4 * (m.layer_s(64) + 2 * 20e-6), 0);
  EXPECT_LT(t64 - 4 * (m.layer_s(64) + 2 * 20e-6), m.layer_s(64));
  EXPECT_GT(m.dense_s(1024), m.dense_s(512));
  // One rank holds half the weights: at 8 tokens the GEMMs stream them, and two ranks are faster.
  EXPECT_LT(model(2).layer_s(8), 0.6 * model(1).layer_s(8));
}

TEST(ServingIteration, AnIterationIsItsPartsAndPrefillAttentionGrowsWithContext) {
  const ServingStepModel m = model(1);
  ServingBatch b;
  b.decodes = 4;
  b.decode_context = 4000;
  b.prefills = {{200, 0}, {100, 300}};
  b.emitting = 5;
  EXPECT_EQ(b.tokens(), 304);
  const double parts = m.dense_s(304) + m.decode_attention_s(4, 4000) + m.head_s(5) + m.prefill_attention_s({200, 0}) +
                       m.prefill_attention_s({100, 300});
  EXPECT_DOUBLE_EQ(m.iteration_s(b), parts);
  EXPECT_GT(m.prefill_attention_s({100, 3000}), m.prefill_attention_s({100, 300}));
  EXPECT_EQ(m.iteration_s(ServingBatch{}), 0);
}

TEST(ServingIteration, TheKvCacheTakesWhatTheWeightsAndWorkspaceLeave) {
  const ServingStepModel one = model(1), two = model(2);
  EXPECT_NEAR(two.weight_bytes(), one.weight_bytes() / 2, 1);
  EXPECT_DOUBLE_EQ(one.kv_bytes_per_token(), 2.0 * 4 * 4096 * 2);
  const double free = 80e9 * 0.9 - one.weight_bytes() - one.workspace_bytes();
  EXPECT_DOUBLE_EQ(one.kv_capacity_tokens(), std::floor(free / one.kv_bytes_per_token()));
  EXPECT_GT(two.kv_capacity_tokens(), 2 * one.kv_capacity_tokens()) << "half the weights and half the K/V per token";
}

TEST(ServingIteration, RefusesWhatItCannotTime) {
  ServingStepOptions o;
  o.tensor = 3;  // 32 heads
  EXPECT_THROW(ServingStepModel(small_llama(), gpu(), ideal_profile(), o, [](double) { return 0.0; }), std::invalid_argument);
  o.tensor = 1;
  EXPECT_THROW(ServingStepModel(small_llama(), gpu(), DeviceProfile{}, o, [](double) { return 0.0; }), std::invalid_argument);
  EXPECT_THROW(ServingStepModel(decoder_config("mixtral-8x7b"), gpu(), ideal_profile(), o, [](double) { return 0.0; }),
               std::invalid_argument);
}

TEST(ServingIteration, TheEnginesCpuTimeIsAddedBetweenIterationsOrOverlapped) {
  ServingBatch batch;
  batch.decodes = 30;
  batch.decode_context = 30 * 500;
  batch.emitting = 32;
  batch.prefills = {{256, 0}, {128, 0}};
  const ServingStepModel plain = model(2);
  const double gpu_time = plain.iteration_s(batch);
  ASSERT_GT(gpu_time, 0);
  EXPECT_EQ(plain.gpu_s(batch), gpu_time) << "no engine time by default";
  EngineOverhead e;
  e.per_iteration_s = 1e-3;
  e.per_sequence_s = 1e-4;
  e.worker_per_iteration_s = 2e-3;
  e.worker_per_sequence_s = 5e-5;
  EXPECT_DOUBLE_EQ(e.cpu_s(32, 1), 1e-3 + 32 * 1e-4);
  EXPECT_DOUBLE_EQ(e.cpu_s(32, 2), 1e-3 + 32 * 1e-4 + 2e-3 + 32 * 5e-5) << "workers only with tensor > 1";
  ServingStepOptions o = plain.options();
  o.engine = e;
  const ServingStepModel serial(small_llama(), gpu(), ideal_profile(), o, [](double) { return 20e-6; });
  EXPECT_NEAR(serial.iteration_s(batch), gpu_time + e.cpu_s(32, 2), 1e-12) << "30 decodes and 2 prefill chunks";
  o.engine.overlapped = true;
  const ServingStepModel hidden(small_llama(), gpu(), ideal_profile(), o, [](double) { return 20e-6; });
  EXPECT_NEAR(hidden.iteration_s(batch), std::max(gpu_time, e.cpu_s(32, 2)), 1e-12);
  EXPECT_EQ(hidden.iteration_s(ServingBatch{}), 0) << "an empty iteration costs nothing";
  // vLLM 0.5's measured engine: 1.33 ms + 0.105 ms per sequence on one GPU.
  EXPECT_NEAR(vllm_0_5_engine().cpu_s(64, 1), 1.33e-3 + 64 * 0.105e-3, 1e-12);
  EXPECT_FALSE(vllm_0_5_engine().overlapped);
}

}  // namespace
}  // namespace dlsim::models
