// The kernel-level model from Python: one GEMM or memory-bound kernel on a catalog device
// (experiment/kernel_predict.hpp) and whole measured tables (experiment/kernel_table_predict.hpp),
// as dicts; bad input raises dlsim.ConfigError as `dlsim kernel` reports it.
#include <pybind11/stl.h>

#include <sstream>

#include "bindings/bind_common.hpp"
#include "experiment/kernel_predict.hpp"
#include "experiment/kernel_table_predict.hpp"

namespace dlsim::bindings {
namespace {

py::dict gemm_time(const std::string& device_or_gpu, double m, double n, double k, const std::string& precision,
                   const std::string& layout, double batch) {
  const experiment::SourceLocation where{"dlsim.kernel_time", 0, 0};
  const experiment::KernelDevice device = experiment::kernel_device(device_or_gpu, where, "device");
  models::GemmShape shape{m, n, k, batch, experiment::parse_gemm_layout(layout, where, "layout")};
  const auto p =
      experiment::predict_gemm(device, shape, experiment::parse_kernel_precision(precision, where, "precision"), where);
  py::dict out;
  out["device"] = p.device.name;
  out["seconds"] = p.estimate.seconds;
  out["tflops"] = p.tflops;
  out["tile_m"] = p.estimate.tile_m;
  out["tile_n"] = p.estimate.tile_n;
  out["split_k"] = p.estimate.split_k;
  out["tiles"] = p.estimate.tiles;
  out["waves"] = p.estimate.waves;
  out["memory_bound"] = p.estimate.memory_bound;
  out["mechanism_seconds"] = p.estimate.mechanism_s;
  out["band_p10_seconds"] = p.interval.low_s;
  out["band_p90_seconds"] = p.interval.high_s;
  out["band_cases"] = p.interval.band.cases;
  out["alignment_bytes"] = p.shape.alignment_bytes;
  out["alignment_factor"] = p.estimate.alignment_factor;
  return out;
}

py::dict memory_time(const std::string& device_or_gpu, const std::string& kernel, double bytes) {
  const experiment::SourceLocation where{"dlsim.memory_kernel_time", 0, 0};
  const experiment::KernelDevice device = experiment::kernel_device(device_or_gpu, where, "device");
  const auto p =
      experiment::predict_memory_kernel(device, experiment::parse_memory_kernel(kernel, where, "kernel"), bytes, where);
  py::dict out;
  out["device"] = p.device.name;
  out["seconds"] = p.seconds;
  out["bytes_per_second"] = p.bytes / p.seconds;
  out["curve"] = p.has_curve ? py::object(py::str(std::string(models::to_string(p.curve)))) : py::object(py::none());
  out["band_p10_seconds"] = p.interval.low_s;
  out["band_p90_seconds"] = p.interval.high_s;
  out["band_cases"] = p.interval.band.cases;
  return out;
}

py::dict table_dict(const experiment::KernelTablePrediction& p) {
  py::array_t<double> predicted(static_cast<py::ssize_t>(p.rows.size()));
  py::list lines, devices;
  auto v = predicted.mutable_unchecked<1>();
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    v(static_cast<py::ssize_t>(i)) = p.rows[i].predicted_s * 1e3;
    lines.append(p.rows[i].line);
    devices.append(p.rows[i].device);
  }
  py::list errors;
  for (const auto& e : experiment::errors_by_op(p)) {
    py::dict d;
    d["op"] = e.op;
    d["cases"] = e.cases;
    d["median_abs"] = e.median_abs;
    d["p90_abs"] = e.p90_abs;
    errors.append(d);
  }
  py::dict out;
  out["format"] = calibration::to_string(p.format);
  out["measured"] = p.measured;
  out["predicted_ms"] = predicted;
  out["lines"] = lines;
  out["devices"] = devices;
  out["errors"] = errors;
  out["summary"] = experiment::prediction_summary(p);
  return out;
}

}  // namespace

void bind_kernel(py::module_& m) {
  m.def("kernel_time", &gemm_time, py::arg("device"), py::arg("m"), py::arg("n"), py::arg("k"), py::arg("precision"),
        py::arg("layout"), py::arg("batch"),
        "One GEMM by the device's kernel model: time, TFLOP/s, tile, waves, error band.");
  m.def("memory_kernel_time", &memory_time, py::arg("device"), py::arg("kernel"), py::arg("bytes"),
        "One memory-bound kernel by the device's kernel model: time, the curve it ran on, error band.");
  m.def(
      "predict_kernel_table",
      [](const std::string& text, const std::string& name) {
        std::istringstream in(text);
        return table_dict(experiment::predict_kernel_table(in, name));
      },
      py::arg("text"), py::arg("name"), "Every row of a measured kernel table (CSV text) predicted.");
  m.def(
      "predict_kernel_table_file",
      [](const std::string& path) { return table_dict(experiment::predict_kernel_table_file(path)); }, py::arg("path"),
      "Every row of a measured kernel table (a CSV file) predicted.");
}

}  // namespace dlsim::bindings
