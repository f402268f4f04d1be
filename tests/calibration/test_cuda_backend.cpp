// The CUDA calibration backend: the host-side rules are tested everywhere; the measurements only
// where a CUDA device is present (skipped, with the reason, elsewhere). Built without CUDA, one
// test says so and skips.
#include <gtest/gtest.h>

#ifdef DLSIM_HAVE_CUDA

#include <cmath>
#include <set>

#include "calibration/cuda/cuda_backend.hpp"
#include "calibration/cuda/cuda_host.hpp"

namespace dlsim::calibration::cuda {
namespace {

using models::Precision;

KernelCase gemm(Precision p, std::int64_t m, std::int64_t n, std::int64_t k, KernelFamily f = KernelFamily::gemm) {
  KernelCase c;
  c.family = f;
  c.precision = p;
  c.m = m;
  c.n = n;
  c.k = k;
  return c;
}

KernelCase vector_case(KernelFamily f, Precision p, std::int64_t elements) {
  KernelCase c;
  c.family = f;
  c.precision = p;
  c.elements = elements;
  return c;
}

KernelCase rows_case(KernelFamily f, Precision p, std::int64_t rows, std::int64_t cols) {
  KernelCase c;
  c.family = f;
  c.precision = p;
  c.m = rows;
  c.n = cols;
  return c;
}

TEST(CudaHost, ValidateCaseNamesWhatIsWrong) {
  EXPECT_EQ(validate_case(gemm(Precision::bf16, 128, 256, 64)), "");
  EXPECT_NE(validate_case(gemm(Precision::fp32, 0, 8, 8)).find("positive m, n, k"), std::string::npos);
  EXPECT_NE(validate_case(gemm(Precision::fp16, 16, 16, 16, KernelFamily::gemm_naive)).find("fp32 only"),
            std::string::npos);
  EXPECT_NE(validate_case(gemm(Precision::fp16, 1ll << 31, 16, 16)).find("2^31"), std::string::npos);
  // 65535 blocks of 16 columns: n = 1048560 fits the plain kernel's grid, 1048561 does not.
  EXPECT_EQ(validate_case(gemm(Precision::fp32, 16, 1048560, 16, KernelFamily::gemm_naive)), "");
  EXPECT_NE(validate_case(gemm(Precision::fp32, 16, 1048561, 16, KernelFamily::gemm_naive)).find("1048560"),
            std::string::npos);
  // 3 fp32 elements are 12 bytes: not a whole 16-byte vector; 4 are 16 bytes.
  EXPECT_NE(validate_case(vector_case(KernelFamily::copy, Precision::fp32, 3)).find("16-byte"), std::string::npos);
  EXPECT_EQ(validate_case(vector_case(KernelFamily::copy, Precision::fp32, 4)), "");
  // 16 fp8 elements are 16 bytes.
  EXPECT_EQ(validate_case(vector_case(KernelFamily::read, Precision::fp8, 16)), "");
  EXPECT_NE(validate_case(vector_case(KernelFamily::activation, Precision::fp8, 16)).find("fp32, fp16 or bf16"),
            std::string::npos);
  KernelCase fp8_nn = gemm(Precision::fp8, 128, 128, 128);
  fp8_nn.layout = models::GemmLayout::nn;
  EXPECT_NE(validate_case(fp8_nn).find("nt layout only"), std::string::npos);
  KernelCase bf16_tn = gemm(Precision::bf16, 128, 128, 128);
  bf16_tn.layout = models::GemmLayout::tn;
  EXPECT_EQ(validate_case(bf16_tn), "");
  EXPECT_NE(validate_case(vector_case(KernelFamily::launch, Precision::fp32, 5)).find("elements must be 0"),
            std::string::npos);
  EXPECT_EQ(validate_case(vector_case(KernelFamily::launch, Precision::fp32, 0)), "");
  EXPECT_NE(validate_case(rows_case(KernelFamily::softmax, Precision::fp16, 0, 128)).find("positive m"),
            std::string::npos);
  EXPECT_NE(validate_case(vector_case(KernelFamily::reduction, Precision::fp32, 0)).find("positive element"),
            std::string::npos);
}

TEST(CudaHost, DeviceSupportByComputeCapabilityShapeAndMemory) {
  const DeviceCaps v100{7, 0, 32ull << 30}, a100{8, 0, 80ull << 30}, h100{9, 0, 80ull << 30};
  EXPECT_NE(device_support(gemm(Precision::bf16, 64, 64, 64), v100).find("8.0"), std::string::npos);
  EXPECT_EQ(device_support(gemm(Precision::bf16, 64, 64, 64), a100), "");
  // FP8 needs 8.9: the A100 gets the note, the H100 runs it, but only on multiples of 16.
  EXPECT_NE(device_support(gemm(Precision::fp8, 64, 64, 64), a100).find("fp8 unsupported"), std::string::npos);
  EXPECT_EQ(device_support(gemm(Precision::fp8, 64, 64, 64), h100), "");
  EXPECT_NE(device_support(gemm(Precision::fp8, 64, 64, 40), h100).find("multiples of 16"), std::string::npos);
  // A 65536^2 fp32 GEMM holds 3 matrices of 16 GiB = 48 GiB: more than 90% of 32 GiB free.
  EXPECT_NE(device_support(gemm(Precision::fp32, 65536, 65536, 65536), v100).find("GiB"), std::string::npos);
}

TEST(CudaHost, DeviceBytesCountEveryBuffer) {
  // fp16 GEMM 128 x 256 x 64: A 128*64 + B 64*256 + C 128*256 elements of 2 bytes
  // = (8192 + 16384 + 32768) * 2 = 114688.
  EXPECT_EQ(device_bytes(gemm(Precision::fp16, 128, 256, 64)), 114688u);
  // fp8 writes bf16: (8192 + 16384) * 1 + 32768 * 2 = 90112.
  EXPECT_EQ(device_bytes(gemm(Precision::fp8, 128, 256, 64)), 90112u);
  // copy of 1000 fp32: source and destination, 2 * 4000.
  EXPECT_EQ(device_bytes(vector_case(KernelFamily::copy, Precision::fp32, 1000)), 8000u);
  // layer norm 4 x 8 bf16: x and y 2 * 32 * 2 = 128, gamma and beta 2 * 8 * 2 = 32.
  EXPECT_EQ(device_bytes(rows_case(KernelFamily::layernorm, Precision::bf16, 4, 8)), 160u);
}

TEST(CudaHost, InputsAreNeverZeroBoundedAndSeeded) {
  std::set<float> seen;
  int negative = 0;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const float v = input_value(42, i);
    ASSERT_GE(std::fabs(v), 0.25f);
    ASSERT_LE(std::fabs(v), 1.0f);
    negative += v < 0;
    seen.insert(v);
  }
  // Random signs: 5000 expected, 4 standard deviations are 4 * sqrt(10000 / 4) = 200.
  EXPECT_NEAR(negative, 5000, 200);
  EXPECT_GT(seen.size(), 9900u);   // 24-bit values: collisions among 10^4 draws are rare
  EXPECT_EQ(input_value(42, 7), input_value(42, 7));
  EXPECT_NE(input_value(42, 7), input_value(43, 7));
  EXPECT_NE(buffer_seed(1, 0, 0), buffer_seed(1, 0, 1));
  EXPECT_NE(buffer_seed(1, 0, 0), buffer_seed(1, 1, 0));
}

TEST(CudaHost, TolerancesFollowTheRoundoffRule) {
  const double u32 = std::ldexp(1.0, -24);
  EXPECT_EQ(unit_roundoff(Precision::bf16), 1.0 / 256);    // 7 stored mantissa bits
  EXPECT_EQ(unit_roundoff(Precision::fp16), 1.0 / 2048);   // 10
  EXPECT_EQ(unit_roundoff(Precision::fp8), 1.0 / 16);      // e4m3: 3
  // GEMM bf16: 4 * 2^-8 + 128 * 2^-24 = 0.015625 + 7.63e-6.
  EXPECT_DOUBLE_EQ(tolerance(KernelFamily::gemm, Precision::bf16).rel, 0.015625 + 128 * u32);
  // FP8 GEMM writes bf16: the same tolerance as bf16.
  EXPECT_DOUBLE_EQ(tolerance(KernelFamily::gemm, Precision::fp8).rel, tolerance(KernelFamily::gemm, Precision::bf16).rel);
  // Tighter formats, tighter tolerances.
  EXPECT_LT(tolerance(KernelFamily::gemm, Precision::fp32).rel, tolerance(KernelFamily::gemm, Precision::tf32).rel);
  EXPECT_LT(tolerance(KernelFamily::gemm, Precision::fp16).rel, tolerance(KernelFamily::gemm, Precision::bf16).rel);
  // fp16 softmax outputs near 1e-5 are subnormal, spaced 2^-24: rounding them errs by up to
  // 2^-25, which the absolute term 4 * 2^-24 covers.
  EXPECT_GE(tolerance(KernelFamily::softmax, Precision::fp16).abs, std::ldexp(1.0, -25));
  EXPECT_EQ(tolerance(KernelFamily::copy, Precision::fp16).rel, 0.0);
  EXPECT_EQ(tolerance(KernelFamily::host_to_device, Precision::fp32).abs, 0.0);
}

TEST(CudaHost, ReferencesMatchHandValues) {
  // GELU(x) = x Phi(x): Phi(1) = 0.8413447461, so GELU(1) = 0.8413447461, GELU(-1) = -0.1586552539.
  EXPECT_NEAR(gelu_reference(1.0), 0.8413447461, 1e-9);
  EXPECT_NEAR(gelu_reference(-1.0), -0.1586552539, 1e-9);
  // softmax(0, ln 3) = (1/4, 3/4).
  std::vector<double> out;
  softmax_reference({0.0, std::log(3.0)}, out);
  EXPECT_NEAR(out[0], 0.25, 1e-15);
  EXPECT_NEAR(out[1], 0.75, 1e-15);
  // layer norm of (1, 3): mean 2, variance 1, so (-1, 1) / sqrt(1 + eps); gamma 2, beta 0.5.
  layernorm_reference({1.0, 3.0}, {2.0, 2.0}, {0.5, 0.5}, layernorm_eps, out);
  const double inv = 1 / std::sqrt(1 + layernorm_eps);
  EXPECT_NEAR(out[0], -2 * inv + 0.5, 1e-15);
  EXPECT_NEAR(out[1], 2 * inv + 0.5, 1e-15);
}

TEST(CudaHost, CheckValueFlagsTheFirstFailureAndNaN) {
  const Tolerance tol{1e-3, 0};
  CheckResult r;
  check_value(r, "C", 0, 10.0005, 10.0, 10.0, tol);   // error 5e-4 <= 1e-3 * 10 = 1e-2
  EXPECT_TRUE(r.ok);
  EXPECT_NEAR(r.worst_ratio, 0.05, 1e-9);
  check_value(r, "C", 3, 10.02, 10.0, 10.0, tol);     // 2e-2 > 1e-2
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.failure.find("C[3]"), std::string::npos);
  CheckResult nan;
  check_value(nan, "y", 1, std::nan(""), 1.0, 1.0, tol);
  EXPECT_FALSE(nan.ok);
}

