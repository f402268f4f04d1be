// Kernel-model sections of profile files (kernel_profile_yaml.hpp).
#include "experiment/kernel_profile_yaml.hpp"

#include <cctype>
#include <cmath>

namespace dlsim::experiment {
namespace {

using models::Precision;
constexpr Precision kPrecisions[] = {Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8};
constexpr const char* kLayouts[] = {"nn", "nt", "tn"};
constexpr const char* kDims[] = {"m", "n", "k"};
constexpr const char* kAlignmentKeys[] = {"1B", "2B", "4B", "8B"};  // by models::alignment_class
constexpr double kHuge = 1e30;

void emit_list(YAML::Emitter& out, const char* key, const std::vector<double>& v) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << v;
}

void emit_gemm(YAML::Emitter& out, const models::GemmParams& g) {
  out << YAML::BeginMap;
  out << YAML::Key << "peak_fraction" << YAML::Value << g.peak_fraction;
  out << YAML::Key << "tile_overhead" << YAML::Value << g.tile_overhead;
  out << YAML::Key << "k_overhead" << YAML::Value << g.k_overhead;
  out << YAML::Key << "bandwidth_fraction" << YAML::Value << g.bandwidth_fraction;
  out << YAML::Key << "fixed_s" << YAML::Value << g.fixed_s;
  out << YAML::Key << "layout_factor" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (std::size_t l = 0; l < 3; ++l) out << YAML::Key << kLayouts[l] << YAML::Value << g.layout_factor[l];
  out << YAML::EndMap;
  bool measured = false;
  for (double f : g.alignment_factor) measured = measured || f > 0;
  if (measured) {  // written only when measured, so profiles without misaligned rows read as before
    out << YAML::Key << "alignment_factor" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (std::size_t c = 0; c < g.alignment_factor.size(); ++c) {
      if (g.alignment_factor[c] > 0) out << YAML::Key << kAlignmentKeys[c] << YAML::Value << g.alignment_factor[c];
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "correction" << YAML::Value << YAML::BeginMap;
  for (std::size_t d = 0; d < 3; ++d) {
    if (g.correction[d].empty()) continue;
    out << YAML::Key << kDims[d] << YAML::Value << YAML::BeginMap;
    emit_list(out, "nodes", g.correction[d].nodes);
    emit_list(out, "values", g.correction[d].values);
    out << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
}

models::GemmParams read_gemm(MapReader& parent, const std::string& key) {
  MapReader r(parent.node(key), parent.path_of(key), parent.source());
  models::GemmParams g;
  g.peak_fraction = r.number("peak_fraction", 1e-6, 1);
  g.tile_overhead = r.number("tile_overhead", 0, 1e6);
  g.k_overhead = r.number("k_overhead", 0, 1e9);
  g.bandwidth_fraction = r.number("bandwidth_fraction", 1e-6, 10);
  g.fixed_s = r.number("fixed_s", 0, 1);
  MapReader layouts(r.node("layout_factor"), r.path_of("layout_factor"), r.source(), true);
  for (std::size_t l = 0; l < 3; ++l) g.layout_factor[l] = layouts.number(kLayouts[l], 1e-3, 1e3, 1.0);
  layouts.finish();
  if (r.has("alignment_factor")) {
    MapReader align(r.node("alignment_factor"), r.path_of("alignment_factor"), r.source(), true);
    for (std::size_t c = 0; c < g.alignment_factor.size(); ++c) {
      g.alignment_factor[c] = align.number(kAlignmentKeys[c], 0, 1000, 0.0);
    }
    align.finish();
  }
  MapReader corr(r.node("correction"), r.path_of("correction"), r.source(), true);
  for (std::size_t d = 0; d < 3; ++d) {
    if (!corr.has(kDims[d])) continue;
    MapReader c(corr.node(kDims[d]), corr.path_of(kDims[d]), r.source());
    auto& f = g.correction[d];
    f.nodes = read_number_list(c, "nodes", -64, 64, true);
    f.values = read_number_list(c, "values", -20, 20, false);
    if (f.nodes.size() != f.values.size()) c.fail("values", "has " + std::to_string(f.values.size()) + " values for " + std::to_string(f.nodes.size()) + " nodes");
    c.finish();
  }
  corr.finish();
  r.finish();
  return g;
}

models::MemoryCurve read_memory_curve(MapReader& parent, const std::string& key) {
  MapReader r(parent.node(key), parent.path_of(key), parent.source());
  models::MemoryCurve c;
  c.bytes = read_number_list(r, "bytes", 0, kHuge, true);
  c.seconds = read_number_list(r, "seconds", 0, 1e6, false);
  if (c.bytes.size() != c.seconds.size()) r.fail("seconds", "has " + std::to_string(c.seconds.size()) + " values for " + std::to_string(c.bytes.size()) + " sizes");
  for (std::size_t i = 1; i < c.seconds.size(); ++i) {
    if (c.seconds[i] < c.seconds[i - 1]) r.fail("seconds", "must not decrease (a larger kernel is never faster)");
  }
  r.finish();
  return c;
}

models::ErrorBand read_band(MapReader& parent, const std::string& key) {
  MapReader r(parent.node(key), parent.path_of(key), parent.source());
  models::ErrorBand b;
  b.cases = static_cast<int>(r.integer("cases", 0, 100'000'000));
  b.p10 = r.number("p10", 1e-6, 1e6);
  b.p50 = r.number("p50", 1e-6, 1e6);
  b.p90 = r.number("p90", 1e-6, 1e6);
  if (!(b.p10 <= b.p50 && b.p50 <= b.p90)) r.fail("p90", "the quantiles must satisfy p10 <= p50 <= p90");
  b.median_abs = r.number("median_abs", 0, 1e6, 0.0);
  b.p90_abs = r.number("p90_abs", 0, 1e6, 0.0);
  r.finish();
  return b;
}

}  // namespace

std::vector<double> read_number_list(MapReader& r, const std::string& key, double min, double max, bool increasing) {
  const YAML::Node list = r.node(key);
  if (!list.IsDefined()) r.fail_missing(key, "a list of numbers");
  if (!list.IsSequence() || list.size() == 0) r.fail(key, "must be a non-empty list of numbers");
  std::vector<double> v;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = r.path_of(key) + "[" + std::to_string(i) + "]";
    const auto bad = [&](const std::string& why) { throw ConfigError(r.source().locate(list[i], path), path, why); };
    if (!list[i].IsScalar()) bad("must be a number");
    std::string lower = list[i].Scalar();
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos) {
      bad("must be a finite number, not " + list[i].Scalar());
    }
    double x = 0;
    std::size_t used = 0;
    try {
      x = std::stod(list[i].Scalar(), &used);
    } catch (const std::exception&) {
      bad("'" + list[i].Scalar() + "' is not a number");
    }
    if (used != list[i].Scalar().size()) bad("'" + list[i].Scalar() + "' is not a number");
    if (!std::isfinite(x)) bad("must be a finite number, not " + list[i].Scalar());
    if (x < min || x > max || (min == 0 && x == 0)) bad("value " + list[i].Scalar() + " is out of range: " + (min == 0 ? "(0, " + std::to_string(max) + "]" : describe_range(min, max)));
    if (increasing && !v.empty() && !(x > v.back())) bad("sizes must increase strictly (" + list[i].Scalar() + " follows " + list[i - 1].Scalar() + ")");
    v.push_back(x);
  }
  return v;
}


void emit_kernel_profile(YAML::Emitter& out, const models::KernelProfile& k) {
  out << YAML::BeginMap;
  out << YAML::Key << "source" << YAML::Value << k.source;
  out << YAML::Key << "gemm" << YAML::Value << YAML::BeginMap;
  for (Precision p : kPrecisions) {
    const models::GemmParams& g = k.gemm[static_cast<std::size_t>(p)];
    if (!g.fitted()) continue;
    out << YAML::Key << std::string(models::to_string(p)) << YAML::Value;
    emit_gemm(out, g);
  }
  out << YAML::EndMap;
  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  for (std::size_t c = 0; c < models::kMemoryKernels; ++c) {
    const models::MemoryCurve& curve = k.memory.curves[c];
    if (curve.empty()) continue;
    out << YAML::Key << std::string(models::to_string(static_cast<models::MemoryKernel>(c))) << YAML::Value << YAML::BeginMap;
    emit_list(out, "bytes", curve.bytes);
    emit_list(out, "seconds", curve.seconds);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "conv" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, value] : k.conv.named()) out << YAML::Key << name << YAML::Value << value;
  out << YAML::EndMap;
  out << YAML::Key << "host" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "forward_kernel_s" << YAML::Value << k.host.forward_kernel_s;
  out << YAML::Key << "backward_kernel_s" << YAML::Value << k.host.backward_kernel_s;
  out << YAML::EndMap;
  if (k.sustained_tensor_rate < 1) out << YAML::Key << "sustained_tensor_rate" << YAML::Value << k.sustained_tensor_rate;
  out << YAML::Key << "error_bands" << YAML::Value << YAML::BeginMap;
  for (std::size_t f = 0; f < models::kKernelFamilies; ++f) {
    const models::ErrorBand& b = k.bands[f];
    if (b.cases == 0) continue;
    out << YAML::Key << std::string(models::to_string(static_cast<models::KernelFamilyKind>(f))) << YAML::Value << YAML::Flow
        << YAML::BeginMap << YAML::Key << "cases" << YAML::Value << b.cases << YAML::Key << "p10" << YAML::Value << b.p10
        << YAML::Key << "p50" << YAML::Value << b.p50 << YAML::Key << "p90" << YAML::Value << b.p90 << YAML::Key
        << "median_abs" << YAML::Value << b.median_abs << YAML::Key << "p90_abs" << YAML::Value << b.p90_abs << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::EndMap;
}

models::KernelProfile read_kernel_profile(MapReader& parent, const std::string& key) {
  MapReader r(parent.node(key), parent.path_of(key), parent.source());
  models::KernelProfile k;
  k.source = r.optional_text("source").value_or("");
  MapReader gemm(r.node("gemm"), r.path_of("gemm"), r.source());
  for (Precision p : kPrecisions) {
    const std::string name(models::to_string(p));
    if (gemm.has(name)) k.gemm[static_cast<std::size_t>(p)] = read_gemm(gemm, name);
  }
  gemm.finish();
  if (!k.present()) r.fail("gemm", "needs the constants of one precision at least (fp16, bf16, fp32, ...)");
  MapReader memory(r.node("memory"), r.path_of("memory"), r.source(), true);
  for (std::size_t c = 0; c < models::kMemoryKernels; ++c) {
    const std::string name(models::to_string(static_cast<models::MemoryKernel>(c)));
    if (memory.has(name)) k.memory.curves[c] = read_memory_curve(memory, name);
  }
  memory.finish();
  MapReader conv(r.node("conv"), r.path_of("conv"), r.source(), true);
  for (const auto& [name, value] : models::ConvParams{}.named()) {
    if (conv.has(name)) k.conv.set(name, conv.number(name, 0, 1e6));
  }
  conv.finish();
  MapReader host(r.node("host"), r.path_of("host"), r.source(), true);
  k.host.forward_kernel_s = host.number("forward_kernel_s", 0, 1, k.host.forward_kernel_s);
  k.host.backward_kernel_s = host.number("backward_kernel_s", 0, 1, k.host.backward_kernel_s);
  host.finish();
  k.sustained_tensor_rate = r.number("sustained_tensor_rate", 1e-3, 1, 1.0);
  MapReader bands(r.node("error_bands"), r.path_of("error_bands"), r.source(), true);
  for (std::size_t f = 0; f < models::kKernelFamilies; ++f) {
    const std::string name(models::to_string(static_cast<models::KernelFamilyKind>(f)));
    if (bands.has(name)) k.bands[f] = read_band(bands, name);
  }
  bands.finish();
  r.finish();
  return k;
}

}  // namespace dlsim::experiment
