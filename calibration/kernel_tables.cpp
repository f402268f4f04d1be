// Reading measured kernel tables (kernel_tables.hpp).
#include "calibration/kernel_tables.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

namespace dlsim::calibration {
namespace {

using models::GemmLayout;
using models::MemoryKernel;
using models::Precision;

// One table's rows as name -> value, with located errors.
class Row {
 public:
  Row(const std::map<std::string, std::size_t>& columns, std::vector<std::string> cells, std::string where)
      : columns_(columns), cells_(std::move(cells)), where_(std::move(where)) {}

  bool has(const std::string& column) const { return columns_.count(column) != 0; }
  const std::string& text(const std::string& column) const {
    const auto it = columns_.find(column);
    if (it == columns_.end()) fail(column, "missing column");
    if (it->second >= cells_.size()) fail(column, "the row has fewer cells than the header");
    return cells_[it->second];
  }
  bool blank(const std::string& column) const { return text(column).empty(); }
  // A finite number > 0 (>= 0 with allow_zero).
  double number(const std::string& column, bool allow_zero = false) const {
    const std::string& t = text(column);
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != t.size() || !std::isfinite(v)) fail(column, "'" + t + "' is not a number");
    if (allow_zero ? v < 0 : !(v > 0)) fail(column, "'" + t + "' must be " + (allow_zero ? ">= 0" : "> 0"));
    return v;
  }
  [[noreturn]] void fail(const std::string& column, const std::string& why) const {
    throw std::invalid_argument(where_ + ": " + column + ": " + why);
  }

 private:
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> cells_;
  std::string where_;
};

Precision precision_of(const Row& r, const std::string& column) {
  const std::string& p = r.text(column);
  if (p == "fp16" || p == "fp16_mixed" || p == "fp16_pseudo") return Precision::fp16;
  if (p == "bf16") return Precision::bf16;
  if (p == "fp32") return Precision::fp32;
  if (p == "tf32") return Precision::tf32;
  if (p == "fp8") return Precision::fp8;
  if (p == "fp64") return Precision::fp64;  // dlsim calibrate --backend cuda measures FP64 GEMMs too
  r.fail(column, "unknown precision '" + p + "' (fp16, fp16_mixed, fp16_pseudo, bf16, fp32, tf32, fp8, fp64)");
}

// DeepBench's cuBLAS column-major transposes as a row-major layout (see the header).
GemmLayout deepbench_layout(const Row& r) {
  const std::string& a = r.text("a_transpose");
  const std::string& b = r.text("b_transpose");
  for (const auto* c : {&a, &b}) {
    if (*c != "N" && *c != "T") r.fail(c == &a ? "a_transpose" : "b_transpose", "'" + *c + "' must be N or T");
  }
  if (a == "N" && b == "N") return GemmLayout::nn;
  if (a == "T" && b == "N") return GemmLayout::nt;
  if (a == "N" && b == "T") return GemmLayout::tn;
  r.fail("a_transpose", "TT products are not modelled");
}

// The optional layout column of a vidur-format GEMM table (calibration/pytorch_kernels.py writes
// the three products of a layer): NT, NN or TN, row-major as gemm_model.hpp names them.
GemmLayout vidur_layout(const Row& r) {
  if (!r.has("layout") || r.blank("layout")) return GemmLayout::nt;
  std::string l = r.text("layout");
  for (char& c : l) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (l == "NT") return GemmLayout::nt;
  if (l == "NN") return GemmLayout::nn;
  if (l == "TN") return GemmLayout::tn;
  r.fail("layout", "'" + r.text("layout") + "' must be NT, NN or TN (row-major; TT is not modelled)");
}

void read_vidur_gemm(const Row& r, int line, KernelTables& into) {
  MeasuredGemm g;
  g.gpu = r.text("gpu");
  g.source = r.text("source_model");
  g.op = r.text("op");
  g.shape = {r.number("m"), r.number("n"), r.number("k"), 1, vidur_layout(r)};
  g.precision = precision_of(r, "dtype");
  g.shape.alignment_bytes = models::operand_alignment_bytes(g.shape, models::bytes_per_element(g.precision));
  g.seconds = r.number("median_ms") * 1e-3;
  g.line = line;
  into.gemm.push_back(g);
}

void read_vidur_elementwise(const Row& r, int line, KernelTables& into) {
  MeasuredMemoryKernel e;
  e.gpu = r.text("gpu");
  e.source = r.text("source_model");
  e.op = r.text("op");
  e.tokens = r.number("num_tokens");
  e.elements = r.number("elements");
  e.bytes = r.number("bytes");
  e.precision = precision_of(r, "dtype");
  e.seconds = r.number("median_ms") * 1e-3;
  e.line = line;
  try {
    e.kernel = vidur_memory_kernel(e.op, e.tokens, e.elements, e.bytes);
  } catch (const std::invalid_argument& ex) {
    r.fail("op", ex.what());
  }
  into.memory.push_back(e);
}

void read_deepbench_gemm(const Row& r, int line, KernelTables& into) {
  MeasuredGemm g;
  g.gpu = r.text("gpu");
  g.source = r.text("source");
  g.op = "gemm";
  // Column-major C[M x N] is row-major C^T[N x M]: m and n swap.
  g.shape = {r.number("n"), r.number("m"), r.number("k"), 1, deepbench_layout(r)};
  g.precision = precision_of(r, "precision");
  g.shape.alignment_bytes = models::operand_alignment_bytes(g.shape, models::bytes_per_element(g.precision));
  g.seconds = r.number("time_ms") * 1e-3;
  g.line = line;
  into.gemm.push_back(g);
}

void read_deepbench_conv(const Row& r, int line, KernelTables& into) {
  MeasuredConv c;
  c.gpu = r.text("gpu");
  c.source = r.text("source");
  c.algorithm = r.text("fwd_algorithm");
  c.precision = precision_of(r, "precision");
  c.shape = {r.number("n"), r.number("c"), r.number("h"), r.number("w"), r.number("k"), r.number("r_filter_h"),
             r.number("s_filter_w"), r.number("stride_h"), r.number("stride_w"), r.number("pad_h", true),
             r.number("pad_w", true)};
  c.line = line;
  const std::pair<const char*, models::ConvPass> passes[] = {{"fwd_ms", models::ConvPass::forward},
                                                             {"bwd_inputs_ms", models::ConvPass::data_gradient},
                                                             {"bwd_params_ms", models::ConvPass::weight_gradient}};
  for (const auto& [column, pass] : passes) {
    if (r.blank(column)) continue;  // DeepBench gives no input gradient for first layers
    c.pass = pass;
    c.seconds = r.number(column) * 1e-3;
    into.conv.push_back(c);
  }
}

bool has(const std::map<std::string, std::size_t>& columns, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (columns.count(n) == 0) return false;
  }
  return true;
}

}  // namespace

