// From measured kernel tables (kernel_tables.hpp) to a models::KernelProfile, and the held-out
// error of that fit.
//
// GEMM, per precision: the mechanism's constants (gemm_model.hpp: e_max, c, k0, b, fixed time)
// minimise the mean squared log error log(predicted / measured) over the rows (Nelder-Mead from
// three starts; the mechanism is piecewise, so no gradient). Then the layout factors: the median
// measured / mechanism per layout with at least 8 rows. Then the correction: the residual log
// error as f_m(log2 m) + f_n(log2 n) + f_k(log2 k), each piecewise linear on nodes every 2 in
// log2 over the measured range, by ridge least squares (lambda 1 on the node values).
// Memory-bound kernels, per class: log time against log bytes, piecewise linear on nodes at
// every power of two of the measured range, by least squares with a second-difference penalty
// (a smooth curve through noisy rows), made non-decreasing.
// Convolutions, per algorithm and pass: the median measured / mechanism (conv_model.hpp), the
// algorithm being the one cuDNN chose (WINOGRAD* -> Winograd, every *GEMM* -> implicit GEMM).
//
// Held-out error ("rules of evidence"): the rows are grouped by their source (the model a vidur
// shape comes from, the DeepBench application); each group is predicted by a fit on the other
// groups (leave-one-model-out). A family with a single source, or one source holding more than
// half its rows (DeepBench's V100 sheet is 150 of 160 DeepSpeech shapes), is split into five
// folds by row order instead. The quantiles of measured / predicted over the held-out predictions are the
// profile's error bands; the report lists the errors per family, precision, group and size.
#pragma once
#include <string>
#include <vector>

#include "calibration/kernel_tables.hpp"
#include "models/device_spec.hpp"
#include "models/kernel_profile.hpp"

namespace dlsim::calibration {

// One held-out prediction.
struct HeldOut {
  models::KernelFamilyKind family = models::KernelFamilyKind::gemm;
  std::string label;        // "gemm fp16", "memory rms_norm", "conv implicit_gemm forward"
  std::string group;        // the held-out source (or "fold 3")
  double size = 0;          // GEMM: m; memory: bytes; conv: FLOPs of the direct convolution
  double measured_s = 0, predicted_s = 0;
  double error() const { return predicted_s / measured_s - 1; }
};

struct ErrorSummary {
  std::string label;        // family label, plus " (subset)" for a size range
  int cases = 0;
  double median_abs = 0, p90_abs = 0;   // of |predicted / measured - 1|
  double median_signed = 0;             // of predicted / measured - 1
};

struct KernelFit {
  models::KernelProfile profile;
  std::vector<HeldOut> held_out;
  // What was left out, one line each (a GEMM precision with too few rows to fit: that precision
  // then borrows another's fractions at run time, models/kernel_profile.hpp).
  std::vector<std::string> notes;
};

// Fits the rows of `tables` measured on `gpu` (the label in the tables' gpu column) for
// `device`. Throws std::invalid_argument when no row is for that GPU or no GEMM precision has the
// 12 rows with 16-byte aligned operands a fit needs (misaligned rows set the alignment slowdowns,
// gemm_model.hpp). A GEMM precision with fewer rows is skipped (said in `notes`: a local
// calibration measures FP64, FP32, TF32 and FP8 on a few square sizes only, for the peaks); a
// memory class with fewer than 4 rows is skipped.
// `held_out`: also run the leave-one-group-out predictions (slower: one fit per group).
KernelFit fit_kernel_profile(const KernelTables& tables, const std::string& gpu, const models::DeviceSpec& device,
                             bool held_out = true);

// The layout factors of a fit whose tables hold too few rows of a layout (vidur's are all forward
// NT products), set from a reference table of the same device that measured every layout: for
// each fitted GEMM precision, each layout with fewer than 8 rows of `gpu` in `fitted_on` has its
// factor scaled so that, over the reference's rows of that layout (those of `reference_gpu`), the
// median measured / predicted equals that of the layout the fit measured most. Only these ratios
// come from the reference, not its level: two measurements of the same kernels can differ by more
// than the ratios (calibration/measured/h100-sxm/README.md). Returns a line per factor set (and
// per layout left as it was for want of reference rows).
std::vector<std::string> apply_layout_reference(models::KernelProfile& profile, const KernelTables& fitted_on,
                                                const std::string& gpu, const KernelTables& reference,
                                                const std::string& reference_gpu, const models::DeviceSpec& device);

// Median and 90th percentile absolute error of held-out predictions, per label, and per size
// range (GEMM m < 64 and m >= 64; memory kernels up to and above 1 MB; all memory classes above
// 1 MB together), in the order labels first appear.
std::vector<ErrorSummary> summarize_held_out(const std::vector<HeldOut>& held_out);
// The error bands of a profile (kernel_profile.hpp) from its held-out predictions.
void set_error_bands(models::KernelProfile& profile, const std::vector<HeldOut>& held_out);

// Fitting pieces, exposed for tests.
models::GemmParams fit_gemm(const std::vector<const MeasuredGemm*>& rows, const models::DeviceSpec& device,
                            models::Precision precision);
models::MemoryCurve fit_memory_curve(const std::vector<const MeasuredMemoryKernel*>& rows);

}  // namespace dlsim::calibration
