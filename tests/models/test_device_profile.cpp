// Calibrated device profiles: efficiency curves, their use by the roofline and the replay, the
// counted fallback outside the measured sizes, and the transfer to another device.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "models/device.hpp"
#include "models/profile_transfer.hpp"
#include "models/roofline.hpp"
#include "models/training_replay.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::models {
namespace {

EfficiencyCurve curve(std::vector<double> size, std::vector<double> efficiency) {
  EfficiencyCurve c;
  c.size = std::move(size);
  c.efficiency = std::move(efficiency);
  return c;
}

TEST(EfficiencyCurve, InterpolatesInLogSizeAndCountsLookupsOutsideTheMeasuredSizes) {
  const EfficiencyCurve c = curve({1e6, 1e8}, {0.2, 0.6});
  long long outside = 0;
  EXPECT_DOUBLE_EQ(c.at(1e7, &outside), 0.4);  // halfway in log(size)
  EXPECT_DOUBLE_EQ(c.at(1e6, &outside), 0.2);
  EXPECT_DOUBLE_EQ(c.at(1e8, &outside), 0.6);
  EXPECT_EQ(outside, 0);
  EXPECT_DOUBLE_EQ(c.at(1e5, &outside), 0.2);  // the nearest end, counted
  EXPECT_DOUBLE_EQ(c.at(1e9, &outside), 0.6);
  EXPECT_EQ(outside, 2);
}

TEST(EfficiencyCurve, ValidationSaysWhatIsWrong) {
  EXPECT_NO_THROW(curve({1, 2}, {0.5, 1.0}).validate("gemm"));
  const auto message = [](const EfficiencyCurve& c) {
    try {
      c.validate("gemm fp16");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(curve({2, 1}, {0.5, 0.5})).find("increase"), std::string::npos);
  EXPECT_NE(message(curve({1, 2}, {0.5, 0.0})).find("(0, 1]"), std::string::npos);
  EXPECT_NE(message(curve({1, 2}, {0.5, 1.5})).find("(0, 1]"), std::string::npos);
  EXPECT_NE(message(curve({1, std::nan("")}, {0.5, 0.5})).find("positive"), std::string::npos);
  EXPECT_NE(message(curve({1, 2}, {0.5})).find("count"), std::string::npos);
  EXPECT_EQ(message(curve({2, 1}, {0.5, 0.5})).rfind("gemm fp16", 0), 0u);
}

TEST(DeviceProfile, CurvesTakePrecedenceOverTheScalars) {
  DeviceProfile p;
  p.matmul_efficiency = 0.7;
  p.memory_efficiency = 0.9;
  EXPECT_FALSE(p.calibrated());
  EXPECT_DOUBLE_EQ(p.matmul_at(Precision::fp16, 1e9), 0.7);
  EXPECT_DOUBLE_EQ(p.memory_at(1e6), 0.9);
  const double before = p.fingerprint();
  p.matmul_curve[static_cast<std::size_t>(Precision::fp16)] = curve({1e6, 1e10}, {0.1, 0.5});
  EXPECT_TRUE(p.calibrated());
  EXPECT_NE(p.fingerprint(), before);
  EXPECT_DOUBLE_EQ(p.matmul_at(Precision::fp16, 1e10), 0.5);
  EXPECT_DOUBLE_EQ(p.matmul_at(Precision::fp32, 1e10), 0.7);  // no fp32 curve: the scalar
}

DeviceSpec device(double fp16_peak, double bandwidth) {
  DeviceSpec d;
  d.name = "test-" + std::to_string(static_cast<long long>(fp16_peak / 1e12));
  d.peak_flops[static_cast<std::size_t>(Precision::fp16)] = fp16_peak;
  d.peak_flops[static_cast<std::size_t>(Precision::fp32)] = fp16_peak / 4;
  d.memory_bandwidth = bandwidth;
  return d;
}

TEST(Roofline, AMatrixLayerRunsAtTheCurvesEfficiencyForItsSize) {
  Layer l;
  l.kind = LayerKind::linear;
  l.forward_flops = 1e12;   // compute-bound: 1e12 FLOPs over 100 TFLOP/s, bytes negligible
  l.input_elements = 8;
  l.activation_elements = 8;
  const DeviceSpec d = device(100e12, 1e12);
  DeviceProfile p;
  p.kernel_launch_overhead_s = 0;
  p.matmul_curve[static_cast<std::size_t>(Precision::fp16)] = curve({1e9, 1e13}, {0.25, 0.5});
  // 1e12 FLOPs is 3/4 of the way from 1e9 to 1e13 in log: efficiency 0.25 + 0.75 x 0.25 = 0.4375.
  long long outside = 0;
  EXPECT_NEAR(layer_time(l, 1, Precision::fp16, d, p, &outside).forward_s, 1e12 / (100e12 * 0.4375), 1e-15);
  EXPECT_EQ(outside, 0);
  // Batch 100: 1e14 FLOPs per call, beyond the measured sizes: the largest point's 0.5, counted.
  EXPECT_NEAR(layer_time(l, 100, Precision::fp16, d, p, &outside).forward_s, 1e14 / (100e12 * 0.5), 1e-12);
  EXPECT_GE(outside, 1);
}

TEST(ProfileTransfer, ScalesTheSizeAxisByThePeakRatioAndSaysSo) {
  const DeviceSpec small = device(100e12, 1e12), big = device(400e12, 3e12);
  DeviceProfile p;
  p.matmul_curve[static_cast<std::size_t>(Precision::fp16)] = curve({1e9, 1e12}, {0.3, 0.8});
  p.memory_curve = curve({1e6, 1e9}, {0.5, 0.9});
  const DeviceProfile t = transfer_profile(p, small, big);
  // Four times the peak: the same efficiency at four times the size.
  EXPECT_EQ(t.matmul_curve[static_cast<std::size_t>(Precision::fp16)].size, (std::vector<double>{4e9, 4e12}));
  EXPECT_EQ(t.matmul_curve[static_cast<std::size_t>(Precision::fp16)].efficiency, (std::vector<double>{0.3, 0.8}));
  EXPECT_EQ(t.memory_curve.size, (std::vector<double>{3e6, 3e9}));
  EXPECT_NE(t.source.find("transferred from " + small.name), std::string::npos) << t.source;
  // A precision the measured device lacks gets no curve on the target.
  DeviceSpec with_fp8 = big;
  with_fp8.peak_flops[static_cast<std::size_t>(Precision::fp8)] = 800e12;
  p.matmul_curve[static_cast<std::size_t>(Precision::fp8)] = curve({1, 2}, {0.5, 0.5});
  EXPECT_TRUE(transfer_profile(p, small, with_fp8).matmul_curve[static_cast<std::size_t>(Precision::fp8)].empty());
  // The same device: unchanged.
  EXPECT_EQ(transfer_profile(p, small, small).source, p.source);
}

TEST(TrainingReplay, ReportsLookupsOutsideACalibratedProfile) {
  ModelGraph g;
  g.name = "two-layers";
  for (int i = 0; i < 2; ++i) {
    Layer l;
    l.name = "fc" + std::to_string(i);
    l.kind = LayerKind::linear;
    l.forward_flops = 1e9;
    l.parameters = 1e6;
    l.input_elements = 1000;
    l.activation_elements = 1000;
    g.layers.push_back(l);
  }
  network::NodeSpec node;
  node.accelerators = 1;
  network::FabricSpec fabric;
  const network::Topology topology = network::build_cluster(node, fabric);
  TrainingConfig c;
  c.model = &g;
  c.device = device(100e12, 1e12);
  c.topology = &topology;
  c.plan.precision = Precision::fp16;
  // Curves covering every kernel's size: nothing counted.
  c.profile.matmul_curve[static_cast<std::size_t>(Precision::fp16)] = curve({1e3, 1e15}, {0.5, 0.5});
  c.profile.memory_curve = curve({1, 1e15}, {0.8, 0.8});
  const IterationBreakdown inside = replay_iteration(c);
  EXPECT_EQ(inside.profile_out_of_range, 0);
  // Curves measured only above every kernel's size: every lookup falls back, and is counted.
  c.profile.matmul_curve[static_cast<std::size_t>(Precision::fp16)] = curve({1e13, 1e15}, {0.5, 0.5});
  c.profile.memory_curve = curve({1e13, 1e15}, {0.8, 0.8});
  const IterationBreakdown outside = replay_iteration(c);
  EXPECT_GT(outside.profile_out_of_range, 0);
  // Same efficiencies at the ends: the same iteration time.
  EXPECT_DOUBLE_EQ(outside.iteration_s, inside.iteration_s);
}

}  // namespace
}  // namespace dlsim::models
