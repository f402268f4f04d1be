// Measured kernel tables: the CSV formats of ../shared/reference/kernels (vidur's GEMM and
// element-wise tables, DeepBench's GEMM and convolution tables) and what `dlsim calibrate
// --backend cuda` writes (the same columns as vidur's), read into plain records for the kernel
// fitter (kernel_fit.hpp) and `dlsim kernel`. The format is told by the header line.
//
// Columns used (others are ignored):
//   vidur GEMM          gpu, source_model, op, m, n, k, dtype, median_ms, optional layout
//                       (Y[m, n] = X[m, k] W[n, k]^T: layout NT; a layout column, as
//                       calibration/pytorch_kernels.py writes, may say NN or TN)
//   vidur element-wise  gpu, source_model, op, num_tokens, elements, bytes, dtype, median_ms
//   DeepBench GEMM      gpu, precision, source, m, n, k, a_transpose, b_transpose, time_ms
//                       (cuBLAS column-major C[M, N] = op(A) op(B); as row-major C^T = op(B)^T
//                       op(A)^T, so the row-major layout swaps and the transposes: NN -> NN,
//                       TN -> NT, NT -> TN)
//   DeepBench conv      gpu, precision, source, w, h, c, n, k, s_filter_w, r_filter_h, pad_w,
//                       pad_h, stride_w, stride_h, fwd_ms, bwd_inputs_ms, bwd_params_ms,
//                       fwd_algorithm (one record per pass with a time)
// Precisions: fp16 (vidur dtype), fp32, fp16_mixed (tensor cores), fp16_pseudo (FP16 storage,
// FP32 arithmetic) -> fp16 for the last two.
#pragma once
#include <istream>
#include <string>
#include <vector>

#include "models/conv_model.hpp"
#include "models/gemm_model.hpp"
#include "models/memory_kernel_model.hpp"
#include "models/precision.hpp"

namespace dlsim::calibration {

enum class TableFormat { vidur_gemm, vidur_elementwise, deepbench_gemm, deepbench_conv };
std::string to_string(TableFormat f);

struct MeasuredGemm {
  std::string gpu, source, op;        // source: the model or application the shape comes from
  models::GemmShape shape;
  models::Precision precision = models::Precision::fp16;
  double seconds = 0;
  int line = 0;                       // in its file, for messages and for writing rows back
};

struct MeasuredMemoryKernel {
  std::string gpu, source, op;
  models::MemoryKernel kernel = models::MemoryKernel::stream;
  double tokens = 0, elements = 0, bytes = 0;
  models::Precision precision = models::Precision::fp16;
  double seconds = 0;
  int line = 0;
};

struct MeasuredConv {
  std::string gpu, source, algorithm;  // the algorithm cuDNN chose for the forward pass
  models::ConvShape shape;
  models::ConvPass pass = models::ConvPass::forward;
  models::Precision precision = models::Precision::fp32;
  double seconds = 0;
  int line = 0;
};

struct KernelTables {
  std::vector<MeasuredGemm> gemm;
  std::vector<MeasuredMemoryKernel> memory;
  std::vector<MeasuredConv> conv;
  std::vector<std::string> files;     // what was read, in order
  bool empty() const { return gemm.empty() && memory.empty() && conv.empty(); }
};

// The memory-kernel class of a vidur element-wise row (see memory_kernel_model.hpp). Norms and
// activations are told apart by their traffic: RMSNorm moves 4 T E + 2 E bytes and LayerNorm
// 4 T E + 4 E (E = elements / tokens); a gated activation 6 bytes per output element, GELU 4.
// An op may also be a class name (stream, layer_norm, ...: the tables dlsim calibrate writes).
models::MemoryKernel vidur_memory_kernel(const std::string& op, double tokens, double elements, double bytes);

// Parses one table; `name` is used in messages. Throws std::invalid_argument
// "name:line: column: why" for an unknown header, a missing column, an unparsable or
// non-positive number, or an unknown precision or op.
TableFormat read_kernel_table(std::istream& in, const std::string& name, KernelTables& into);
// Reads a file (std::invalid_argument "path: cannot be read" if it cannot be opened).
TableFormat read_kernel_table_file(const std::string& path, KernelTables& into);

// Splits one CSV line (RFC 4180 quoting: "a,b" and "" inside quotes).
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace dlsim::calibration
