// CPU micro-kernels (cpu_backend.hpp).
#include "calibration/cpu_backend.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

namespace dlsim::calibration {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kMinRepeatSeconds = 20e-6;

// Keeps results observable so the optimizer cannot drop a kernel.
volatile double g_sink = 0;

std::vector<float> random_floats(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

[[gnu::noinline]] void empty_function() { asm volatile(""); }
void (*volatile g_empty)() = &empty_function;

[[gnu::noinline]] void naive_gemm(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float s = 0;
      for (std::int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
  }
}

float gelu(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }

bool close(double got, double want, double tolerance) { return std::abs(got - want) <= tolerance * std::abs(want); }

// One prepared case: `run` is one call; `check` compares its latest output with a reference.
struct Prepared {
  std::function<void()> run;
  std::function<bool()> check;
};

template <typename Scalar>
Prepared prepare_eigen_gemm(const KernelCase& c, std::mt19937_64& rng) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::uniform_real_distribution<double> u(0.5, 1.5);
  auto a = std::make_shared<Matrix>(Matrix::NullaryExpr(c.m, c.k, [&] { return static_cast<Scalar>(u(rng)); }));
  auto b = std::make_shared<Matrix>(Matrix::NullaryExpr(c.k, c.n, [&] { return static_cast<Scalar>(u(rng)); }));
  auto out = std::make_shared<Matrix>(c.m, c.n);
  const double tolerance = sizeof(Scalar) == 4 ? 1e-4 * std::sqrt(static_cast<double>(c.k)) : 1e-12 * static_cast<double>(c.k);
  Prepared p;
  p.run = [a, b, out] { out->noalias() = (*a) * (*b); };
  p.check = [a, b, out, c, tolerance, &rng] {
    // Sampled entries against a double-precision dot product (inputs are positive: no cancellation).
    std::uniform_int_distribution<std::int64_t> row(0, c.m - 1), col(0, c.n - 1);
    for (int s = 0; s < 16; ++s) {
      const std::int64_t i = row(rng), j = col(rng);
      double want = 0;
      for (std::int64_t q = 0; q < c.k; ++q) want += static_cast<double>((*a)(i, q)) * static_cast<double>((*b)(q, j));
      if (!close(static_cast<double>((*out)(i, j)), want, tolerance)) return false;
    }
    return true;
  };
  return p;
}

Prepared prepare_naive_gemm(const KernelCase& c, std::mt19937_64& rng) {
  auto a = std::make_shared<std::vector<float>>(random_floats(static_cast<std::size_t>(c.m * c.k), rng));
  auto b = std::make_shared<std::vector<float>>(random_floats(static_cast<std::size_t>(c.k * c.n), rng));
  auto out = std::make_shared<std::vector<float>>(static_cast<std::size_t>(c.m * c.n));
  Prepared p;
  p.run = [a, b, out, c] { naive_gemm(a->data(), b->data(), out->data(), c.m, c.n, c.k); };
  p.check = [a, b, out, c] {
    for (std::int64_t i = 0; i < c.m; i += std::max<std::int64_t>(1, c.m / 7)) {
      for (std::int64_t j = 0; j < c.n; j += std::max<std::int64_t>(1, c.n / 7)) {
        double want = 0;
        for (std::int64_t q = 0; q < c.k; ++q) want += double((*a)[i * c.k + q]) * double((*b)[q * c.n + j]);
        if (!close((*out)[i * c.n + j], want, 1e-4 * std::sqrt(double(c.k)))) return false;
      }
    }
    return true;
  };
  return p;
}

// Row kernels: softmax and layer norm of an m x n matrix, checked row by row in double.
Prepared prepare_rows(const KernelCase& c, std::mt19937_64& rng) {
  auto x = std::make_shared<std::vector<float>>(random_floats(static_cast<std::size_t>(c.m * c.n), rng));
  auto y = std::make_shared<std::vector<float>>(x->size());
  const bool softmax = c.family == KernelFamily::softmax;
  Prepared p;
  p.run = [x, y, c, softmax] {
    for (std::int64_t i = 0; i < c.m; ++i) {
      const float* in = x->data() + i * c.n;
      float* out = y->data() + i * c.n;
      if (softmax) {
        const float mx = *std::max_element(in, in + c.n);
        float s = 0;
        for (std::int64_t j = 0; j < c.n; ++j) s += (out[j] = std::exp(in[j] - mx));
        const float inv = 1.0f / s;
        for (std::int64_t j = 0; j < c.n; ++j) out[j] *= inv;
      } else {
        float s = 0, s2 = 0;
        for (std::int64_t j = 0; j < c.n; ++j) { s += in[j]; s2 += in[j] * in[j]; }
        const float mean = s / float(c.n);
        const float inv = 1.0f / std::sqrt(std::max(0.0f, s2 / float(c.n) - mean * mean) + 1e-5f);
        for (std::int64_t j = 0; j < c.n; ++j) out[j] = (in[j] - mean) * inv;
      }
    }
  };
  p.check = [x, y, c, softmax] {
    for (std::int64_t i = 0; i < c.m; i += std::max<std::int64_t>(1, c.m / 5)) {
      const float* in = x->data() + i * c.n;
      double mx = 0, s = 0, s2 = 0;
      for (std::int64_t j = 0; j < c.n; ++j) { mx = std::max(mx, double(in[j])); s += in[j]; s2 += double(in[j]) * in[j]; }
      double z = 0;
      for (std::int64_t j = 0; j < c.n; ++j) z += std::exp(in[j] - mx);
      const double mean = s / double(c.n);
      const double sd = std::sqrt(s2 / double(c.n) - mean * mean + 1e-5);
      for (std::int64_t j = 0; j < c.n; j += std::max<std::int64_t>(1, c.n / 9)) {
        const double want = softmax ? std::exp(in[j] - mx) / z : (in[j] - mean) / sd;
        if (std::abs((*y)[i * c.n + j] - want) > 1e-3 * std::max(1.0, std::abs(want))) return false;
      }
    }
    return true;
  };
  return p;
}

// Streams and elementwise kernels over `elements` floats.
Prepared prepare_stream(const KernelCase& c, std::mt19937_64& rng) {
  const auto n = static_cast<std::size_t>(c.elements);
  auto x = std::make_shared<std::vector<float>>(random_floats(n, rng));
  auto y = std::make_shared<std::vector<float>>(random_floats(n, rng));
  auto y0 = std::make_shared<std::vector<float>>(*y);   // y before the checked call (axpy updates y)
  auto sum = std::make_shared<double>(0);
  const float alpha = std::uniform_real_distribution<float>(0.5f, 1.5f)(rng);
  Prepared p;
  switch (c.family) {
    case KernelFamily::copy: p.run = [x, y] { std::copy(x->begin(), x->end(), y->begin()); g_sink = (*y)[0]; }; break;
    case KernelFamily::write: p.run = [y, alpha] { std::fill(y->begin(), y->end(), alpha); g_sink = y->back(); }; break;
    case KernelFamily::elementwise:
      p.run = [x, y, alpha] {
        float* __restrict out = y->data();
        const float* __restrict in = x->data();
        for (std::size_t i = 0; i < y->size(); ++i) out[i] = alpha * in[i] + out[i];
        g_sink = out[0];
      };
      break;
    case KernelFamily::activation:
      p.run = [x, y] { std::transform(x->begin(), x->end(), y->begin(), gelu); g_sink = (*y)[0]; };
      break;
    default:  // read and reduction: a (vectorized) sum, so that every element must be read
      p.run = [x, sum] {
        *sum = static_cast<double>(Eigen::Map<const Eigen::VectorXf>(x->data(), static_cast<Eigen::Index>(x->size())).sum());
        g_sink = *sum;
      };
  }
  p.check = [x, y, y0, sum, alpha, c] {
    if (c.family == KernelFamily::read || c.family == KernelFamily::reduction) {
      double want = 0;
      for (float v : *x) want += v;
      return close(*sum, want, 1e-3);
    }
    for (std::size_t i = 0; i < x->size(); i += std::max<std::size_t>(1, x->size() / 97)) {
      double want = 0;
      switch (c.family) {
        case KernelFamily::copy: want = (*x)[i]; break;
        case KernelFamily::write: want = alpha; break;
        case KernelFamily::elementwise: want = double(alpha) * (*x)[i] + (*y0)[i]; break;
        default: want = 0.5 * (*x)[i] * (1 + std::tanh(0.7978845608 * ((*x)[i] + 0.044715 * std::pow((*x)[i], 3))));
      }
      if (!close((*y)[i], want, 1e-5)) return false;
    }
    return true;
  };
  return p;
}

Prepared prepare(const KernelCase& c, std::mt19937_64& rng) {
  switch (c.family) {
    case KernelFamily::gemm:
      return c.precision == models::Precision::fp64 ? prepare_eigen_gemm<double>(c, rng) : prepare_eigen_gemm<float>(c, rng);
    case KernelFamily::gemm_naive: return prepare_naive_gemm(c, rng);
    case KernelFamily::softmax:
    case KernelFamily::layernorm: return prepare_rows(c, rng);
    case KernelFamily::launch: return {[] { g_empty(); }, [] { return true; }};
    default: return prepare_stream(c, rng);
  }
}

double seconds_of(const std::function<void()>& run, int calls) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) run();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

