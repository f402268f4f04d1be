// `dlsim calibrate --import` (calibrate_import.hpp).
#include "experiment/calibrate_import.hpp"

#include <ctime>
#include <cstdio>
#include <set>
#include <utility>

#include "calibration/kernel_fit.hpp"
#include "calibration/kernel_tables.hpp"
#include "experiment/config_error.hpp"
#include "experiment/profile_yaml.hpp"
#include "experiment/results.hpp"
#include "models/catalog.hpp"

namespace dlsim::experiment {
namespace {

// The GPU labels of ../shared/reference/kernels and the catalog devices they are:
// vidur's A100 is the 80 GB SXM4 (its docs/profiling.md), its H100 an SXM-class H100 (the
// fastest GEMM exceeds the PCIe peak), A40 the PCIe card; DeepBench's V100 a DGX-1 V100 SXM2
// (16 GB) and its P100 a PCIe card (DeepBench's README lists it among PCIe systems).
const std::pair<const char*, const char*> kGpuLabels[] = {
    {"A100", "A100-80GB"}, {"H100", "H100-SXM"}, {"A40", "A40"}, {"V100", "V100-16GB"}, {"P100", "P100-PCIe"}};

[[noreturn]] void usage_error(const std::string& key, const std::string& why) {
  throw ConfigError({"dlsim calibrate", 0, 0}, key, why);
}

std::string today() {
  char buf[16];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void print_held_out(std::ostream& out, const std::vector<calibration::ErrorSummary>& summary) {
  out << "held-out error (each source model or fold predicted by a fit without it):\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-44s %7s %10s %10s %10s\n", "kernels", "cases", "median |e|", "p90 |e|", "median e");
  out << line;
  for (const auto& s : summary) {
    std::snprintf(line, sizeof line, "  %-44s %7d %9.1f%% %9.1f%% %+9.1f%%\n", s.label.c_str(), s.cases, 100 * s.median_abs,
                  100 * s.p90_abs, 100 * s.median_signed);
    out << line;
  }
}

}  // namespace

std::optional<std::string> catalog_device_of_gpu_label(const std::string& label) {
  for (const auto& [gpu, device] : kGpuLabels) {
    if (label == gpu) return std::string(device);
  }
  return std::nullopt;
}

std::optional<std::string> gpu_label_of_catalog_device(const std::string& name) {
  for (const auto& [gpu, device] : kGpuLabels) {
    if (name == device) return std::string(gpu);
  }
  return std::nullopt;
}

namespace {

// --layout-reference: the table whose rows of the same device (its gpu column naming the catalog
// device or the imported tables' label) set the layout factors the imported tables cannot. Read
// before the fit, so that a bad reference fails at once; returns the rows' gpu label.
std::string read_layout_reference(const std::string& path, const std::string& gpu, const models::DeviceSpec& device,
                                  calibration::KernelTables& reference) {
  try {
    calibration::read_kernel_table_file(path, reference);
  } catch (const std::invalid_argument& e) {
    throw ConfigError({path, 0, 0}, "--layout-reference", e.what());
  }
  std::string label;
  for (const auto& r : reference.gemm) {
    if (r.gpu == device.name || r.gpu == gpu) label = r.gpu;
  }
  if (label.empty()) {
    throw ConfigError({path, 0, 0}, "--layout-reference",
                      "no GEMM row is for " + device.name + " (gpu column '" + device.name + "' or '" + gpu + "')");
  }
  return label;
}

}  // namespace

int import_kernel_tables(const CalibrateOptions& o, std::ostream& out, std::ostream& err) {
  if (o.out.empty()) usage_error("--out", "missing: the profile file to write (e.g. --out a100.yaml)");
  calibration::KernelTables tables;
  for (const std::string& path : o.import_tables) {
    try {
      const auto format = calibration::read_kernel_table_file(path, tables);
      err << "read " << path << " (" << calibration::to_string(format) << ")\n";
    } catch (const std::invalid_argument& e) {
      throw ConfigError({path, 0, 0}, "--import", e.what());
    }
  }
  std::set<std::string> labels;
  for (const auto& r : tables.gemm) labels.insert(r.gpu);
  for (const auto& r : tables.memory) labels.insert(r.gpu);
  for (const auto& r : tables.conv) labels.insert(r.gpu);
  std::string gpu = o.gpu;
  if (gpu.empty() && !o.device.empty()) gpu = gpu_label_of_catalog_device(o.device).value_or("");
  if (gpu.empty() && labels.size() == 1) gpu = *labels.begin();
  if (gpu.empty()) {
    std::string list;
    for (const auto& l : labels) list += (list.empty() ? "" : ", ") + l;
    usage_error("--gpu", "the tables hold several GPUs (" + list + "): name one with --gpu");
  }
  if (labels.count(gpu) == 0) usage_error("--gpu", "no row of the tables is for GPU '" + gpu + "'");
  const std::string device_name = !o.device.empty() ? o.device : catalog_device_of_gpu_label(gpu).value_or("");
  if (device_name.empty()) usage_error("--device", "which catalog device is GPU '" + gpu + "'? name it (e.g. --device A100-80GB)");
  const models::Catalog catalog = models::Catalog::builtin();
  const models::DeviceSpec* device = catalog.find_device(device_name);
  if (device == nullptr) usage_error("--device", "no catalog device is named '" + device_name + "'; run 'dlsim catalog devices'");
  if (device->compute_units < 1) usage_error("--device", device_name + " has no compute-unit count: the kernel model cannot be fitted for it");

  calibration::KernelTables reference;
  const std::string reference_gpu =
      o.layout_reference.empty() ? "" : read_layout_reference(o.layout_reference, gpu, *device, reference);
  out << "fitting the kernel model of " << device_name << " on GPU '" << gpu << "' of " << tables.files.size() << " table(s)\n";
  calibration::KernelFit fit;
  try {
    fit = calibration::fit_kernel_profile(tables, gpu, *device, true);
  } catch (const std::invalid_argument& e) {
    usage_error("--import", e.what());
  }
  for (const std::string& note : fit.notes) out << "kernel model: " << note << "\n";
  std::string sources;
  for (const auto& f : tables.files) sources += (sources.empty() ? "" : ", ") + f.substr(f.find_last_of('/') + 1);
  fit.profile.source = "fitted by dlsim calibrate --import on GPU '" + gpu + "' of " + sources;
  if (!o.layout_reference.empty()) {
    const std::string name = o.layout_reference.substr(o.layout_reference.find_last_of('/') + 1);
    fit.profile.source += "; layout factors relative to the best-measured layout from " + name;
    for (const std::string& note :
         calibration::apply_layout_reference(fit.profile, tables, gpu, reference, reference_gpu, *device)) {
      out << "layout reference: " << note << "\n";
    }
  }
  const std::vector<calibration::ErrorSummary> summary = calibration::summarize_held_out(fit.held_out);
  print_held_out(out, summary);

  ProfileDocument doc;
  calibration::Calibration& cal = doc.calibration;
  cal.info.name = gpu;
  cal.info.backend = "import";
  cal.info.units = device->compute_units;
  cal.date = today();
  cal.spec = *device;
  cal.profile = *catalog.find_profile(device_name);
  cal.profile.kernels = fit.profile;
  cal.profile.source = fit.profile.source;
  doc.dlsim_version = dlsim_version();
  doc.held_out = summary;
  write_profile(o.out, doc);
  out << "wrote " << o.out << "\n";
  return 0;
}

}  // namespace dlsim::experiment
