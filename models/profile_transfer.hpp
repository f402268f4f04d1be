// Transferring a profile measured on one device to another catalog device by their datasheet
// ratios, in the spirit of Habitat (Yu et al., USENIX ATC 2021: scale measured kernel times by
// the ratio of the two GPUs' compute and memory bandwidth).
//
// Model: a kernel of size s takes t0 + s / (e_max x peak) (a fixed latency, then the throughput
// limit), so its efficiency is e_max x s / (s + e_max x peak x t0). On a device with k times the
// peak the same efficiency is reached at k times the size: the target's curve is the measured
// one with its size axis multiplied by k (per precision for GEMM, by the bandwidth ratio for
// memory). The launch overhead and the scalars carry over unchanged. A precision the target has
// but the measured device lacks gets no curve (the scalar efficiency is used); `source` says
// what was done.
#pragma once
#include "models/device.hpp"

namespace dlsim::models {

DeviceProfile transfer_profile(const DeviceProfile& measured, const DeviceSpec& measured_on, const DeviceSpec& target);

// The kernel model (kernel_profile.hpp) of one device used for another. The GEMM constants are
// fractions of a precision's peak, of the memory bandwidth and of per-tile work, and the
// convolution factors are ratios to the GEMM model: they carry over as they are, and the target's
// own SM count, peaks and bandwidth make its times. A memory-kernel curve keeps its smallest
// time (launch and drain, a fixed cost) and scales the rest by the bandwidth ratio:
// t_target(b) = t_0 + (t(b) - t_0) x bandwidth_measured / bandwidth_target. The error bands
// carry over (widened by nothing: the transfer's own error is unknown; the source says so).
KernelProfile transfer_kernels(const KernelProfile& measured, const DeviceSpec& measured_on, const DeviceSpec& target);

}  // namespace dlsim::models
