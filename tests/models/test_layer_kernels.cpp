// A layer's kernels (models/layer_kernels.hpp), how tensor parallelism splits their shapes
// (rank_share), fused layers, and the host's launch model in a pass (iteration_program.cpp).
#include <gtest/gtest.h>

#include "kernel_test_devices.hpp"
#include "models/iteration_program.hpp"
#include "models/layer_kernels.hpp"

namespace dlsim::models {
namespace {

DeviceSpec gpu() { return test::test_gpu("test-gpu", 4, 4e12, 1e12); }

DeviceProfile profile() {
  DeviceProfile p;
  GemmParams& g = p.kernels.gemm[static_cast<std::size_t>(Precision::fp16)];
  g.peak_fraction = 1;
  g.bandwidth_fraction = 1;
  // Every memory-bound class on the stream curve: 1 us + 1 ns per byte (1 GB/s beyond 1 MB).
  p.kernels.memory.curves[static_cast<std::size_t>(MemoryKernel::stream)] = {{1e3, 1e6}, {1e-6, 1e-3}};
  return p;
}

Layer linear(double tokens, double in, double out) {
  Layer l;
  l.name = "fc";
  l.kind = LayerKind::linear;
  l.parameters = in * out;
  l.forward_flops = 2 * tokens * in * out;
  l.input_elements = tokens * in;
  l.activation_elements = tokens * out;
  l.matmul = {tokens, out, in};
  return l;
}

TEST(LayerKernels, ALinearLayerRunsItsForwardAndBothGradientGemms) {
  const Layer l = linear(128, 256, 512);
  const double b = 4;  // 512 rows
  const LayerKernelTimes t = layer_kernel_times(l, b, Precision::fp16, gpu(), profile());
  const DeviceProfile p = profile();  // kept alive: g refers into it
  const GemmParams& g = *p.kernels.gemm_for(Precision::fp16);
  EXPECT_DOUBLE_EQ(t.forward.seconds, gemm_time({512, 512, 256, 1, GemmLayout::nt}, Precision::fp16, gpu(), g).seconds);
  const double dgrad = gemm_time({512, 256, 512, 1, GemmLayout::nn}, Precision::fp16, gpu(), g).seconds;
  const double wgrad = gemm_time({256, 512, 512, 1, GemmLayout::tn}, Precision::fp16, gpu(), g).seconds;
  EXPECT_DOUBLE_EQ(t.backward.seconds, dgrad + wgrad);
  EXPECT_EQ(t.forward.kernels, 1);
  EXPECT_EQ(t.backward.kernels, 2);
  EXPECT_DOUBLE_EQ(t.backward.by_family[static_cast<std::size_t>(KernelFamilyKind::gemm)], dgrad + wgrad);
}

TEST(LayerKernels, TensorParallelSplitsColumnsRowsAndHeads) {
  ParallelPlan plan;
  plan.tensor = 2;
  Layer column = linear(128, 256, 512);
  column.tensor = TensorSplit::split;
  EXPECT_DOUBLE_EQ(rank_share(column, plan).matmul.cols, 256);
  EXPECT_DOUBLE_EQ(rank_share(column, plan).matmul.depth, 256);
  Layer row = column;
  row.tp_all_reduce = true;
  EXPECT_DOUBLE_EQ(rank_share(row, plan).matmul.depth, 128);
  EXPECT_DOUBLE_EQ(rank_share(row, plan).matmul.cols, 512);
  Layer scores;
  scores.kind = LayerKind::matmul;
  scores.tensor = TensorSplit::split;
  scores.forward_flops = 1;
  scores.matmul = {2048, 2048, 128, 32, true};
  EXPECT_DOUBLE_EQ(rank_share(scores, plan).matmul.count, 16);
}

TEST(LayerKernels, ABatchedProductTakesTheBatchIntoItsCount) {
  Layer scores;
  scores.kind = LayerKind::matmul;
  scores.forward_flops = 2.0 * 256 * 256 * 64 * 8;
  scores.matmul = {256, 256, 64, 8, true};
  const LayerKernelTimes t = layer_kernel_times(scores, 2, Precision::fp16, gpu(), profile());
  const DeviceProfile p = profile();
  const GemmParams& g = *p.kernels.gemm_for(Precision::fp16);
  EXPECT_DOUBLE_EQ(t.forward.seconds, gemm_time({256, 256, 64, 16, GemmLayout::nt}, Precision::fp16, gpu(), g).seconds);
}

TEST(LayerKernels, AFusedLayerMovesOnlyItsExtraInputs) {
  Layer add;
  add.kind = LayerKind::elementwise;
  add.input_elements = 2e5;       // the chained tensor and the residual
  add.activation_elements = 1e5;
  const LayerKernelTimes alone = layer_kernel_times(add, 1, Precision::fp16, gpu(), profile());
  // Alone: (2e5 + 1e5) x 2 B = 600 kB on the stream curve.
  EXPECT_DOUBLE_EQ(alone.forward.seconds, profile().kernels.memory.curves[0].at(6e5));
  EXPECT_EQ(alone.forward.kernels, 1);
  add.fused = true;
  const LayerKernelTimes fused = layer_kernel_times(add, 1, Precision::fp16, gpu(), profile(), 1e5);
  EXPECT_EQ(fused.forward.kernels, 0);
  // Fused: only the residual, 1e5 x 2 B = 200 kB, at the curve's bandwidth for large kernels.
  EXPECT_NEAR(fused.forward.seconds, 2e5 * 1e-9, 1e-12);
}

Layer conv_layer(bool channels_first) {
  // 16 -> 32 channels, 3 x 3, stride 1, padding 1, on 8 x 8 images.
  Layer l;
  l.name = "conv";
  l.kind = LayerKind::conv;
  l.parameters = 32 * 16 * 9;
  l.forward_flops = 2 * 64 * 32 * 16 * 9;
  l.input_elements = 16 * 64;
  l.activation_elements = 32 * 64;
  l.conv = {16, 8, 8, 32, 3, 3, 1, 1, 1};
  l.conv.channels_first = channels_first;
  return l;
}

TEST(LayerKernels, AnNchwConvolutionOnTensorCoresTransposesItsTensorsInEveryPass) {
  // b = 2, fp16: x 2 x 16 x 64 = 4,096 bytes, y 2 x 32 x 64 = 8,192, the filter 32 x 16 x 9 =
  // 9,216; a transpose reads and writes its tensor: 2 x (4,096 + 8,192 + 9,216) = 43,008 bytes
  // per pass, 43.008 us on the stream curve (1 ns per byte), in three kernels.
  const DeviceProfile p = profile();
  const LayerKernelTimes nhwc = layer_kernel_times(conv_layer(false), 2, Precision::fp16, gpu(), p);
  const LayerKernelTimes nchw = layer_kernel_times(conv_layer(true), 2, Precision::fp16, gpu(), p);
  const std::size_t memory = static_cast<std::size_t>(KernelFamilyKind::memory);
  EXPECT_NEAR(nchw.forward.seconds - nhwc.forward.seconds, 43.008e-6, 1e-12);
  EXPECT_EQ(nchw.forward.kernels - nhwc.forward.kernels, 3);
  // Backward: the data gradient (dy in, dx out) and the weight gradient (x and dy in, dw out).
  EXPECT_NEAR(nchw.backward.seconds - nhwc.backward.seconds, 2 * 43.008e-6, 1e-12);
  EXPECT_EQ(nchw.backward.kernels - nhwc.backward.kernels, 6);
  EXPECT_NEAR(nchw.backward.by_family[memory], 2 * 43.008e-6, 1e-12);
  EXPECT_NEAR(nchw.weight.seconds - nhwc.weight.seconds, 43.008e-6, 1e-12);
  EXPECT_EQ(nhwc.forward.by_family[memory], 0);
}

TEST(LayerKernels, AnNchwConvolutionWithoutTensorCoresRunsAsItIs) {
  // Pascal has no tensor cores (its fp16 runs on CUDA cores, which read NCHW), and a TPU's
  // (or Trainium's) compiler lays tensors out itself: the layout costs nothing there.
  const DeviceProfile p = profile();
  for (const Generation g : {Generation::pascal, Generation::tpu, Generation::trainium}) {
    const DeviceSpec d = test::test_gpu("no-transposes", 4, 4e12, 1e12, g);
    const LayerKernelTimes nhwc = layer_kernel_times(conv_layer(false), 2, Precision::fp16, d, p);
    const LayerKernelTimes nchw = layer_kernel_times(conv_layer(true), 2, Precision::fp16, d, p);
    EXPECT_EQ(nchw.forward.seconds, nhwc.forward.seconds);
    EXPECT_EQ(nchw.backward.seconds, nhwc.backward.seconds);
    EXPECT_EQ(nchw.backward.kernels, nhwc.backward.kernels);
  }
}

TEST(LayerKernels, AMemoryLayerMovesItsOwnElementSizesAndMayHaveNoBackward) {
  // 1,000 elements per sample, b = 2, read in 2 bytes and written in 4 (a conversion to FP32):
  // 12,000 bytes, 12 us on the stream curve, each way; backward_free: nothing backward.
  Layer l;
  l.name = "to_fp32";
  l.kind = LayerKind::elementwise;
  l.input_elements = l.activation_elements = 1000;
  l.input_element_bytes = 2;
  l.output_element_bytes = 4;
  const DeviceProfile p = profile();
  const LayerKernelTimes t = layer_kernel_times(l, 2, Precision::fp16, gpu(), p);
  EXPECT_NEAR(t.forward.seconds, 12e-6, 1e-12);
  EXPECT_NEAR(t.backward.seconds, 12e-6, 1e-12);
  l.backward_free = true;
  const LayerKernelTimes free = layer_kernel_times(l, 2, Precision::fp16, gpu(), p);
  EXPECT_NEAR(free.forward.seconds, 12e-6, 1e-12);
  EXPECT_EQ(free.backward.seconds, 0);
  EXPECT_EQ(free.backward.kernels, 0);
}

TEST(LayerKernels, ManyTinyKernelsAreLaunchBound) {
  // 100 tiny element-wise layers: each 1 us on the device, while the host needs 8 us (forward)
  // and 5 us (backward) to issue one: the passes take about what the host takes.
  ModelGraph m;
  m.name = "tiny";
  for (int i = 0; i < 100; ++i) {
    Layer l;
    l.name = "relu" + std::to_string(i);
    l.kind = LayerKind::elementwise;
    l.input_elements = l.activation_elements = 10;
    m.layers.push_back(l);
  }
  ParallelPlan plan;
  plan.precision = Precision::fp16;
  const DeviceProfile p = profile();
  const IterationProgram program = build_iteration_program(m, plan, gpu(), p);
  const PassProgram& forward = program.stages.at(0).forward;
  // The first kernel waits for its own launch (8 us) then runs 1 us; each next one is issued 8 us
  // after the previous, so the device idles 7 us before each: 100 x 8 us + 1 us.
  EXPECT_NEAR(forward.compute_s, 100 * p.kernels.host.forward_kernel_s + 1e-6, 1e-9);
  EXPECT_EQ(forward.kernels, 100);
  EXPECT_NEAR(program.stages.at(0).backward.compute_s, 100 * p.kernels.host.backward_kernel_s + 1e-6, 1e-9);
}

}  // namespace
}  // namespace dlsim::models