CpuBackend::CpuBackend(int threads) : threads_(threads) {
  if (threads_ > 0) Eigen::setNbThreads(threads_);
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

DeviceInfo CpuBackend::info() const {
  DeviceInfo d;
  d.name = cpu_model_name();
  d.backend = "cpu";
  d.units = Eigen::nbThreads();
  return d;
}

bool CpuBackend::supports(const KernelCase& c) const {
  using models::Precision;
  switch (c.family) {
    case KernelFamily::gemm: return (c.precision == Precision::fp32 || c.precision == Precision::fp64) && c.m > 0 && c.n > 0 && c.k > 0;
    case KernelFamily::gemm_naive: return c.precision == Precision::fp32 && c.m > 0 && c.n > 0 && c.k > 0;
    case KernelFamily::host_to_device:
    case KernelFamily::device_to_host: return false;
    case KernelFamily::launch: return true;
    case KernelFamily::softmax:
    case KernelFamily::layernorm: return c.precision == Precision::fp32 && c.m > 0 && c.n > 0;
    default: return c.precision == Precision::fp32 && c.elements > 0;
  }
}

Measurement CpuBackend::measure_one(const KernelCase& c, const RunOptions& options, std::uint64_t case_seed) {
  Measurement m;
  m.kernel = c;
  if (!supports(c)) {
    m.note = "not measured on the CPU backend";
    return m;
  }
  std::mt19937_64 rng(case_seed);
  Prepared p = prepare(c, rng);
  p.run();
  m.output_ok = p.check();
  if (!m.output_ok) {
    m.note = "output differs from the reference";
    return m;
  }
  // Calls per timed repeat: enough to last kMinRepeatSeconds.
  const double one = std::max(1e-9, seconds_of(p.run, 1));
  const int calls = static_cast<int>(std::clamp(std::ceil(kMinRepeatSeconds / one), 1.0, 1e7));
  for (int i = 0; i < options.warmup; ++i) seconds_of(p.run, calls);
  for (int i = 0; i < options.repeats; ++i) m.times_s.push_back(seconds_of(p.run, calls) / calls);
  return m;
}

std::vector<Measurement> CpuBackend::measure(const std::vector<KernelCase>& cases, const RunOptions& options,
                                             const Progress& progress) {
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (progress) progress(i, cases.size(), cases[i]);
    out.push_back(measure_one(cases[i], options, options.seed * 1'000'003ULL + i));
  }
  if (progress && !cases.empty()) progress(cases.size(), cases.size(), cases.back());
  return out;
}

std::unique_ptr<Backend> make_cpu_backend(int threads) { return std::make_unique<CpuBackend>(threads); }

}  // namespace dlsim::calibration
