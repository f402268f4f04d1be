// `dlsim kernel`: the kernel-level model of a catalog device on one kernel (--gemm or --memory),
// or on every row of a measured kernel table (--input, --output). The work is in
// experiment/kernel_predict.hpp and experiment/kernel_table_predict.hpp; this file checks which
// options go together.
#include <filesystem>
#include <iostream>
#include <system_error>

#include "cli/commands.hpp"
#include "experiment/atomic_file.hpp"
#include "experiment/config_error.hpp"
#include "experiment/kernel_predict.hpp"
#include "experiment/kernel_table_predict.hpp"

namespace dlsim::cli {
namespace {

const experiment::SourceLocation kWhere{"dlsim kernel", 0, 0};

[[noreturn]] void usage_error(const std::string& key, const std::string& why) {
  throw experiment::ConfigError(kWhere, key, why);
}

int predict_table(std::ostream& out, const KernelFlags& f) {
  if (f.output.empty())
    usage_error("--output", "missing: the table to write with predicted_ms (e.g. --output predicted.csv)");
  if (!f.device.empty() || !f.gpu.empty())
    usage_error("--input", "takes no --device or --gpu: each row's gpu column names it");
  std::error_code ec;  // an output that does not exist yet is not the input
  if (std::filesystem::equivalent(f.input, f.output, ec)) {
    usage_error("--output", "is the input table: write the predictions to another file");
  }
  const experiment::KernelTablePrediction p = experiment::predict_kernel_table_file(f.input);
  experiment::write_predicted_table_file(f.output, p);
  if (experiment::is_standard_output(f.output)) {
    std::cerr << experiment::prediction_summary(p) << "; wrote the table to standard output\n";
  } else {
    out << experiment::prediction_summary(p) << "; wrote " << f.output << "\n";
  }
  return 0;
}

}  // namespace

int kernel_command(std::ostream& out, const KernelFlags& f) {
  const int modes = !f.input.empty() + !f.gemm.empty() + !f.memory.empty();
  if (modes != 1)
    usage_error("", "give one of --gemm MxNxK, --memory CLASS --bytes N, or --input TABLE.csv --output OUT.csv");
  if (f.memory.empty() && !f.bytes.empty()) usage_error("--bytes", "goes with --memory CLASS");
  if (f.gemm.empty() && !(f.precision.empty() && f.layout.empty() && f.batch.empty())) {
    usage_error("--gemm", "--precision, --layout and --batch describe a GEMM: give its shape with --gemm MxNxK");
  }
  if (!f.input.empty()) return predict_table(out, f);
  if (!f.output.empty()) usage_error("--output", "goes with --input: one kernel is printed, not written");
  if (f.device.empty() == f.gpu.empty())
    usage_error("--device", "name the device: --device CATALOG-NAME or --gpu LABEL (one of them)");
  const std::string& name = f.device.empty() ? f.gpu : f.device;
  const experiment::KernelDevice device =
      experiment::kernel_device(name, kWhere, f.device.empty() ? "--gpu" : "--device");
  if (!f.memory.empty()) {
    if (f.bytes.empty()) usage_error("--bytes", "missing: the bytes the kernel moves (e.g. --bytes 64MiB)");
    const auto kernel = experiment::parse_memory_kernel(f.memory, kWhere, "--memory");
    const double bytes = experiment::parse_kernel_bytes(f.bytes, kWhere, "--bytes");
    experiment::print_memory_prediction(out, experiment::predict_memory_kernel(device, kernel, bytes, kWhere));
    return 0;
  }
  models::GemmShape shape = experiment::parse_gemm_shape(f.gemm, kWhere, "--gemm");
  shape.layout = experiment::parse_gemm_layout(f.layout.empty() ? "nt" : f.layout, kWhere, "--layout");
  shape.batch = experiment::parse_kernel_count(f.batch.empty() ? "1" : f.batch, kWhere, "--batch");
  const auto precision =
      experiment::parse_kernel_precision(f.precision.empty() ? "fp16" : f.precision, kWhere, "--precision");
  experiment::print_gemm_prediction(out, experiment::predict_gemm(device, shape, precision, kWhere));
  return 0;
}

}  // namespace dlsim::cli
