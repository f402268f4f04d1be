// The CUDA calibration's kernel tables (kernel_cases.hpp).
#include "calibration/kernel_cases.hpp"

#include <cstdio>
#include <optional>

namespace dlsim::calibration {
namespace {

using models::MemoryKernel;
using models::Precision;

constexpr const char* kSource = "dlsim-calibrate";

std::optional<MemoryKernel> memory_class(KernelFamily f) {
  switch (f) {
    case KernelFamily::copy:
    case KernelFamily::elementwise: return MemoryKernel::stream;
    case KernelFamily::activation: return MemoryKernel::activation;
    case KernelFamily::softmax: return MemoryKernel::softmax;
    case KernelFamily::layernorm: return MemoryKernel::layer_norm;
    default: return std::nullopt;
  }
}

// The layout column's text (kernel_tables.hpp reads NT, NN, TN).
const char* layout_label(models::GemmLayout l) {
  switch (l) {
    case models::GemmLayout::nn: return "NN";
    case models::GemmLayout::tn: return "TN";
    case models::GemmLayout::nt: break;
  }
  return "NT";
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", seconds * 1e3);
  return buf;
}

}  // namespace

std::vector<KernelCase> llm_gemm_cases(Grid grid) {
  if (grid == Grid::held_out) return {};
  // (output features, input features) of Llama-2-7B (hidden 4096, FFN 11008) and Llama-2-70B
  // (8192, 28672, 8 K/V heads) layers: QKV, attention output, gate+up, down; whole and split 8 ways.
  const std::vector<std::pair<std::int64_t, std::int64_t>> full{
      {12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}, {1536, 4096}, {4096, 512}, {2752, 4096}, {4096, 1376},
      {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}, {1280, 8192}, {8192, 1024}, {7168, 8192}, {8192, 3584}};
  const std::vector<std::pair<std::int64_t, std::int64_t>> quick{{12288, 4096}, {4096, 11008}};
  std::vector<std::int64_t> tokens{1, 8, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
  if (grid == Grid::quick) tokens = {1, 64, 512};
  // A layer's data gradient (nn: k = features) and weight gradient (tn: k = tokens) at training
  // token counts, for the layout factors and long reductions the forward shapes do not show.
  const std::vector<std::int64_t> backward_tokens =
      grid == Grid::quick ? std::vector<std::int64_t>{512} : std::vector<std::int64_t>{256, 1024, 2048, 4096, 8192};
  std::vector<KernelCase> out;
  for (Precision p : {Precision::fp16, Precision::bf16}) {
    for (const auto& [features, depth] : grid == Grid::quick ? quick : full) {
      for (std::int64_t t : tokens) out.push_back({KernelFamily::gemm, p, features, t, depth, 0});
      for (std::int64_t t : backward_tokens) {
        // dX[t x depth] = dY[t x features] W[features x depth]; dW[features x depth] = dY^T X.
        out.push_back({KernelFamily::gemm, p, depth, t, features, 0, models::GemmLayout::nn});
        out.push_back({KernelFamily::gemm, p, depth, features, t, 0, models::GemmLayout::tn});
      }
    }
  }
  return out;
}

KernelTables tables_from_stats(const std::vector<CaseStats>& stats, const std::string& gpu) {
  KernelTables t;
  for (const CaseStats& s : stats) {
    if (!s.ok || !s.stable) continue;
    const KernelCase& c = s.kernel;
    if (c.family == KernelFamily::gemm) {
      MeasuredGemm g;
      g.gpu = gpu;
      g.source = kSource;
      g.op = "gemm";
      g.shape = {double(c.n), double(c.m), double(c.k), 1, c.layout};
      g.precision = c.precision;
      g.seconds = s.median_s;
      t.gemm.push_back(g);
    } else if (const auto k = memory_class(c.family)) {
      MeasuredMemoryKernel e;
      e.gpu = gpu;
      e.source = kSource;
      e.op = std::string(models::to_string(*k));
      e.kernel = *k;
      const bool rows = c.family == KernelFamily::softmax || c.family == KernelFamily::layernorm;
      e.tokens = rows ? double(c.m) : 1.0;
      e.elements = rows ? double(c.m) * double(c.n) : double(c.elements);
      e.bytes = c.bytes();
      e.precision = c.precision;
      e.seconds = s.median_s;
      t.memory.push_back(e);
    }
  }
  return t;
}

void write_gemm_table(std::ostream& out, const std::vector<MeasuredGemm>& rows) {
  out << "gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,mean_ms,std_ms,layout\n";
  for (const MeasuredGemm& g : rows) {
    out << g.gpu << "," << g.source << "," << g.op << ",1," << g.shape.m << "," << g.shape.n << "," << g.shape.k << ",0,"
        << models::to_string(g.precision) << "," << ms(g.seconds) << "," << ms(g.seconds) << ",0," << layout_label(g.shape.layout) << "\n";
  }
}

void write_memory_table(std::ostream& out, const std::vector<MeasuredMemoryKernel>& rows) {
  out << "gpu,source_model,op,tp,num_tokens,elements,bytes,dtype,median_ms,mean_ms,std_ms,n_runs\n";
  for (const MeasuredMemoryKernel& e : rows) {
    out << e.gpu << "," << e.source << "," << e.op << ",1," << e.tokens << "," << e.elements << "," << e.bytes << ","
        << models::to_string(e.precision) << "," << ms(e.seconds) << "," << ms(e.seconds) << ",0,1\n";
  }
}

}  // namespace dlsim::calibration
