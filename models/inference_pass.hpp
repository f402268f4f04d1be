// The time of one inference (forward-only) pass of a batch through a model of the zoo that is not
// served token by token: a CNN or an encoder such as BERT, answering one sample per request
// (an image, a sequence). What a dynamic-batching server (Triton, TorchServe) or a serverless
// function runs per batch.
//
// Every layer's forward kernels are timed as in training (layer_kernels.hpp: GEMMs and
// convolutions by shape, memory-bound kernels by class and bytes) where the device has a kernel
// profile, else by the roofline (roofline.hpp). Left out, as inference skips them: dropout
// (identity in evaluation mode) and the loss. Batch norm stays a kernel of its own (PyTorch eager
// in evaluation mode does not fold it into the convolution).
// The host launches kernels asynchronously: a pass takes the longer of the kernels' device time
// and the host's launches (kernels x the profile's forward launch cost).
#pragma once
#include <unordered_map>

#include "models/device.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

class InferencePass {
 public:
  // Throws std::invalid_argument for a precision the device cannot run or a model with no layer.
  InferencePass(ModelGraph model, DeviceSpec device, DeviceProfile profile, Precision precision);

  // Seconds of one forward pass of `batch` samples (>= 1); memoized per batch size.
  double batch_s(int batch) const;
  // The weights' bytes at the serving precision (what a replica loads at a cold start).
  double weight_bytes() const { return weight_bytes_; }
  // Activation memory of a pass of `batch` samples: the largest input plus output of a layer
  // (evaluation keeps nothing for a backward pass, so each layer's tensors are freed after it).
  double workspace_bytes(int batch) const;
  // Kernels one pass launches.
  int kernels() const;
  const ModelGraph& model() const { return model_; }

 private:
  ModelGraph model_;
  DeviceSpec device_;
  DeviceProfile profile_;
  Precision precision_;
  double weight_bytes_ = 0;
  mutable std::unordered_map<int, double> memo_;
};

}  // namespace dlsim::models
