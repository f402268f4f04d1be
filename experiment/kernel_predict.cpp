// Single-kernel predictions (kernel_predict.hpp).
#include "experiment/kernel_predict.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "experiment/builtin_profiles.hpp"
#include "experiment/calibrate_import.hpp"
#include "experiment/nearest_name.hpp"
#include "experiment/units.hpp"
#include "models/conv_model.hpp"
#include "models/fp8_recipe.hpp"

namespace dlsim::experiment {
namespace {

using models::MemoryKernel;
using models::Precision;

// A whole number >= 1 spelt with digits only ("4096").
bool whole_number(std::string_view text, double& value) {
  unsigned long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1) return false;
  value = static_cast<double>(v);
  return true;
}

std::string printf_string(const char* format, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

void print_interval(std::ostream& out, const KernelInterval& i, const char* family) {
  if (i.band.cases == 0) {
    out << "  error band  unknown: the profile holds no held-out " << family << " errors\n";
    return;
  }
  out << "  error band  " << format_duration(i.low_s) << " .. " << format_duration(i.high_s)
      << printf_string(": measured / predicted p10 %.3g, p90 %.3g", i.band.p10, i.band.p90) << " over " << i.band.cases
      << " held-out " << family << "\n";
}

}  // namespace

const models::Catalog& kernel_catalog() {
  static const models::Catalog catalog = builtin_catalog();
  return catalog;
}

KernelDevice kernel_device(const std::string& device_or_gpu, const SourceLocation& where, const std::string& key) {
  const models::Catalog& catalog = kernel_catalog();
  KernelDevice d;
  d.name = catalog_device_of_gpu_label(device_or_gpu).value_or(device_or_gpu);
  d.spec = catalog.find_device(d.name);
  if (d.spec == nullptr) {
    std::vector<std::string> known = catalog.device_names();
    for (const char* label : {"A100", "H100", "A40", "V100", "P100"}) known.emplace_back(label);
    throw ConfigError(where, key,
                      "unknown device or GPU label '" + device_or_gpu + "'" + did_you_mean(device_or_gpu, known) +
                          ": name a catalog device ('dlsim catalog devices') or a table label (A100, H100, "
                          "A40, V100, P100)");
  }
  d.profile = catalog.find_profile(d.name);
  if (d.profile == nullptr || !d.profile->kernels.present() || d.spec->compute_units < 1) {
    throw ConfigError(where, key,
                      d.name +
                          " has no kernel profile: no kernel was measured on it or a relative, so it runs on "
                          "the roofline (kernel profiles: A100, H100, A40, V100, P100 and their relatives)");
  }
  return d;
}

KernelInterval interval_of(const models::KernelProfile& kernels, models::KernelFamilyKind family, double seconds) {
  KernelInterval i;
  i.band = kernels.band(family);
  const bool known = i.band.cases > 0;
  i.low_s = seconds * (known ? i.band.p10 : 1.0);
  i.high_s = seconds * (known ? i.band.p90 : 1.0);
  return i;
}

GemmPrediction predict_gemm(const KernelDevice& device, const models::GemmShape& shape, Precision precision,
                            const SourceLocation& where) {
  const models::KernelProfile& kernels = device.profile->kernels;
  const models::GemmParams* params = kernels.gemm_for(precision);
  if (!device.spec->supports(precision)) {
    throw ConfigError(where, "precision",
                      device.name + " has no " + std::string(models::to_string(precision)) + " peak");
  }
  if (!(shape.m >= 1 && shape.n >= 1 && shape.k >= 1 && shape.batch >= 1) ||
      !std::isfinite(shape.m * shape.n * shape.k * shape.batch)) {
    throw ConfigError(where, "shape", "m, n, k and batch must be finite and >= 1");
  }
  GemmPrediction p;
  p.device = device;
  p.shape = shape;
  // A GEMM given by its shape is a dense row-major product: its alignment follows from the shape.
  p.shape.alignment_bytes = models::operand_alignment_bytes(shape, models::bytes_per_element(precision));
  p.precision = precision;
  for (std::size_t q = 0; q < kernels.gemm.size(); ++q) {
    if (&kernels.gemm[q] == params) p.fitted = static_cast<Precision>(q);
  }
  // FP8 without measured FP8 constants: the 16-bit constants at FP8's measured fraction of its
  // peak, as the training replay runs Transformer Engine's forward FP8 GEMM (models/fp8_recipe.hpp).
  const models::GemmParams used = models::lone_gemm_params(kernels, precision);
  p.estimate = models::gemm_time(p.shape, precision, *device.spec, used);
  p.tflops = 2 * shape.m * shape.n * shape.k * shape.batch / p.estimate.seconds / 1e12;
  p.interval = interval_of(kernels, models::KernelFamilyKind::gemm, p.estimate.seconds);
  return p;
}

MemoryPrediction predict_memory_kernel(const KernelDevice& device, MemoryKernel kernel, double bytes,
                                       const SourceLocation& where) {
  if (!(bytes > 0) || !std::isfinite(bytes)) throw ConfigError(where, "bytes", "must be a finite number > 0");
  const models::MemoryKernelParams& memory = device.profile->kernels.memory;
  MemoryPrediction p;
  p.device = device;
  p.kernel = kernel;
  p.bytes = bytes;
  if (const models::MemoryCurve* curve = memory.curve(kernel)) {
    p.has_curve = true;
    p.curve = static_cast<MemoryKernel>(curve - memory.curves.data());
  }
  p.seconds = models::memory_kernel_time(kernel, bytes, memory, device.spec->memory_bandwidth,
                                         device.profile->memory_efficiency);
  p.interval = interval_of(device.profile->kernels, models::KernelFamilyKind::memory, p.seconds);
  return p;
}

models::GemmShape parse_gemm_shape(const std::string& text, const SourceLocation& where, const std::string& key) {
  models::GemmShape s;
  double* dims[] = {&s.m, &s.n, &s.k};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    const std::size_t x = i < 2 ? rest.find_first_of("xX") : rest.size();
    if (x == std::string_view::npos || !whole_number(rest.substr(0, x), *dims[i])) {
      throw ConfigError(where, key,
                        "expected m x n x k as whole numbers >= 1, e.g. 4096x4096x4096, not '" + text + "'");
    }
    rest = x < rest.size() ? rest.substr(x + 1) : std::string_view();
  }
  return s;
}

