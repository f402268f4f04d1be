// Roofline time of one layer on one device (Williams, Waterman and Patterson, 2009): an
// operation is limited either by arithmetic (FLOPs over achieved FLOP/s) or by memory traffic
// (bytes over achieved bandwidth), whichever is slower, plus a fixed kernel-launch cost.
//
// Matrix layers (conv, linear, matmul) run at the precision's peak (tensor cores where the
// device has them) times the profile's matmul efficiency. Other layers (norms, elementwise,
// softmax, pooling, embedding lookups) run on the vector units: the FP32 peak, or the
// precision's peak on devices without an FP32 figure (TPUs). Memory traffic counts each
// layer's input and output activations and its weights once, at the precision's element size.
// Backward does the layer's backward FLOPs (model_graph.hpp: twice the forward for matrix layers,
// gradients for inputs and for weights) and moves about twice the bytes (reads the saved input and the output gradient, writes the input
// gradient; reads weights, writes weight gradients).
#pragma once

#include "models/device.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

struct LayerTime {
  double forward_s = 0;
  double backward_s = 0;
};

// A calibrated profile (device.hpp) gives efficiencies by the size of each kernel: a matrix
// layer's forward kernel by its FLOPs, each of its two backward kernels by half the backward
// FLOPs, memory traffic by the bytes of the call. Lookups outside the measured sizes use the
// nearest measured point and are counted in *out_of_range.
// Throws std::invalid_argument if the device has no peak for `precision` or batch < 1.
LayerTime layer_time(const Layer& layer, int batch, Precision precision, const DeviceSpec& device,
                     const DeviceProfile& profile, long long* out_of_range = nullptr);

bool is_matrix_layer(LayerKind kind);

}  // namespace dlsim::models
