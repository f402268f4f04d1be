// `dlsim calibrate` (calibrate.hpp).
#include "experiment/calibrate.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <utility>
#include <memory>

#include <unistd.h>

#include "calibration/cpu_backend.hpp"
#include "calibration/fit.hpp"
#include "calibration/kernel_cases.hpp"
#include "calibration/kernel_fit.hpp"
#include "calibration/runner.hpp"
#include "experiment/atomic_file.hpp"
#include "experiment/config_error.hpp"
#include "experiment/profile_yaml.hpp"
#include "experiment/results.hpp"
#include "models/catalog.hpp"

namespace dlsim::experiment {
namespace {

[[noreturn]] void usage_error(const std::string& key, const std::string& why) {
  throw ConfigError({"dlsim calibrate", 0, 0}, key, why);
}

std::unique_ptr<calibration::Backend> make_backend(const std::string& name) {
  if (name == "cpu") return calibration::make_cpu_backend();
  if (name != "cuda") usage_error("--backend", "unknown backend '" + name + "': use cpu or cuda");
  auto backend = calibration::make_cuda_backend();
  if (!backend) usage_error("--backend", "this dlsim was built without CUDA (nvcc was not found at configure time); use --backend cpu");
  if (!backend->available()) usage_error("--backend", "no CUDA device is visible on this machine; use --backend cpu");
  return backend;
}

calibration::RunnerOptions runner_options(const CalibrateOptions& o) {
  calibration::RunnerOptions r;
  r.run.repeats = o.repeats > 0 ? o.repeats : (o.quick ? 7 : 15);
  r.run.warmup = o.quick ? 2 : 3;
  r.max_spread = o.max_spread;
  if (!(o.max_spread > 0)) usage_error("--max-spread", "must be > 0");
  return r;
}

// The progress callback runs before every case: it is also where a set interrupt flag stops
// the measurements (sim::Interrupted), before anything is written.
calibration::Progress progress_bar(const CalibrateOptions& o, std::ostream& err) {
  if (!o.progress) {
    if (o.interrupt == nullptr) return nullptr;
    return [flag = o.interrupt](std::size_t, std::size_t, const calibration::KernelCase&) { sim::check_interrupt(flag); };
  }
  return [&err, flag = o.interrupt](std::size_t done, std::size_t total, const calibration::KernelCase& c) {
    sim::check_interrupt(flag);
    constexpr int kWidth = 30;
    const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
    err << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done << "/" << total << "  ";
    char what[64];
    std::snprintf(what, sizeof what, "%-30s", done == total ? "done" : (calibration::family_label(c) + " " + calibration::shape_label(c)).c_str());
    err << what << (done == total ? "\n" : "") << std::flush;
  };
}

std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
}

void print_errors(std::ostream& out, const std::vector<calibration::FamilyError>& errors) {
  out << "fit error per family (median |predicted - measured| / measured):\n";
  for (const auto& e : errors) {
    char line[96];
    std::snprintf(line, sizeof line, "  %-16s %3d cases %8.1f %%\n", e.family.c_str(), e.cases, 100 * e.median_relative_error);
    out << line;
  }
}

// A GPU calibration also measures LLM-layer GEMMs and memory-bound kernels: their tables are
// written beside the profile (in the columns `dlsim calibrate --import` reads) and fitted into the
// profile's kernel model, exactly as an import of published tables would be.
void add_kernel_model(ProfileDocument& doc, const std::vector<calibration::CaseStats>& stats, const std::string& profile_path,
                      std::ostream& out) {
  calibration::Calibration& cal = doc.calibration;
  if (cal.spec.compute_units < 1) {
    out << "no kernel model: " << cal.spec.name << " has no SM count in the catalog\n";
    return;
  }
  const calibration::KernelTables tables = calibration::tables_from_stats(stats, cal.spec.name);
  const std::string stem = profile_path.size() > 5 && profile_path.substr(profile_path.size() - 5) == ".yaml"
                               ? profile_path.substr(0, profile_path.size() - 5)
                               : profile_path;
  for (const auto& [suffix, is_gemm] : {std::pair<const char*, bool>{"-gemm.csv", true}, {"-elementwise.csv", false}}) {
    const std::string path = stem + suffix;
    const bool gemm = is_gemm;  // a structured binding cannot be captured before C++20 in clang 14
    write_atomically(path, [&](const std::string& tmp) {
      std::ofstream file(tmp);
      if (gemm) calibration::write_gemm_table(file, tables.gemm);
      else calibration::write_memory_table(file, tables.memory);
      if (!file) throw std::runtime_error("cannot write " + tmp);
    });
    out << "wrote " << path << "\n";
  }
  const calibration::KernelFit fit = calibration::fit_kernel_profile(tables, cal.spec.name, cal.spec, true);
  for (const std::string& note : fit.notes) out << "kernel model: " << note << "\n";
  cal.profile.kernels = fit.profile;
  cal.profile.kernels.source = "fitted on kernels measured by dlsim calibrate (" + cal.date + ")";
  doc.held_out = calibration::summarize_held_out(fit.held_out);
  for (const auto& e : doc.held_out) {
    char line[160];
    std::snprintf(line, sizeof line, "  held-out %-40s %6d cases  median %5.1f%%  p90 %5.1f%%\n", e.label.c_str(), e.cases,
                  100 * e.median_abs, 100 * e.p90_abs);
    out << line;
  }
}

}  // namespace