TEST(CudaHost, CallsPerSampleFillAMillisecond) {
  EXPECT_EQ(calls_per_sample(2e-3), 1);      // longer than the 1 ms target
  EXPECT_EQ(calls_per_sample(4e-6), 250);    // 1e-3 / 4e-6
  EXPECT_EQ(calls_per_sample(1e-9), 1000);   // capped
  EXPECT_EQ(calls_per_sample(0.0), 1000);    // an unmeasurably short call: the cap
}

TEST(CudaBackend, ReportsAvailabilityWithoutThrowing) {
  const auto backend = make_cuda_backend();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->available(), unavailable_reason().empty());
  EXPECT_EQ(backend->info().backend, "cuda");
  if (!backend->available()) {
    // Without a device every case comes back unmeasured, with the reason, and nothing throws.
    const auto ms = backend->measure({gemm(Precision::fp32, 64, 64, 64)}, RunOptions{}, nullptr);
    ASSERT_EQ(ms.size(), 1u);
    EXPECT_TRUE(ms[0].times_s.empty());
    EXPECT_FALSE(ms[0].output_ok);
    EXPECT_NE(ms[0].note.find("no CUDA device"), std::string::npos);
    EXPECT_FALSE(backend->supports(gemm(Precision::fp32, 64, 64, 64)));
  }
}

