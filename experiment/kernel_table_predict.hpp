// `dlsim kernel --input TABLE.csv --output OUT.csv`: every row of a measured kernel table
// (calibration/kernel_tables.hpp: vidur's GEMM or element-wise format, DeepBench's GEMM format)
// predicted by the shipped kernel profiles, and the table written back with a predicted_ms column
// appended: every other byte of each row as it was, so the result lines up with the input in any
// tool.
//
// Per row: GEMMs by models::gemm_time on the catalog device of the row's gpu (a table label such
// as A100, or a catalog device name), in the row's precision and layout; element-wise rows by
// models::memory_kernel_time for the class calibration::vidur_memory_kernel gives the op. A
// table without its time column (median_ms, DeepBench's time_ms) holds shapes only: it is
// predicted all the same, and the summary has no errors.
#pragma once
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "calibration/kernel_tables.hpp"

namespace dlsim::experiment {

struct PredictedKernelRow {
  int line = 0;        // in the table (the header is line 1)
  std::string op;      // as written (DeepBench GEMM rows: "gemm")
  std::string device;  // the catalog device it was predicted on
  double predicted_s = 0;
  double measured_s = 0;  // 0 when the table has no time column
};

struct KernelTablePrediction {
  std::string name;  // the file, for messages
  calibration::TableFormat format = calibration::TableFormat::vidur_gemm;
  bool measured = false;                 // the table has its time column
  std::vector<std::string> lines;        // every line as read, without its '\n' ('\r' kept)
  bool final_newline = true;             // the last line ended with '\n'
  std::vector<PredictedKernelRow> rows;  // one per non-blank row, in line order
};

// Reads and predicts a table. Throws ConfigError (file, line, column) for what the table reader
// rejects (unknown header, bad number, unknown op or precision), an unknown GPU, a device without
// a kernel profile, a convolution table, or a table that already has a predicted_ms column.
KernelTablePrediction predict_kernel_table(std::istream& in, const std::string& name);
KernelTablePrediction predict_kernel_table_file(const std::string& path);

// The table with predicted_ms appended (milliseconds, 6 significant digits).
void write_predicted_table(std::ostream& out, const KernelTablePrediction& p);
// The same into a file, atomically: a failure leaves no file.
void write_predicted_table_file(const std::string& path, const KernelTablePrediction& p);

// |predicted / measured - 1| per op (in order of first appearance), then "all" when there are
// several ops; empty without measured times.
struct KernelOpError {
  std::string op;
  int cases = 0;
  double median_abs = 0, p90_abs = 0;
};
std::vector<KernelOpError> errors_by_op(const KernelTablePrediction& p);

// One line: rows predicted, the format, and with measured times the errors per op.
std::string prediction_summary(const KernelTablePrediction& p);

}  // namespace dlsim::experiment
