// BERT (Devlin et al. 2019) built layer by layer: embeddings, L post-LN encoder layers, the
// pooler and the masked-LM head, as in the reference implementation and Hugging Face
// BertForMaskedLM/BertForPreTraining (the 2-way next-sentence head, 1,538 parameters, is left out).
// Per-sample costs are for one whole sequence of s tokens. A multiply-add is 2 FLOPs.
// The MLM head is costed on all s positions (as Hugging Face computes it); implementations that
// first gather the ~15% masked positions (Google's run_pretraining, NVIDIA DeepLearningExamples)
// spend less there. Dropout is not modelled (no FLOPs to speak of).
#include <stdexcept>
#include <string>
#include <vector>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

// Approximate elementwise costs in FLOPs per element.
constexpr double kLayerNormFlops = 7;  // mean (1) + variance (2) + normalize, scale, shift (4)
constexpr double kSoftmaxFlops = 5;    // 1/sqrt(d) scale, max, exp, sum, divide
constexpr double kGeluFlops = 8;       // tanh approximation: cube, multiply-adds, tanh
constexpr double kTanhFlops = 4;
constexpr double kAddFlops = 1;

struct BertConfig {
  std::string name;
  int layers = 0, hidden = 0, heads = 0, ffn = 0;
  int vocab = 30522, max_positions = 512, type_vocab = 2;
};

using Layers = std::vector<Layer>;

void push(Layers& out, std::string name, LayerKind kind, double params, double flops,
          double input_elements, double output_elements) {
  out.push_back(Layer{std::move(name), kind, params, flops, output_elements, input_elements});
}

// Dense layer with bias applied to each of `tokens` positions.
void linear(Layers& out, const std::string& name, double tokens, double in, double features) {
  push(out, name, LayerKind::linear, in * features + features,
       tokens * (2 * in * features + features), tokens * in, tokens * features);
}

void elementwise(Layers& out, const std::string& name, double flops_per_element, double elements,
                 double inputs_per_element = 1) {
  push(out, name, LayerKind::elementwise, 0, flops_per_element * elements,
       inputs_per_element * elements, elements);
}

void layer_norm(Layers& out, const std::string& name, double tokens, double hidden) {
  push(out, name, LayerKind::norm, 2 * hidden, kLayerNormFlops * tokens * hidden, tokens * hidden,
       tokens * hidden);
}

// Word + position + token-type embeddings: three gathered rows per token, summed.
void embeddings(Layers& out, const BertConfig& c, double s) {
  const double h = c.hidden;
  push(out, "embeddings", LayerKind::embedding,
       (double(c.vocab) + c.max_positions + c.type_vocab) * h, 2 * s * h, 3 * s * h, s * h);
  layer_norm(out, "embeddings.layernorm", s, h);
}

// Self-attention: QKV projections, per-head scores QK^T (2*s*s*h FLOPs over all heads),
// softmax over heads*s*s scores, scores*V (2*s*s*h), output projection, residual, LayerNorm.
void attention(Layers& out, const std::string& p, const BertConfig& c, double s) {
  const double h = c.hidden, scores = double(c.heads) * s * s;
  linear(out, p + ".attention.qkv", s, h, 3 * h);
  push(out, p + ".attention.scores", LayerKind::matmul, 0, 2 * s * s * h, 2 * s * h, scores);
  push(out, p + ".attention.softmax", LayerKind::softmax, 0, kSoftmaxFlops * scores, scores,
       scores);
  push(out, p + ".attention.context", LayerKind::matmul, 0, 2 * s * s * h, scores + s * h, s * h);
  linear(out, p + ".attention.output", s, h, h);
  elementwise(out, p + ".attention.residual", kAddFlops, s * h, 2);
  layer_norm(out, p + ".attention.layernorm", s, h);
}

// Feed-forward: h -> ffn (GELU) -> h, residual, LayerNorm.
void feed_forward(Layers& out, const std::string& p, const BertConfig& c, double s) {
  const double h = c.hidden;
  linear(out, p + ".ffn.intermediate", s, h, c.ffn);
  elementwise(out, p + ".ffn.gelu", kGeluFlops, s * c.ffn);
  linear(out, p + ".ffn.output", s, c.ffn, h);
  elementwise(out, p + ".ffn.residual", kAddFlops, s * h, 2);
  layer_norm(out, p + ".ffn.layernorm", s, h);
}

// Pooler: dense + tanh on the [CLS] token only.
void pooler(Layers& out, const BertConfig& c) {
  linear(out, "pooler.dense", 1, c.hidden, c.hidden);
  elementwise(out, "pooler.tanh", kTanhFlops, c.hidden);
}

// MLM head: dense h->h, GELU, LayerNorm, then the decoder to the vocabulary. The decoder weight
// is tied to the word embedding (counted there), so only its vocab-sized bias is new.
void mlm_head(Layers& out, const BertConfig& c, double s) {
  const double h = c.hidden, v = c.vocab;
  linear(out, "mlm.transform.dense", s, h, h);
  elementwise(out, "mlm.transform.gelu", kGeluFlops, s * h);
  layer_norm(out, "mlm.transform.layernorm", s, h);
  push(out, "mlm.decoder", LayerKind::linear, v, s * (2 * h * v + v), s * h, s * v);
}

ModelGraph build_bert(const BertConfig& c, int sequence_length) {
  if (sequence_length < 1 || sequence_length > c.max_positions) {
    throw std::invalid_argument(c.name + ": sequence_length " + std::to_string(sequence_length) +
                                " is outside [1, " + std::to_string(c.max_positions) + "]");
  }
  ModelGraph g;
  g.name = c.name;
  g.sample_unit = "sequence";
  g.tokens_per_sample = sequence_length;
  const double s = sequence_length;
  embeddings(g.layers, c, s);
  for (int i = 0; i < c.layers; ++i) {
    const std::string prefix = "encoder.layer." + std::to_string(i);
    attention(g.layers, prefix, c, s);
    feed_forward(g.layers, prefix, c, s);
  }
  pooler(g.layers, c);
  mlm_head(g.layers, c, s);
  return g;
}

}  // namespace

// Table 1 of Devlin et al.: BERT-base L=12, H=768, A=12; BERT-large L=24, H=1024, A=16;
// the feed-forward size is 4H.
ModelGraph bert_base(int sequence_length) {
  return build_bert({"bert-base", 12, 768, 12, 4 * 768}, sequence_length);
}

ModelGraph bert_large(int sequence_length) {
  return build_bert({"bert-large", 24, 1024, 16, 4 * 1024}, sequence_length);
}

}  // namespace dlsim::models
