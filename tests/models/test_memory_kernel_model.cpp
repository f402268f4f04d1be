// Memory-bound kernel curves (models/memory_kernel_model.hpp): interpolation, the bandwidth-bound
// extrapolation, fallbacks between classes, and the passes over memory per class.
#include <gtest/gtest.h>

#include <cmath>

#include "models/memory_kernel_model.hpp"

namespace dlsim::models {
namespace {

TEST(MemoryCurve, LogLogBetweenNodesBandwidthBoundBeyond) {
  const MemoryCurve c{{1e6, 4e6}, {2e-6, 8e-6}};
  EXPECT_DOUBLE_EQ(c.at(1e3), 2e-6);                    // below the first node: its time
  EXPECT_NEAR(c.at(2e6), 4e-6, 1e-18);                  // log-log: halfway in log bytes, halfway in log time
  EXPECT_NEAR(c.at(8e6), 16e-6, 1e-18);                 // beyond: the last node's rate (2 us per MB)
}

TEST(MemoryKernelParams, ClassesFallBackToTheirNearestMeasuredRelative) {
  MemoryKernelParams p;
  p.curves[static_cast<std::size_t>(MemoryKernel::stream)] = {{1e6}, {1e-6}};
  p.curves[static_cast<std::size_t>(MemoryKernel::rms_norm)] = {{1e6}, {3e-6}};
  EXPECT_EQ(p.curve(MemoryKernel::layer_norm), &p.curves[static_cast<std::size_t>(MemoryKernel::rms_norm)]);
  EXPECT_EQ(p.curve(MemoryKernel::softmax), &p.curves[static_cast<std::size_t>(MemoryKernel::rms_norm)]);
  EXPECT_EQ(p.curve(MemoryKernel::batch_norm), &p.curves[static_cast<std::size_t>(MemoryKernel::stream)]);
  EXPECT_EQ(p.curve(MemoryKernel::gated_act), &p.curves[static_cast<std::size_t>(MemoryKernel::stream)]);
  EXPECT_DOUBLE_EQ(memory_kernel_time(MemoryKernel::dropout, 1e6, p, 1e12, 0.5), 1e-6);
  // Nothing measured at all: bytes over the scalar-efficiency bandwidth.
  EXPECT_DOUBLE_EQ(memory_kernel_time(MemoryKernel::dropout, 1e6, MemoryKernelParams{}, 1e12, 0.5), 2e-6);
}

TEST(MemoryPasses, BatchNormReadsItsInputTwice) {
  EXPECT_DOUBLE_EQ(memory_passes(MemoryKernel::batch_norm).forward, 1.5);
  EXPECT_DOUBLE_EQ(memory_passes(MemoryKernel::batch_norm).backward, 2.5);
  EXPECT_DOUBLE_EQ(memory_passes(MemoryKernel::layer_norm).backward, 1.5);
  EXPECT_DOUBLE_EQ(memory_passes(MemoryKernel::stream).backward, 1.0);
  for (std::size_t k = 0; k < kMemoryKernels; ++k) EXPECT_NE(to_string(static_cast<MemoryKernel>(k)), "?");
}

}  // namespace
}  // namespace dlsim::models
