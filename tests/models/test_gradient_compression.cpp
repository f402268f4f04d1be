// Gradient compression (models/gradient_compression.hpp): the bytes each method puts on the wire,
// the kernels it adds, the memory it keeps, and its effect in a replayed iteration.
#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/gradient_compression.hpp"
#include "models/memory_model.hpp"
#include "models/training_replay.hpp"
#include "models/zoo.hpp"
#include "replay_fixtures.hpp"

namespace dlsim::models {
namespace {

using network::CollectiveKind;

struct Fixture {
  Catalog catalog = Catalog::builtin();
  DeviceSpec device = *catalog.find_device("A100-80GB");
  DeviceProfile profile = *catalog.find_profile("A100-80GB");

  std::vector<ReductionPhase> phases(CompressionMethod m, double elements, int p, Precision g = Precision::fp32, double ratio = 0.01,
                                     int rank = 4, std::vector<WeightMatrix> matrices = {}) const {
    GradientCompression c;
    c.method = m;
    c.ratio = ratio;
    c.rank = rank;
    return compressed_reduction({elements, std::move(matrices)}, p, c, g, device, profile);
  }
};

double device_seconds(const std::vector<ReductionPhase>& phases) {
  double s = 0;
  for (const auto& p : phases) s += p.kind == ReductionPhase::Kind::device ? p.seconds : 0.0;
  return s;
}

TEST(GradientCompression, NoneIsOneAllReduceOfTheBucket) {
  const Fixture f;
  const auto phases = f.phases(CompressionMethod::none, 1e6, 8);
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].collective, CollectiveKind::all_reduce);
  EXPECT_EQ(phases[0].bytes, 4e6);
  EXPECT_DOUBLE_EQ(wire_bytes(phases, 8), 4e6 * 2 * 7 / 8);
  EXPECT_EQ(device_seconds(phases), 0);
}

TEST(GradientCompression, EachMethodCutsTheWireBytesByItsElementSize) {
  const Fixture f;
  const double n = 64e6;
  const int p = 16;
  const double none = wire_bytes(f.phases(CompressionMethod::none, n, p), p);
  // FP32 gradients: fp16 halves, int8 quarters, one bit is 1/32 (plus a 4-byte scale per chunk).
  EXPECT_NEAR(wire_bytes(f.phases(CompressionMethod::fp16, n, p), p) / none, 0.5, 1e-12);
  EXPECT_NEAR(wire_bytes(f.phases(CompressionMethod::int8, n, p), p) / none, 0.25, 1e-5);
  EXPECT_NEAR(wire_bytes(f.phases(CompressionMethod::one_bit, n, p), p) / none, 1.0 / 32, 1e-5);
  // Gradients already in 16 bits: casting to fp16 changes nothing.
  const auto half = f.phases(CompressionMethod::fp16, n, p, Precision::fp16);
  EXPECT_EQ(wire_bytes(half, p), wire_bytes(f.phases(CompressionMethod::none, n, p, Precision::fp16), p));
  EXPECT_EQ(device_seconds(half), 0);
  // Every real compression costs device time.
  for (auto m : {CompressionMethod::fp16, CompressionMethod::int8, CompressionMethod::one_bit, CompressionMethod::top_k}) {
    EXPECT_GT(device_seconds(f.phases(m, n, p)), 0) << to_string(m);
  }
  // The compressed all-reduce of 1-bit Adam: an all-to-all, then an all-gather.
  const auto one_bit = f.phases(CompressionMethod::one_bit, n, p);
  int all_to_all = 0, all_gather = 0;
  for (const auto& ph : one_bit) {
    if (ph.kind != ReductionPhase::Kind::collective) continue;
    all_to_all += ph.collective == CollectiveKind::all_to_all;
    all_gather += ph.collective == CollectiveKind::all_gather;
    EXPECT_DOUBLE_EQ(ph.bytes, n / 8 + p * 4.0);
  }
  EXPECT_EQ(all_to_all, 1);
  EXPECT_EQ(all_gather, 1);
}

TEST(GradientCompression, TopKAllGathersPairsAndItsBytesGrowWithTheWorldSize) {
  const Fixture f;
  const double n = 1e7, ratio = 0.001;
  const double k = n * ratio;
  for (int p : {4, 16, 64}) {
    const auto phases = f.phases(CompressionMethod::top_k, n, p, Precision::fp32, ratio);
    // (value, index) pairs: 4 + 4 bytes, p k of them gathered; a rank sends (p - 1) k pairs.
    EXPECT_NEAR(wire_bytes(phases, p), (p - 1) * k * 8, 1e-6 * k);
  }
  const double w4 = wire_bytes(f.phases(CompressionMethod::top_k, n, 4, Precision::fp32, ratio), 4);
  const double w64 = wire_bytes(f.phases(CompressionMethod::top_k, n, 64, Precision::fp32, ratio), 64);
  EXPECT_NEAR(w64 / w4, 63.0 / 3.0, 1e-9);
  // All-reduce's bytes per rank barely move with p: top-k's advantage shrinks as the group grows.
  const double a4 = wire_bytes(f.phases(CompressionMethod::none, n, 4), 4), a64 = wire_bytes(f.phases(CompressionMethod::none, n, 64), 64);
  EXPECT_GT(w64 / a64, 10 * w4 / a4);
}