int calibrate(const CalibrateOptions& o, std::ostream& out, std::ostream& err) {
  if (o.out.empty()) usage_error("--out", "missing: the profile file to write (e.g. --out profile.yaml)");
  auto backend = make_backend(o.backend.empty() ? "cpu" : o.backend);
  const calibration::DeviceInfo info = backend->info();
  out << "calibrating " << info.name << " (" << info.backend << " backend, " << (o.quick ? "quick" : "full") << " grid)\n";
  // A GPU of the catalog keeps its datasheet peaks and catalog name (scenarios on its instances
  // then use the profile as measured); anything else (the CPU) uses measured peaks.
  const models::Catalog catalog = models::Catalog::builtin();
  const models::DeviceSpec* datasheet = nullptr;
  if (!o.device.empty()) {
    if (info.backend != "cuda") usage_error("--device", "names the catalog GPU being calibrated; the CPU has no catalog entry");
    datasheet = catalog.find_device(o.device);
    if (datasheet == nullptr) usage_error("--device", "no catalog device is named '" + o.device + "'; run 'dlsim catalog devices'");
  } else if (info.backend == "cuda") {
    for (const auto& [name, d] : catalog.devices()) {
      if (d.description == info.name) datasheet = &d;
    }
    if (datasheet == nullptr) {
      usage_error("--device", "which catalog device is '" + info.name + "'? name it (e.g. --device H100-SXM; 'dlsim catalog devices')");
    }
  }
  const calibration::Grid grid = o.quick ? calibration::Grid::quick : calibration::Grid::full;
  const auto stats = calibration::run_cases(*backend, info.backend == "cuda" ? calibration::gpu_case_grid(grid) : calibration::case_grid(grid),
                                            runner_options(o), progress_bar(o, err));
  calibration::print_summary(out, stats);
  ProfileDocument doc{calibration::fit(stats, info, today_utc(), datasheet), dlsim_version(), host_name()};
  if (info.backend == "cpu") {
    doc.calibration.spec.memory_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  }
  print_errors(out, doc.calibration.errors);
  if (info.backend == "cuda") add_kernel_model(doc, stats, o.out, out);
  write_profile(o.out, doc);
  out << "wrote " << o.out << " (" << doc.calibration.profile.source << ")\n";
  return 0;
}

int validate_profile(const CalibrateOptions& o, std::ostream& out, std::ostream& err) {
  const ProfileDocument doc = read_profile(o.validate);
  const calibration::Calibration& cal = doc.calibration;
  auto backend = make_backend(o.backend.empty() ? cal.info.backend : o.backend);
  const calibration::DeviceInfo info = backend->info();
  out << "validating " << o.validate << " (measured on " << cal.info.name << ", " << cal.date << ") against " << info.name << "\n";
  if (info.name != cal.info.name) out << "note: this machine is not the one the profile was measured on\n";
  const auto held_out = info.backend == "cuda" ? calibration::gpu_case_grid(calibration::Grid::held_out)
                                               : calibration::case_grid(calibration::Grid::held_out);
  const auto stats = calibration::run_cases(*backend, held_out, runner_options(o), progress_bar(o, err));
  char line[128];
  std::snprintf(line, sizeof line, "%-16s %-16s %14s %14s %9s\n", "kernel", "shape", "measured us", "predicted us", "error");
  out << "held-out cases (sizes not in the fitting grid):\n" << line;
  for (const auto& s : stats) {
    const double p = calibration::predict(s.kernel, cal.spec, cal.profile);
    if (!s.ok || !std::isfinite(p)) continue;
    std::snprintf(line, sizeof line, "%-16s %-16s %14.3f %14.3f %8.1f%%\n", calibration::family_label(s.kernel).c_str(),
                  calibration::shape_label(s.kernel).c_str(), s.median_s * 1e6, p * 1e6, 100 * (p - s.median_s) / s.median_s);
    out << line;
  }
  print_errors(out, calibration::family_errors(stats, cal.spec, cal.profile));
  return 0;
}

}  // namespace dlsim::experiment