// On a device: every family runs, its output passes the check, and the rates are physical.
KernelCase with_layout(KernelCase c, models::GemmLayout layout) {
  c.layout = layout;
  return c;
}

TEST(CudaBackend, MeasuresEveryFamilyOnADevice) {
  const auto backend = make_cuda_backend();
  if (!backend->available()) GTEST_SKIP() << "no CUDA device here: " << unavailable_reason();
  const std::vector<KernelCase> cases{
      gemm(Precision::fp32, 256, 384, 128),  gemm(Precision::tf32, 256, 256, 256), gemm(Precision::fp16, 512, 512, 512),
      gemm(Precision::bf16, 512, 256, 1024), gemm(Precision::fp8, 512, 512, 512),  gemm(Precision::fp64, 128, 128, 128),
      gemm(Precision::fp32, 100, 70, 33, KernelFamily::gemm_naive),
      vector_case(KernelFamily::copy, Precision::fp32, 1 << 22),
      vector_case(KernelFamily::read, Precision::fp16, 1 << 22),
      vector_case(KernelFamily::write, Precision::fp32, 1 << 22),
      vector_case(KernelFamily::elementwise, Precision::bf16, 1 << 20),
      vector_case(KernelFamily::activation, Precision::fp16, 1 << 20),
      vector_case(KernelFamily::reduction, Precision::fp32, (1 << 20) + 3),
      rows_case(KernelFamily::softmax, Precision::fp16, 512, 1000),
      rows_case(KernelFamily::layernorm, Precision::fp32, 300, 768),
      vector_case(KernelFamily::host_to_device, Precision::fp32, 1 << 22),
      vector_case(KernelFamily::device_to_host, Precision::fp32, 1 << 22),
      vector_case(KernelFamily::launch, Precision::fp32, 0),
      // The backward layouts (a layer's data and weight gradients), with sides that differ so that
      // a wrong leading dimension or index fails the output check.
      with_layout(gemm(Precision::bf16, 256, 384, 128), models::GemmLayout::nn),
      with_layout(gemm(Precision::fp16, 320, 192, 448), models::GemmLayout::tn),
      with_layout(gemm(Precision::fp32, 96, 160, 200), models::GemmLayout::tn),
      with_layout(gemm(Precision::fp64, 72, 40, 56), models::GemmLayout::nn)};
  RunOptions options;
  options.warmup = 1;
  options.repeats = 3;
  std::size_t progress_calls = 0;
  const auto ms = backend->measure(cases, options, [&](std::size_t, std::size_t, const KernelCase&) { ++progress_calls; });
  ASSERT_EQ(ms.size(), cases.size());
  EXPECT_EQ(progress_calls, cases.size() + 1);
  for (const Measurement& m : ms) {
    SCOPED_TRACE("family " + std::to_string(static_cast<int>(m.kernel.family)) + " " + std::string(models::to_string(m.kernel.precision)) + ": " + m.note);
    if (m.kernel.precision == Precision::fp8 && !backend->supports(m.kernel)) {
      EXPECT_NE(m.note.find("fp8"), std::string::npos);
      continue;
    }
    EXPECT_TRUE(m.output_ok);
    ASSERT_EQ(m.times_s.size(), 3u);
    for (double t : m.times_s) {
      EXPECT_GT(t, 0);
      EXPECT_LT(t, 1.0);   // every case above takes well under a second on any GPU
    }
  }
  // Bounds no GPU of today exceeds: a 512^3 fp16 GEMM is 2 * 512^3 = 2.7e8 FLOP, and no device
  // reaches 5e15 FLOP/s dense fp16 (the B200 sheet says 2.25e15); a pinned 16 MiB copy can not
  // beat 1e12 B/s (PCIe 6.0 x16 is 121 GB/s; a GH200's NVLink-C2C is 450 GB/s each way).
  EXPECT_GT(ms[2].times_s[0], 2.0 * 512 * 512 * 512 / 5e15);
  EXPECT_GT(ms[15].times_s[0], 16.0 * (1 << 20) / 1e12);
}

}  // namespace
}  // namespace dlsim::calibration::cuda

#else

TEST(CudaBackend, NotBuilt) { GTEST_SKIP() << "dlsim was built without CUDA (nvcc not found): no CUDA backend"; }

#endif
