// Calibrating the convolution model (models/conv_model.hpp) on measured convolutions
// (DeepBench's rows, kernel_tables.hpp), per slot of ConvParams (fp32; 16-bit):
//   1. the mechanism's own constants, k0 of the convolution tiles and the bandwidth fraction
//      of convolution traffic, by a grid search (k0 in {0, 8, 16, 32, 64}, bandwidth 0.3 to 1.0
//      in steps of 0.1) for the least mean squared log error of the full model's prediction;
//   2. at each grid point, the factors: the median of measured / mechanism over the rows where
//      cuDNN chose the algorithm (WINOGRAD* -> Winograd where it applies, every *GEMM* ->
//      implicit GEMM; FFT rows are not a modelled algorithm and are skipped), per pass; for the
//      implicit GEMM also over first layers (C < 8) and strided data gradients, each a factor of
//      its own. DeepBench names only the forward algorithm; the gradients are attributed to it
//      too. A factor needs at least 4 rows; without them the plain factor (or, for Winograd,
//      no candidate) is used.
// The mechanism uses the profile's fitted GEMM constants (e_max, tile overhead, fixed time), so
// GEMMs are fitted first.
#pragma once
#include <vector>

#include "calibration/kernel_fit.hpp"
#include "calibration/kernel_tables.hpp"
#include "models/kernel_profile.hpp"

namespace dlsim::calibration {

// The algorithm a DeepBench row is attributed to; false for algorithms not modelled (FFT).
bool conv_row_algorithm(const MeasuredConv& row, const models::DeviceSpec& device, models::ConvAlgorithm& algorithm);

models::ConvParams fit_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                            const models::KernelProfile& profile);
// Held-out predictions (grouped as kernel_fit.hpp says), appended to `out`.
void held_out_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                   const models::KernelProfile& profile, std::vector<HeldOut>& out);

}  // namespace dlsim::calibration
