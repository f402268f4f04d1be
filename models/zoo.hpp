// Built-in models, built layer by layer from their published architectures.
#pragma once
#include <string>
#include <vector>

#include "models/model_graph.hpp"

namespace dlsim::models {

// ResNet-50 v1.5 (He et al. 2016; stride on the 3x3 conv), 224x224 input, 1000 classes.
ModelGraph resnet50();
// BERT (Devlin et al. 2019) encoder with MLM head; sequence_length tokens per sample.
ModelGraph bert_base(int sequence_length = 128);
ModelGraph bert_large(int sequence_length = 128);

// Names the zoo knows ("resnet50", "bert-base", "bert-large") and a builder by name.
std::vector<std::string> zoo_model_names();
// Throws std::out_of_range for an unknown name.
ModelGraph zoo_model(const std::string& name, int sequence_length = 128);

}  // namespace dlsim::models
