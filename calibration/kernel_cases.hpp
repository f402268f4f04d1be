// The CUDA calibration's kernel tables: the GEMM shapes of LLM layers (as vidur measures them)
// added to the GPU case grid, and measured case statistics turned into the same tables
// `dlsim calibrate --import` reads (kernel_tables.hpp), so that a local GPU calibration and an
// import of published measurements fit one kernel model the same way (kernel_fit.hpp).
//
// GEMM cases are cuBLAS column-major TN calls (cuda/cuda_compute_cases.cu): C[m x n] = A^T B,
// which is PyTorch's F.linear seen row-major: Y[n x m] = X[n x k] W[m x k]^T. So a case's cuBLAS
// m is a layer's output features and its n the tokens; the tables hold the row-major shape
// (tokens, features, k) with layout NT, as vidur's do.
// Memory-bound cases become rows of their kernel class: copy, axpy (read x and y, write y) ->
// stream, GELU -> activation, row softmax -> softmax, row layer norm -> layer_norm. The op
// column holds the class name (kernel_tables.hpp reads class names as well as vidur's op names).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "calibration/kernel_tables.hpp"
#include "calibration/runner.hpp"

namespace dlsim::calibration {

// LLM-layer GEMMs (full and quick grids; none for held_out): the forward products (nt) at tokens
// 1 .. 4096 of the (features, k) of Llama-2-7B/70B-like layers at tensor-parallel splits 1 and 8,
// and their data (nn) and weight (tn) gradients at 256 .. 8192 tokens, in FP16 and BF16.
std::vector<KernelCase> llm_gemm_cases(Grid grid);

// Tables from measured statistics (unstable or failed cases are left out); `gpu` is the label
// written in the gpu column (the catalog device name for a local calibration).
KernelTables tables_from_stats(const std::vector<CaseStats>& stats, const std::string& gpu);

// Writes the GEMM rows in vidur's GEMM columns and the memory-bound rows in vidur's element-wise
// columns (gpu, source_model, op, tp, m, n, k, bias, dtype, median_ms, mean_ms, std_ms and gpu,
// source_model, op, tp, num_tokens, elements, bytes, dtype, median_ms, mean_ms, std_ms, n_runs).
void write_gemm_table(std::ostream& out, const std::vector<MeasuredGemm>& rows);
void write_memory_table(std::ostream& out, const std::vector<MeasuredMemoryKernel>& rows);

}  // namespace dlsim::calibration
