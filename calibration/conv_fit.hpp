// Calibrating the convolution model (models/conv_model.hpp) on measured convolutions
// (DeepBench's rows, kernel_tables.hpp): a factor per algorithm and pass, the median of
// measured / mechanism over the rows where cuDNN chose that algorithm (WINOGRAD* -> Winograd,
// every *GEMM* -> implicit GEMM; FFT rows are not a modelled algorithm and are skipped). The
// mechanism is the GEMM model of the profile's fitted GEMM constants, so GEMMs are fitted first.
#pragma once
#include <vector>

#include "calibration/kernel_fit.hpp"
#include "calibration/kernel_tables.hpp"
#include "models/kernel_profile.hpp"

namespace dlsim::calibration {

models::ConvParams fit_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                            const models::KernelProfile& profile);
// Held-out predictions (grouped as kernel_fit.hpp says), appended to `out`.
void held_out_conv(const std::vector<const MeasuredConv*>& rows, const models::DeviceSpec& device,
                   const models::KernelProfile& profile, std::vector<HeldOut>& out);

}  // namespace dlsim::calibration
