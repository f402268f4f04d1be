// The zoo's names and lookup by name (see zoo.hpp).
#include "models/zoo.hpp"

#include <algorithm>
#include <stdexcept>

namespace dlsim::models {
namespace {

struct ImageModel {
  const char* name;
  ModelGraph (*build)();
};
const ImageModel kImageModels[] = {
    {"inception-v3", inception_v3}, {"resnet101", resnet101},           {"resnet50", resnet50},
    {"vgg16", vgg16},               {"vit-b16", [] { return vit_b16(); }}, {"vit-l16", [] { return vit_l16(); }},
};

const ImageModel* find_image_model(const std::string& name) {
  for (const ImageModel& m : kImageModels) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> names{"bert-base", "bert-large"};
  for (const ImageModel& m : kImageModels) names.emplace_back(m.name);
  for (const std::string& n : decoder_model_names()) names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

bool zoo_model_has_sequence(const std::string& name) {
  return find_image_model(name) == nullptr;
}

bool zoo_model_is_encoder(const std::string& name) {
  return name == "bert-base" || name == "bert-large" || name == "vit-b16" || name == "vit-l16";
}

ModelGraph zoo_model(const std::string& name, int sequence_length) {
  // Images: sequence_length does not apply.
  if (const ImageModel* m = find_image_model(name)) return m->build();
  // 0: the model's usual length (BERT pre-training phase 1: 128; decoders: their context).
  if (name == "bert-base") return bert_base(sequence_length == 0 ? 128 : sequence_length);
  if (name == "bert-large") return bert_large(sequence_length == 0 ? 128 : sequence_length);
  const auto decoders = decoder_model_names();
  if (std::find(decoders.begin(), decoders.end(), name) != decoders.end()) {
    return sequence_length == 0 ? decoder_model(name) : decoder_model(name, sequence_length);
  }
  std::string known;
  for (const std::string& n : zoo_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::out_of_range("unknown zoo model '" + name + "'; known: " + known);
}

}  // namespace dlsim::models
