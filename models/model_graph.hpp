// ModelGraph: a DL model as an ordered list of layers, each with its cost per sample.
// Built from the architecture (zoo.hpp), never typed in as totals.
// Units: FLOPs count a multiply-add as 2 FLOPs; bytes are per sample at the given
// element size; parameters are counts (elements), not bytes.
#pragma once
#include <string>
#include <vector>

namespace dlsim::models {

enum class LayerKind { conv, linear, matmul, norm, elementwise, pool, embedding, softmax };

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::elementwise;
  double parameters = 0;          // trainable parameter count
  double forward_flops = 0;       // per sample
  double activation_elements = 0; // output elements per sample (read by the next layer)
  double input_elements = 0;      // input elements per sample
};

struct ModelGraph {
  std::string name;
  std::string sample_unit;        // "image", "sequence"
  double tokens_per_sample = 1;   // sequence length for language models, 1 otherwise
  std::vector<Layer> layers;      // forward order

  double parameters() const;
  double forward_flops_per_sample() const;
  // Forward + backward: backward costs twice the forward (gradients w.r.t. inputs and weights).
  double training_flops_per_sample() const { return 3.0 * forward_flops_per_sample(); }
};

}  // namespace dlsim::models
