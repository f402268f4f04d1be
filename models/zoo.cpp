// The zoo's names and lookup by name (see zoo.hpp).
#include "models/zoo.hpp"

#include <stdexcept>

namespace dlsim::models {

std::vector<std::string> zoo_model_names() { return {"bert-base", "bert-large", "resnet50"}; }

ModelGraph zoo_model(const std::string& name, int sequence_length) {
  if (name == "resnet50") return resnet50();  // images: sequence_length does not apply
  if (name == "bert-base") return bert_base(sequence_length);
  if (name == "bert-large") return bert_large(sequence_length);
  std::string known;
  for (const std::string& n : zoo_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::out_of_range("unknown zoo model '" + name + "'; known: " + known);
}

}  // namespace dlsim::models