std::string to_string(TableFormat f) {
  switch (f) {
    case TableFormat::vidur_gemm: return "vidur GEMM";
    case TableFormat::vidur_elementwise: return "vidur element-wise";
    case TableFormat::deepbench_gemm: return "DeepBench GEMM";
    case TableFormat::deepbench_conv: return "DeepBench convolution";
  }
  return "?";
}

MemoryKernel vidur_memory_kernel(const std::string& op, double tokens, double elements, double bytes) {
  const double width = elements / tokens;  // E: elements per token
  if (op == "emb") return MemoryKernel::embedding;
  if (op == "add") return MemoryKernel::stream;
  if (op == "attn_rope") return MemoryKernel::rotary;
  if (op == "input_layernorm" || op == "post_attention_layernorm") {
    const double weights = bytes - 4 * elements;  // 2E (RMSNorm's scale) or 4E (LayerNorm's scale and shift)
    return std::abs(weights - 4 * width) < std::abs(weights - 2 * width) ? MemoryKernel::layer_norm : MemoryKernel::rms_norm;
  }
  if (op == "mlp_act") return bytes > 5 * elements ? MemoryKernel::gated_act : MemoryKernel::activation;
  // dlsim's own tables (kernel_cases.hpp) name the class itself.
  for (std::size_t c = 0; c < models::kMemoryKernels; ++c) {
    if (op == models::to_string(static_cast<MemoryKernel>(c))) return static_cast<MemoryKernel>(c);
  }
  throw std::invalid_argument("unknown element-wise op '" + op +
                              "' (emb, add, attn_rope, input_layernorm, post_attention_layernorm, mlp_act, or a dlsim "
                              "kernel class such as stream, layer_norm, softmax)");
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

TableFormat read_kernel_table(std::istream& in, const std::string& name, KernelTables& into) {
  std::string line;
  if (!std::getline(in, line)) throw std::invalid_argument(name + ":1: the table is empty (no header line)");
  std::map<std::string, std::size_t> columns;
  const auto header = split_csv_line(line);
  for (std::size_t i = 0; i < header.size(); ++i) columns[header[i]] = i;
  TableFormat format;
  if (has(columns, {"gpu", "source_model", "op", "m", "n", "k", "median_ms"})) {
    format = TableFormat::vidur_gemm;
  } else if (has(columns, {"gpu", "source_model", "op", "num_tokens", "elements", "bytes", "median_ms"})) {
    format = TableFormat::vidur_elementwise;
  } else if (has(columns, {"gpu", "precision", "m", "n", "k", "a_transpose", "b_transpose", "time_ms"})) {
    format = TableFormat::deepbench_gemm;
  } else if (has(columns, {"gpu", "precision", "w", "h", "c", "n", "k", "fwd_ms", "fwd_algorithm"})) {
    format = TableFormat::deepbench_conv;
  } else {
    throw std::invalid_argument(name + ":1: unknown table: the header matches none of vidur's GEMM or element-wise "
                                "tables or DeepBench's GEMM or convolution tables");
  }
  int number = 1;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    const Row row(columns, split_csv_line(line), name + ":" + std::to_string(number));
    switch (format) {
      case TableFormat::vidur_gemm: read_vidur_gemm(row, number, into); break;
      case TableFormat::vidur_elementwise: read_vidur_elementwise(row, number, into); break;
      case TableFormat::deepbench_gemm: read_deepbench_gemm(row, number, into); break;
      case TableFormat::deepbench_conv: read_deepbench_conv(row, number, into); break;
    }
    ++rows;
  }
  if (rows == 0) throw std::invalid_argument(name + ":2: the table has a header but no rows");
  into.files.push_back(name);
  return format;
}

TableFormat read_kernel_table_file(const std::string& path, KernelTables& into) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  return read_kernel_table(in, path, into);
}

}  // namespace dlsim::calibration
