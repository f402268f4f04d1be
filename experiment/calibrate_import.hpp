// `dlsim calibrate --import TABLE.csv [--import ...] [--gpu LABEL] [--device NAME] --out FILE`:
// measured kernel tables (calibration/kernel_tables.hpp: vidur's GEMM and element-wise tables,
// DeepBench's GEMM and convolution tables, or what `dlsim calibrate --backend cuda` writes) fitted
// into a device profile with a kernel model (calibration/kernel_fit.hpp), in the same profile
// format a local calibration writes, with the held-out errors printed and stored in the file.
#pragma once
#include <optional>
#include <ostream>
#include <string>

#include "experiment/calibrate.hpp"

namespace dlsim::experiment {

// The catalog device a measured table's GPU label names ("A100" -> "A100-80GB", vidur's and
// DeepBench's labels); nullopt for labels dlsim does not know.
std::optional<std::string> catalog_device_of_gpu_label(const std::string& label);
// The reverse: the label the shipped tables use for a catalog device; nullopt if none.
std::optional<std::string> gpu_label_of_catalog_device(const std::string& device);

int import_kernel_tables(const CalibrateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlsim::experiment
