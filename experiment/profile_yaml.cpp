// Profile YAML (profile_yaml.hpp).
#include "experiment/profile_yaml.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "experiment/atomic_file.hpp"
#include "experiment/config_error.hpp"
#include "experiment/kernel_profile_yaml.hpp"
#include "experiment/yaml_reader.hpp"

namespace dlsim::experiment {
namespace {

using models::Precision;
constexpr Precision kPrecisions[] = {Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8};
constexpr double kHuge = 1e30;

void emit_curve(YAML::Emitter& out, const char* size_key, const models::EfficiencyCurve& c) {
  out << YAML::BeginMap;
  out << YAML::Key << size_key << YAML::Value << YAML::Flow << c.size;
  out << YAML::Key << "efficiency" << YAML::Value << YAML::Flow << c.efficiency;
  out << YAML::EndMap;
}

models::EfficiencyCurve read_curve(MapReader& parent, const std::string& key, const std::string& size_key) {
  MapReader r(parent.node(key), parent.path_of(key), parent.source());
  models::EfficiencyCurve c;
  c.size = read_number_list(r, size_key, 0, kHuge, true);
  c.efficiency = read_number_list(r, "efficiency", 0, 1, false);
  if (c.size.size() != c.efficiency.size()) {
    r.fail("efficiency", "has " + std::to_string(c.efficiency.size()) + " values for " + std::to_string(c.size.size()) + " sizes");
  }
  r.finish();
  return c;
}

}  // namespace

std::string profile_to_yaml(const ProfileDocument& doc) {
  const calibration::Calibration& cal = doc.calibration;
  YAML::Emitter out;
  out.SetDoublePrecision(17);  // round trip exactly
  out << YAML::BeginMap;
  out << YAML::Key << "dlsim_profile" << YAML::Value << 2;
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "device" << YAML::Value << cal.info.name;
  out << YAML::Key << "backend" << YAML::Value << cal.info.backend;
  out << YAML::Key << "driver" << YAML::Value << cal.info.driver;
  out << YAML::Key << "runtime" << YAML::Value << cal.info.runtime;
  out << YAML::Key << "units" << YAML::Value << cal.info.units;
  out << YAML::Key << "date" << YAML::Value << cal.date;
  out << YAML::Key << "dlsim_version" << YAML::Value << doc.dlsim_version;
  out << YAML::Key << "host" << YAML::Value << doc.host;
  out << YAML::EndMap;
  const models::DeviceSpec& d = cal.spec;
  out << YAML::Key << "device" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << d.name;
  out << YAML::Key << "description" << YAML::Value << d.description;
  out << YAML::Key << "peak_flops" << YAML::Value << YAML::BeginMap;
  for (Precision p : kPrecisions) {
    if (d.peak(p) > 0) out << YAML::Key << std::string(models::to_string(p)) << YAML::Value << d.peak(p);
  }
  out << YAML::EndMap;
  out << YAML::Key << "memory_bandwidth" << YAML::Value << d.memory_bandwidth;
  out << YAML::Key << "memory_bytes" << YAML::Value << d.memory_bytes;
  if (d.compute_units > 0) {
    out << YAML::Key << "generation" << YAML::Value << std::string(models::to_string(d.generation));
    out << YAML::Key << "compute_units" << YAML::Value << d.compute_units;
    out << YAML::Key << "l2_bytes" << YAML::Value << d.l2_bytes;
  }
  out << YAML::Key << "source" << YAML::Value << d.source;
  out << YAML::EndMap;
  const models::DeviceProfile& p = cal.profile;
  out << YAML::Key << "profile" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "matmul_efficiency" << YAML::Value << p.matmul_efficiency;
  out << YAML::Key << "memory_efficiency" << YAML::Value << p.memory_efficiency;
  out << YAML::Key << "kernel_launch_overhead_s" << YAML::Value << p.kernel_launch_overhead_s;
  out << YAML::Key << "matmul_curves" << YAML::Value << YAML::BeginMap;
  for (Precision q : kPrecisions) {
    const auto& c = p.matmul_curve[static_cast<std::size_t>(q)];
    if (c.empty()) continue;
    out << YAML::Key << std::string(models::to_string(q)) << YAML::Value;
    emit_curve(out, "flops", c);
  }
  out << YAML::EndMap;
  if (!p.memory_curve.empty()) {
    out << YAML::Key << "memory_curve" << YAML::Value;
    emit_curve(out, "bytes", p.memory_curve);
  }
  if (p.kernels.present()) {
    out << YAML::Key << "kernel_model" << YAML::Value;
    emit_kernel_profile(out, p.kernels);
  }
  out << YAML::Key << "source" << YAML::Value << p.source;
  out << YAML::EndMap;
  if (!doc.held_out.empty()) {
    out << YAML::Key << "held_out_errors" << YAML::Value << YAML::BeginSeq;
    for (const auto& e : doc.held_out) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "kernels" << YAML::Value << e.label << YAML::Key << "cases"
          << YAML::Value << e.cases << YAML::Key << "median_abs" << YAML::Value << e.median_abs << YAML::Key << "p90_abs"
          << YAML::Value << e.p90_abs << YAML::Key << "median_signed" << YAML::Value << e.median_signed << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "fit_errors" << YAML::Value << YAML::BeginMap;
  for (const auto& e : cal.errors) {
    out << YAML::Key << e.family << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "cases" << YAML::Value
        << e.cases << YAML::Key << "median_relative_error" << YAML::Value << e.median_relative_error << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "naive_gemm_flops" << YAML::Value << cal.naive_gemm_flops;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void write_profile(const std::string& path, const ProfileDocument& doc) {
  const std::string text = profile_to_yaml(doc);
  write_atomically(path, [&text](const std::string& tmp) {
    std::ofstream out(tmp);
    out << "# A dlsim device profile, written by `dlsim calibrate` (schema: experiment/profile_yaml.hpp).\n" << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  });
}

ProfileDocument read_profile_text(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError({name, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg);
  }
  const Source source{name, {}};
  if (!root.IsMap()) throw ConfigError({name, 0, 0}, "", "a profile is a mapping with keys dlsim_profile, metadata, device, profile");
  MapReader top(root, "", source);
  ProfileDocument doc;
  calibration::Calibration& cal = doc.calibration;
  top.integer("dlsim_profile", 1, 2);
  MapReader meta(top.node("metadata"), "metadata", source);
  cal.info.name = meta.text("device");
  cal.info.backend = meta.choice("backend", {"cpu", "cuda", "import"});
  cal.info.driver = meta.optional_text("driver").value_or("");
  cal.info.runtime = meta.optional_text("runtime").value_or("");
  cal.info.units = static_cast<int>(meta.integer("units", 0, 1'000'000, 0));
  cal.date = meta.text("date");
  doc.dlsim_version = meta.text("dlsim_version");
  doc.host = meta.optional_text("host").value_or("");
  meta.finish();

  MapReader dev(top.node("device"), "device", source);
  cal.spec.name = dev.text("name");
  cal.spec.description = dev.optional_text("description").value_or("");
  MapReader peaks(dev.node("peak_flops"), dev.path_of("peak_flops"), source);
  bool any_peak = false;
  for (Precision p : kPrecisions) {
    const std::string key(models::to_string(p));
    if (!peaks.has(key)) continue;
    cal.spec.peak_flops[static_cast<std::size_t>(p)] = peaks.number(key, 1, kHuge);
    any_peak = true;
  }
  if (!any_peak) dev.fail("peak_flops", "needs the peak of one precision at least (fp64, fp32, tf32, fp16, bf16, fp8)");
  peaks.finish();
  cal.spec.memory_bandwidth = dev.number("memory_bandwidth", 1, kHuge);
  cal.spec.memory_bytes = dev.number("memory_bytes", 0, kHuge, 0.0);
  if (dev.has("compute_units")) {
    const std::string g = dev.choice("generation", {"kepler", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell",
                                                    "cdna3", "tpu", "trainium"});
    for (auto gen : {models::Generation::kepler, models::Generation::pascal, models::Generation::volta, models::Generation::turing,
                     models::Generation::ampere, models::Generation::ada, models::Generation::hopper,
                     models::Generation::blackwell, models::Generation::cdna3, models::Generation::tpu,
                     models::Generation::trainium}) {
      if (models::to_string(gen) == g) cal.spec.generation = gen;
    }
    cal.spec.compute_units = static_cast<int>(dev.integer("compute_units", 1, 1'000'000));
    cal.spec.l2_bytes = dev.number("l2_bytes", 0, kHuge, 0.0);
  } else {
    dev.allow({"generation", "l2_bytes"});
  }
  cal.spec.source = dev.optional_text("source").value_or("profile " + name);
  dev.finish();

  MapReader prof(top.node("profile"), "profile", source);
  models::DeviceProfile& p = cal.profile;
  p.matmul_efficiency = prof.number("matmul_efficiency", 1e-9, 1);
  p.memory_efficiency = prof.number("memory_efficiency", 1e-9, 1);
  p.kernel_launch_overhead_s = prof.number("kernel_launch_overhead_s", 0, 1);
  MapReader curves(prof.node("matmul_curves"), prof.path_of("matmul_curves"), source, true);
  for (Precision q : kPrecisions) {
    const std::string key(models::to_string(q));
    if (!curves.has(key)) continue;
    if (!(cal.spec.peak(q) > 0)) curves.fail(key, "a curve for " + key + " needs device.peak_flops." + key);
    p.matmul_curve[static_cast<std::size_t>(q)] = read_curve(curves, key, "flops");
  }
  curves.finish();
  if (prof.has("memory_curve")) p.memory_curve = read_curve(prof, "memory_curve", "bytes");
  if (prof.has("kernel_model")) {
    if (cal.spec.compute_units < 1) prof.fail("kernel_model", "needs device.compute_units (and generation), which the GEMM model spreads its tiles over");
    p.kernels = read_kernel_profile(prof, "kernel_model");
  }
  p.source = prof.optional_text("source").value_or("profile " + name);
  prof.finish();

  MapReader errors(top.node("fit_errors"), "fit_errors", source, true);
  for (const auto& kv : top.node("fit_errors")) {
    const std::string family = kv.first.Scalar();
    MapReader e(errors.node(family), errors.path_of(family), source);
    calibration::FamilyError fe;
    fe.family = family;
    fe.cases = static_cast<int>(e.integer("cases", 1, 1'000'000));
    fe.median_relative_error = e.number("median_relative_error", 0, kHuge);
    e.finish();
    cal.errors.push_back(fe);
  }
  errors.finish();
  if (top.has("held_out_errors")) {
    const YAML::Node list = top.node("held_out_errors");
    if (!list.IsSequence()) top.fail("held_out_errors", "must be a list of {kernels, cases, median_abs, p90_abs, median_signed}");
    for (std::size_t i = 0; i < list.size(); ++i) {
      MapReader e(list[i], "held_out_errors[" + std::to_string(i) + "]", source);
      calibration::ErrorSummary s;
      s.label = e.text("kernels");
      s.cases = static_cast<int>(e.integer("cases", 1, 100'000'000));
      s.median_abs = e.number("median_abs", 0, kHuge);
      s.p90_abs = e.number("p90_abs", 0, kHuge);
      s.median_signed = e.number("median_signed", -kHuge, kHuge);
      e.finish();
      doc.held_out.push_back(s);
    }
  }
  cal.naive_gemm_flops = top.number("naive_gemm_flops", 0, kHuge, 0.0);
  top.finish();
  return doc;
}

ProfileDocument read_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError({path, 0, 0}, "", "cannot read the profile file (missing or unreadable)");
  std::stringstream text;
  text << in.rdbuf();
  return read_profile_text(text.str(), path);
}

}  // namespace dlsim::experiment