std::string_view to_string(models::GemmLayout layout) {
  switch (layout) {
    case models::GemmLayout::nn:
      return "nn";
    case models::GemmLayout::nt:
      return "nt";
    case models::GemmLayout::tn:
      return "tn";
  }
  return "?";
}

models::GemmLayout parse_gemm_layout(const std::string& text, const SourceLocation& where, const std::string& key) {
  for (auto l : {models::GemmLayout::nn, models::GemmLayout::nt, models::GemmLayout::tn}) {
    if (text == to_string(l)) return l;
  }
  throw ConfigError(where, key,
                    "unknown layout '" + text +
                        "': nt (a linear layer's forward), nn (its input gradient) "
                        "or tn (its weight gradient)");
}

Precision parse_kernel_precision(const std::string& text, const SourceLocation& where, const std::string& key) {
  if (const auto p = models::parse_precision(text)) return *p;
  throw ConfigError(where, key, "unknown precision '" + text + "' (fp32, tf32, fp16, bf16, fp8, fp64)");
}

MemoryKernel parse_memory_kernel(const std::string& text, const SourceLocation& where, const std::string& key) {
  std::vector<std::string> names;
  for (std::size_t c = 0; c < models::kMemoryKernels; ++c) {
    names.emplace_back(models::to_string(static_cast<MemoryKernel>(c)));
    if (text == names.back()) return static_cast<MemoryKernel>(c);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError(where, key,
                    "unknown memory-bound kernel class '" + text + "'" + did_you_mean(text, names) + " (" + list + ")");
}

double parse_kernel_count(const std::string& text, const SourceLocation& where, const std::string& key) {
  double count = 0;
  if (!whole_number(text, count)) throw ConfigError(where, key, "expected a whole number >= 1, not '" + text + "'");
  return count;
}

double parse_kernel_bytes(const std::string& text, const SourceLocation& where, const std::string& key) {
  double bytes = 0;
  if (whole_number(text, bytes)) return bytes;
  std::string why;
  const auto size = parse_quantity(text, Dimension::size, why);
  if (!size || !(*size > 0)) throw ConfigError(where, key, size ? "must be > 0" : why);
  return *size;
}

void print_gemm_prediction(std::ostream& out, const GemmPrediction& p) {
  const models::GemmShape& s = p.shape;
  const models::GemmEstimate& e = p.estimate;
  const std::string precision(models::to_string(p.precision));
  out << "GEMM " << printf_string("%.0f x %.0f x %.0f", s.m, s.n, s.k) << " (m x n x k), " << precision << ", layout "
      << to_string(s.layout) << ", batch " << printf_string("%.0f", s.batch) << ", on " << p.device.name << "\n";
  const double peak = p.device.spec->peak(p.precision) / 1e12;
  out << "  predicted   " << format_duration(e.seconds) << ", "
      << printf_string("%.4g TFLOP/s (%.0f%% of the ", p.tflops, 100 * p.tflops / peak) << precision
      << printf_string(" peak, %.4g TFLOP/s)\n", peak);
  out << "  kernel      tile " << e.tile_m << " x " << e.tile_n << ", split-K " << e.split_k << ": "
      << printf_string("%.0f tiles in %.0f wave", e.tiles, e.waves) << (e.waves == 1 ? "" : "s") << " over "
      << p.device.spec->compute_units << " SMs, " << (e.memory_bound ? "memory-bound" : "compute-bound") << "\n";
  const models::GemmParams& params = *p.device.profile->kernels.gemm_for(p.precision);
  out << "  mechanism   " << format_duration(e.mechanism_s)
      << printf_string(", x %.3g (layout factor and shape correction)", (e.seconds - params.fixed_s) / e.mechanism_s)
      << " + " << format_duration(params.fixed_s) << " fixed";
  if (p.fitted != p.precision) out << "; constants fitted on " << models::to_string(p.fitted);
  if (p.precision == Precision::fp8 && p.fitted != p.precision) {
    out << ", peak fraction scaled for fp8 (fast accumulation, Transformer Engine's forward product)";
  }
  out << "\n";
  if (models::alignment_class(s.alignment_bytes) >= 0) {
    out << "  alignment   leading dimensions aligned to " << printf_string("%.0f", s.alignment_bytes)
        << " B, not 16: "
        << (e.alignment_factor != 1 ? printf_string("x %.3g, the measured slowdown of the kernels for such operands",
                                                    e.alignment_factor)
            : models::alignment_applies(*p.device.spec)
                ? std::string("no slowdown measured for this class on this device")
                : std::string("no slowdown of its own before Hopper (within the fitted constants)"))
        << "\n";
  }
  const double rate = p.device.profile->kernels.sustained_tensor_rate;
  if (rate < 1 && models::tensor_core_math(p.precision, *p.device.spec)) {
    out << "  under load  " << format_duration(e.seconds / rate)
        << printf_string(", %.4g TFLOP/s: tensor cores run back to back hold the GPU at its power limit (x %.3g, "
                         "models/power_limit.hpp); a training step runs between the two\n",
                         p.tflops * rate, rate);
  }
  print_interval(out, p.interval, "GEMMs (m >= 64)");
}

void print_memory_prediction(std::ostream& out, const MemoryPrediction& p) {
  const double bandwidth = p.device.spec->memory_bandwidth;
  out << "memory-bound kernel " << models::to_string(p.kernel) << " moving " << format_size(p.bytes) << " ("
      << printf_string("%.0f", p.bytes) << " B), on " << p.device.name << "\n";
  out << "  predicted   " << format_duration(p.seconds) << ", "
      << printf_string("%.4g GB/s (%.0f%% of the memory bandwidth, %.4g GB/s)\n", p.bytes / p.seconds / 1e9,
                       100 * p.bytes / p.seconds / bandwidth, bandwidth / 1e9);
  out << "  curve       ";
  if (!p.has_curve) {
    out << "none measured: bytes / (bandwidth x " << p.device.profile->memory_efficiency << ")\n";
  } else if (p.curve == p.kernel) {
    out << "measured " << models::to_string(p.curve) << " kernels\n";
  } else {
    out << "the " << models::to_string(p.curve) << " curve (" << models::to_string(p.kernel) << " was not measured)\n";
  }
  print_interval(out, p.interval, "memory kernels (> 1 MB)");
}

}  // namespace dlsim::experiment
