// From measured case statistics to a device profile.
//
// Model (per GEMM precision, and for the memory streams copy/read/write together): the time of
// one call is t(s) = t0 + s / R, with s the call's work (FLOPs for GEMM, bytes moved for
// streams), t0 a fixed cost and R the asymptotic rate. It is linear in (t0, 1/R), so it is
// fitted by Eigen least squares, weighting each case by 1 / t_measured so that small and large
// calls count alike (relative error, not absolute). Why this model: the measured efficiency
// rises with size because a fixed per-call cost is amortized; two parameters describe that
// with few cases and never oscillate between points, and the fit error per family says how
// well it holds (CPU caches, for instance, make mid-size streams faster than it predicts).
//
// Peaks: with a datasheet (a GPU of the catalog) the efficiencies are fractions of its peaks;
// without one (the CPU) the peaks are the best measured rates, launch overhead excluded (best
// s / (t - L) of any GEMM case per precision, of any stream case for bytes/s), and
// DeviceSpec::source says so.
// Efficiency curve points are taken at each measured size: eff(s) = s / (peak * (t(s) - L)),
// L the launch overhead (the roofline adds L per kernel itself), clamped to (0, 1].
// Fit error per family: median over its cases of |predicted - measured| / measured, with
// `predict` below, i.e. exactly as the profile would be used.
#pragma once
#include <string>
#include <vector>

#include "calibration/runner.hpp"
#include "models/device.hpp"

namespace dlsim::calibration {

struct FamilyError {
  std::string family;          // family_label(): "gemm fp32", "copy", ...
  int cases = 0;
  double median_relative_error = 0;
};

struct Calibration {
  DeviceInfo info;
  models::DeviceSpec spec;       // the peaks the profile's efficiencies are fractions of
  models::DeviceProfile profile;
  std::vector<FamilyError> errors;
  double naive_gemm_flops = 0;   // best rate of our own plain GEMM (the floor), FLOP/s; 0 if absent
  std::string date;              // ISO date of the measurement
};

// `datasheet`: the device's catalog spec, or nullptr to use the best measured rates as peaks.
// Throws std::invalid_argument when there is too little to fit (fewer than two sizes of an
// fp32 GEMM or of the memory streams, or no launch case).
Calibration fit(const std::vector<CaseStats>& stats, const DeviceInfo& info, const std::string& date,
                const models::DeviceSpec* datasheet = nullptr);

// Predicted seconds of one call from a spec and profile: L + work / (peak x efficiency(work)).
// NaN for kernels a profile does not model (our naive GEMM, precisions without a peak).
double predict(const KernelCase& c, const models::DeviceSpec& spec, const models::DeviceProfile& profile);

// Median relative error of `predict` per family label, in the order families first appear.
std::vector<FamilyError> family_errors(const std::vector<CaseStats>& stats, const models::DeviceSpec& spec,
                                       const models::DeviceProfile& profile);

}  // namespace dlsim::calibration
