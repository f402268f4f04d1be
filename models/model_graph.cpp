// Totals over the layers of a ModelGraph (see model_graph.hpp).
#include "models/model_graph.hpp"

namespace dlsim::models {

double ModelGraph::parameters() const {
  double total = 0;
  for (const Layer& layer : layers) total += layer.parameters;
  return total;
}

double ModelGraph::forward_flops_per_sample() const {
  double total = 0;
  for (const Layer& layer : layers) total += layer.forward_flops;
  return total;
}

}  // namespace dlsim::models
