// One forward pass of a batch for serving CNNs and encoders (models/inference_pass.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "kernel_test_devices.hpp"
#include "models/inference_pass.hpp"
#include "models/roofline.hpp"
#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

TEST(InferencePass, WithoutAProfileItIsTheRooflinesForwardOfEveryLayerThatInferenceRuns) {
  DeviceSpec gpu = test::test_gpu("TestGPU", 100, 100e12, 1e12);
  gpu.memory_bytes = 16e9;
  const DeviceProfile none;
  // A GPT-2-style decoder trained with dropout: evaluation runs none of it.
  DecoderConfig c = decoder_config("gpt2");
  c.dropout = true;
  const ModelGraph gpt = decoder_transformer(c, 128);
  const InferencePass pass(gpt, gpu, none, Precision::fp16);
  double expected = 0;
  int skipped = 0;
  for (const Layer& l : gpt.layers) {
    const bool matrix = is_matrix_layer(l.kind) || l.kind == LayerKind::attention;
    if (!matrix && (memory_kernel_of(l) == MemoryKernel::dropout || memory_kernel_of(l) == MemoryKernel::cross_entropy)) {
      ++skipped;
      continue;
    }
    expected += layer_time(l, 4, Precision::fp16, gpu, none).forward_s;
  }
  ASSERT_GT(skipped, 0) << "the training graph has dropout, which evaluation skips";
  EXPECT_NEAR(pass.batch_s(4), expected, 1e-12 * expected);
  EXPECT_LE(pass.kernels(), static_cast<int>(gpt.layers.size()) - skipped);
  EXPECT_DOUBLE_EQ(pass.weight_bytes(), gpt.parameters() * 2);
  EXPECT_THROW(pass.batch_s(0), std::invalid_argument);
}

TEST(InferencePass, BatchingAmortisesLaunchesAndWeightsWithAKernelProfile) {
  DeviceSpec gpu = test::test_gpu("TestGPU", 100, 300e12, 2e12);
  gpu.memory_bytes = 80e9;
  DeviceProfile profile;
  profile.memory_efficiency = 0.5;
  profile.kernels.gemm[static_cast<int>(Precision::fp16)] = test::ideal_gemm();
  ASSERT_TRUE(profile.kernels.present());
  const ModelGraph bert = bert_base(128);
  const InferencePass pass(bert, gpu, profile, Precision::fp16);
  const double one = pass.batch_s(1), eight = pass.batch_s(8), sixty_four = pass.batch_s(64);
  EXPECT_GE(eight, one);
  EXPECT_GT(sixty_four, eight);
  EXPECT_LT(eight / 8, one) << "per sample, a batch of 8 is cheaper than one sample alone";
  EXPECT_LT(sixty_four / 64, eight / 8);
  // No batch beats the device's peak on the model's FLOPs.
  EXPECT_GT(sixty_four, 64 * bert.forward_flops_per_sample() / gpu.peak(Precision::fp16));
  // The host's launches (one per kernel) bound a pass from below.
  EXPECT_GE(one, pass.kernels() * profile.kernels.host.forward_kernel_s - 1e-15);
  EXPECT_EQ(pass.batch_s(8), eight) << "memoized, the same every time";
  // Activations: the largest layer's input and output, times the batch.
  double largest = 0;
  for (const Layer& l : bert.layers) largest = std::max(largest, l.input_elements + l.activation_elements);
  EXPECT_DOUBLE_EQ(pass.workspace_bytes(8), largest * 8 * 2);
}

TEST(InferencePass, RefusesAPrecisionTheDeviceCannotRun) {
  const DeviceSpec gpu = test::test_gpu("TestGPU", 100, 100e12, 1e12);  // no fp32
  EXPECT_THROW(InferencePass(resnet50(), gpu, DeviceProfile{}, Precision::fp32), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::models