TEST(GradientCompression, PowerSgdSendsRankTimesRowsPlusColumnsPerMatrix) {
  const Fixture f;
  const std::vector<WeightMatrix> matrices{{1024, 4096}, {4096, 1024}, {2, 2}};  // the 2 x 2 one is not worth compressing
  const double vectors = 5000;
  const double n = 2 * 1024 * 4096 + 4 + vectors;
  const int r = 4;
  const auto phases = f.phases(CompressionMethod::powersgd, n, 8, Precision::fp32, 0.01, r, matrices);
  std::vector<double> all_reduces;
  for (const auto& ph : phases) {
    if (ph.kind == ReductionPhase::Kind::collective) {
      EXPECT_EQ(ph.collective, CollectiveKind::all_reduce);
      all_reduces.push_back(ph.bytes);
    }
  }
  ASSERT_EQ(all_reduces.size(), 3u);
  EXPECT_DOUBLE_EQ(all_reduces[0], (vectors + 4) * 4);                 // uncompressed: vectors and the small matrix
  EXPECT_DOUBLE_EQ(all_reduces[1], r * (1024 + 4096) * 4.0);           // P: m r per matrix
  EXPECT_DOUBLE_EQ(all_reduces[2], r * (4096 + 1024) * 4.0);           // Q: n r per matrix
  EXPECT_GT(device_seconds(phases), 0);                                // three GEMMs, orthogonalisation, error feedback
  // A higher rank sends more and computes more.
  const auto r8 = f.phases(CompressionMethod::powersgd, n, 8, Precision::fp32, 0.01, 8, matrices);
  EXPECT_GT(wire_bytes(r8, 8), wire_bytes(phases, 8));
  EXPECT_GT(device_seconds(r8), device_seconds(phases));
}

TEST(GradientCompression, ErrorFeedbackBuffersCountInMemory) {
  GradientCompression c;
  c.method = CompressionMethod::one_bit;
  EXPECT_DOUBLE_EQ(compression_memory_bytes(c, 1e6, {}, 8, Precision::fp16), 1e6 * 4 * (1 + 1.0 / 8));
  c.method = CompressionMethod::top_k;
  EXPECT_DOUBLE_EQ(compression_memory_bytes(c, 1e6, {}, 8, Precision::fp16), 4e6);
  c.method = CompressionMethod::int8;
  EXPECT_EQ(compression_memory_bytes(c, 1e6, {}, 8, Precision::fp16), 0);
  c.method = CompressionMethod::powersgd;
  c.rank = 2;
  EXPECT_DOUBLE_EQ(compression_memory_bytes(c, 1e6, {{100, 1000}}, 8, Precision::fp32), 4e6 + 2 * 1100 * 4);

  const ModelGraph model = resnet50();
  ParallelPlan plan;
  plan.data = 32;
  plan.micro_batch_size = 32;
  plan.precision = Precision::fp16;
  const double plain = peak_memory(model, plan).total();
  plan.compression.method = CompressionMethod::one_bit;
  EXPECT_NEAR(peak_memory(model, plan).total() - plain, model.parameters() * 4 * (1 + 1.0 / 32), 1);
}

TEST(GradientCompression, InAReplayOnASlowFabricCompressionSavesBytesAndAddsKernels) {
  const network::Topology topology = test::dgx_cluster(4, 1);  // 8 NICs of 1 Gbps per node
  const ModelGraph model = resnet50();
  ParallelPlan plan;
  plan.data = 32;
  plan.micro_batch_size = 64;
  plan.precision = Precision::fp16;
  TrainingConfig c = test::config(model, topology, plan);
  const IterationBreakdown none = replay_iteration(c);
  EXPECT_EQ(none.compression_s, 0);
  EXPECT_NEAR(none.gradient_wire_bytes, model.parameters() * 4 * 2 * 31 / 32, 1e-6 * none.gradient_wire_bytes);
  for (auto m : {CompressionMethod::int8, CompressionMethod::one_bit, CompressionMethod::top_k, CompressionMethod::powersgd}) {
    c.plan.compression.method = m;
    const IterationBreakdown b = replay_iteration(c);
    EXPECT_GT(b.compression_s, 0) << to_string(m);
    EXPECT_LT(b.gradient_wire_bytes, none.gradient_wire_bytes / 3) << to_string(m);
    // int8's all-to-all sends 7/8 of each rank's quarter-size buffer through the node's NICs: with
    // 8 GPUs per node that is as much NIC traffic as the uncompressed ring all-reduce (2 x 7/8 of
    // the full buffer per node), so it is not faster here; the others cut the NIC traffic.
    if (m != CompressionMethod::int8) EXPECT_LT(b.iteration_s, none.iteration_s) << to_string(m);
    EXPECT_NEAR(test::sum_of_parts(b), b.iteration_s, 1e-6 * b.iteration_s) << to_string(m);
    EXPECT_EQ(replay_iteration(c).iteration_s, b.iteration_s);  // deterministic
  }
  c.plan.compression.method = CompressionMethod::int8;
  EXPECT_NEAR(replay_iteration(c).gradient_wire_bytes / none.gradient_wire_bytes, 0.25, 1e-3);
}

TEST(GradientCompression, BadSettingsAreRejectedByThePlan) {
  const ModelGraph model = resnet50();
  ParallelPlan plan;
  plan.data = 8;
  plan.compression.method = CompressionMethod::top_k;
  plan.compression.ratio = 1.5;
  EXPECT_THROW(validate_plan(plan, model, 8), std::invalid_argument);
  plan.compression.ratio = 0.01;
  plan.zero_stage = 2;
  EXPECT_THROW(validate_plan(plan, model, 8), std::invalid_argument);
  plan.zero_stage = 0;
  EXPECT_NO_THROW(validate_plan(plan, model, 8));
}

}  // namespace
}  // namespace dlsim::models
