// Encoder transformers built layer by layer: BERT (Devlin et al. 2019) and the Vision
// Transformer (Dosovitskiy et al. 2021). A multiply-add is 2 FLOPs.
//
// Dropout: BERT pre-trains with dropout 0.1 on the attention probabilities, on the attention and
// FFN outputs and on the embeddings (Devlin et al. 2019, A.2; the reference implementation,
// NVIDIA DeepLearningExamples and Megatron-LM keep it), so BERT gets those dropout layers as the
// decoders of zoo_decoder.cpp do: a memory-bound pass each, a one-byte mask kept for backward
// (half an element), and the dropped-out probabilities kept by the context product. The output
// dropouts run fused with the residual add that follows (Megatron's bias-dropout-add; the add
// then moves only the residual it reads). FlashAttention drops out inside its kernel. ViT as
// torchvision trains it uses no dropout (vit_b_16/vit_l_16: dropout 0.0), so it has none.
//
// BERT: embeddings, L post-LN encoder layers, the pooler and the masked-LM head, as in the
// reference implementation and Hugging Face BertForMaskedLM/BertForPreTraining (the 2-way
// next-sentence head, 1,538 parameters, is left out). Per-sample costs are for one whole
// sequence of s tokens. The MLM head is costed on all s positions (as Hugging Face computes it),
// or on the masked positions only where the implementation gathers them first (mlm_positions:
// Google's run_pretraining, NVIDIA DeepLearningExamples, Megatron-LM; the gather itself moves
// next to nothing).
//
// ViT (torchvision vit_b_16 / vit_l_16 layout): a 16x16 stride-16 patch convolution, a class
// token and learned positions (197 tokens at 224x224), L pre-LN encoder layers, a final
// LayerNorm on all tokens and the linear head on the class token. Per-sample costs are per image.
//
// Layout for parallel plans, as in zoo_decoder.cpp: every layer of encoder layer i has block = i;
// Megatron tensor parallelism splits QKV, scores, softmax, context, the attention output
// (row-parallel, all-reduced), the FFN up, GELU and down (row-parallel, all-reduced); BERT's
// embedding (vocabulary-parallel, all-reduced; its position and token-type rows are counted with
// it) and MLM decoder are split. Norms, residual adds, the pooler, the MLM transform, ViT's patch
// embedding and head are replicated.
// Saved for backward (Korthikanti et al. 2022, sec. 4.1): norms, QKV, attention output and FFN
// linears keep their input; scores keep Q and K (2sh); softmax its output (heads*s*s); context V
// (sh) and, with dropout, the dropped-out probabilities (heads*s*s); GELU its input (4sh);
// residual adds nothing; each dropout its mask. A BERT layer thus keeps 17sh + 2.5 heads*s^2
// elements, Korthikanti's 34sbh + 5as^2b bytes at 2-byte elements (16sh + heads*s^2 for ViT).
#include <stdexcept>
#include <string>
#include <vector>

#include "models/zoo.hpp"
#include "models/zoo_layout.hpp"

namespace dlsim::models {
namespace {

// Approximate elementwise costs in FLOPs per element.
constexpr double kLayerNormFlops = 7;  // mean (1) + variance (2) + normalize, scale, shift (4)
constexpr double kGeluFlops = 8;       // tanh approximation: cube, multiply-adds, tanh
constexpr double kTanhFlops = 4;
constexpr double kAddFlops = 1;

struct EncoderConfig {
  std::string name;
  int layers = 0, hidden = 0, heads = 0, ffn = 0;
  int vocab = 30522, max_positions = 512, type_vocab = 2;  // BERT only
  bool flash_attention = false;  // the attention core as one FlashAttention kernel (not causal)
  FlashKernel flash_kernel = FlashKernel::fa2;  // with flash_attention: which implementation (EncoderOptions)
  bool dropout = false;          // trained with dropout (BERT), see the header
  bool masked = false;           // the scores get an attention mask (BERT's padding mask)
  bool fused_kernels = true;     // scale-mask-softmax and dropout-add fused (EncoderOptions)
  bool softmax_in_fp32 = false;  // unfused: the softmax steps on an FP32 copy (EncoderOptions)
};

// push() and the tensor-parallel annotations (zoo_layout.hpp).
using namespace zoo_layout;

// Dense layer with bias applied to each of `tokens` positions.
Layer& linear(Layers& out, const std::string& name, double tokens, double in, double features) {
  return gemm(push(out, name, LayerKind::linear, in * features + features,
                   tokens * (2 * in * features + features), tokens * in, tokens * features),
              tokens, in, features);
}

Layer& elementwise(Layers& out, const std::string& name, double flops_per_element,
                   double elements, double inputs_per_element = 1) {
  return push(out, name, LayerKind::elementwise, 0, flops_per_element * elements,
              inputs_per_element * elements, elements);
}

void layer_norm(Layers& out, const std::string& name, double tokens, double hidden) {
  push(out, name, LayerKind::norm, 2 * hidden, kLayerNormFlops * tokens * hidden, tokens * hidden,
       tokens * hidden);
}

// The attention core as one FlashAttention kernel over every query and key (an encoder masks
// nothing): forward 4 s^2 h FLOPs as the unfused scores and context count them, backward twice
// that (model FLOPs: its recomputed scores are not counted). It keeps Q, K, V, its output and the
// softmax's log-sum-exp (FP32, two elements per head and query), never the s x s scores; its
// output is the output projection's saved input (one tensor), counted there.
void flash_attention(Layers& out, const std::string& p, const EncoderConfig& c, double s) {
  const double h = c.hidden;
  Layer& a = split(push(out, p + ".flash", LayerKind::attention, 0, 2 * (2 * s * s * h), 3 * s * h, s * h));
  a.backward_flops = 2 * a.forward_flops;
  a.attention = {double(c.heads), double(c.heads), s, s, h / c.heads, false};
  a.attention.kernel = c.flash_kernel;
  saves(a, 3 * s * h + 2 * double(c.heads) * s);
}

// Self-attention without norms and residual: QKV projections, the attention core, the output
// projection. Unfused, the core is per-head scores QK^T (2*s*s*h FLOPs over all heads), softmax
// over heads*s*s scores and scores*V (2*s*s*h), each its own kernel.
void self_attention(Layers& out, const std::string& p, const EncoderConfig& c, double s) {
  const double h = c.hidden, scores = double(c.heads) * s * s;
  const double d = h / c.heads;
  split(linear(out, p + ".qkv", s, h, 3 * h));
  if (c.flash_attention) {
    flash_attention(out, p, c, s);
    row_parallel(linear(out, p + ".output", s, h, h));
    return;
  }
  gemm(attention_core(push(out, p + ".scores", LayerKind::matmul, 0, 2 * s * s * h, 2 * s * h, scores)), s, d, s,
       c.heads, true);
  if (c.fused_kernels) {
    saves(attention_core(push(out, p + ".softmax", LayerKind::softmax, 0, kSoftmaxFlops * scores, scores, scores)),
          scores);
  } else {
    // Under autocast the dropout runs on the FP32 probabilities; the context product converts them.
    unfused_softmax(out, p + ".", c.softmax_in_fp32, c.masked, scores, scores, !c.dropout);
  }
  if (c.dropout) {
    Layer& drop = attention_core(dropout(out, p + ".probs_dropout", scores));
    fp32_island(drop, c.softmax_in_fp32, kSingleBytes, kSingleBytes);
    if (c.softmax_in_fp32) {
      attention_core(push(out, p + ".probs_to_half", LayerKind::elementwise, 0, 0, scores, scores));
      fp32_island(out.back(), true, kSingleBytes, kHalfBytes);
    }
  }
  gemm(saves(attention_core(push(out, p + ".context", LayerKind::matmul, 0, 2 * s * s * h, scores + s * h, s * h)),
             s * h + (c.dropout ? scores : 0.0)),
       s, s, d, c.heads, true);
  row_parallel(linear(out, p + ".output", s, h, h));
}

// Feed-forward without norm and residual: h -> ffn (GELU) -> h.
void mlp(Layers& out, const std::string& p, const EncoderConfig& c, double s,
         const char* up_name, const char* down_name) {
  const double h = c.hidden, f = c.ffn;
  split(linear(out, p + up_name, s, h, f));
  saves(split(elementwise(out, p + ".gelu", kGeluFlops, s * f)), s * f).memory_kernel = MemoryKernel::activation;
  row_parallel(linear(out, p + down_name, s, f, h));
}

// The residual add after a sublayer's output, behind its dropout when the model has one (the
// add then fused into the dropout's kernel, unless the kernels are unfused).
void residual(Layers& out, const std::string& p, const EncoderConfig& c, double elements) {
  if (c.dropout) dropout(out, p + ".output_dropout", elements);
  elementwise(out, p + ".residual", kAddFlops, elements, 2).fused = c.dropout && c.fused_kernels;
}

// Post-LN BERT layer: attention, residual, LayerNorm; FFN, residual, LayerNorm.
void bert_layer(Layers& out, const std::string& p, const EncoderConfig& c, double s) {
  const double h = c.hidden;
  self_attention(out, p + ".attention", c, s);
  residual(out, p + ".attention", c, s * h);
  layer_norm(out, p + ".attention.layernorm", s, h);
  mlp(out, p + ".ffn", c, s, ".intermediate", ".output");
  residual(out, p + ".ffn", c, s * h);
  layer_norm(out, p + ".ffn.layernorm", s, h);
}

// Pre-LN ViT layer: LayerNorm, attention, residual; LayerNorm, MLP, residual.
void vit_layer(Layers& out, const std::string& p, const EncoderConfig& c, double s) {
  const double h = c.hidden;
  layer_norm(out, p + ".ln_1", s, h);
  self_attention(out, p + ".attention", c, s);
  residual(out, p + ".attention", c, s * h);
  layer_norm(out, p + ".ln_2", s, h);
  mlp(out, p + ".mlp", c, s, ".fc1", ".fc2");
  residual(out, p + ".mlp", c, s * h);
}

// Appends `layers` encoder layers built by `layer`, each tagged with its block index.
void encoder(Layers& out, const std::string& prefix, const EncoderConfig& c, double s,
             void (*layer)(Layers&, const std::string&, const EncoderConfig&, double)) {
  for (int i = 0; i < c.layers; ++i) {
    const size_t first = out.size();
    layer(out, prefix + std::to_string(i), c, s);
    for (size_t j = first; j < out.size(); ++j) out[j].block = i;
  }
}

// Word + position + token-type embeddings: three gathered rows per token, summed.
void bert_embeddings(Layers& out, const EncoderConfig& c, double s) {
  const double h = c.hidden;
  row_parallel(push(out, "embeddings", LayerKind::embedding,
                    (double(c.vocab) + c.max_positions + c.type_vocab) * h, 2 * s * h, 3 * s * h,
                    s * h));
  layer_norm(out, "embeddings.layernorm", s, h);
  if (c.dropout) dropout(out, "embeddings.dropout", s * h);
}

// Pooler: dense + tanh on the [CLS] token only (tanh's backward needs its output).
void pooler(Layers& out, const EncoderConfig& c) {
  linear(out, "pooler.dense", 1, c.hidden, c.hidden);
  saves(elementwise(out, "pooler.tanh", kTanhFlops, c.hidden), c.hidden).memory_kernel = MemoryKernel::activation;
}

// MLM head: dense h->h, GELU, LayerNorm, then the decoder to the vocabulary. The decoder weight
// is tied to the word embedding (counted there), so only its vocab-sized bias is new.
void mlm_head(Layers& out, const EncoderConfig& c, double s) {
  const double h = c.hidden, v = c.vocab;
  linear(out, "mlm.transform.dense", s, h, h);
  saves(elementwise(out, "mlm.transform.gelu", kGeluFlops, s * h), s * h).memory_kernel = MemoryKernel::activation;
  layer_norm(out, "mlm.transform.layernorm", s, h);
  gemm(split(push(out, "mlm.decoder", LayerKind::linear, v, s * (2 * h * v + v), s * h, s * v)), s, h, v).vocabulary = true;
}

ModelGraph build_bert(const EncoderConfig& c, int sequence_length, int mlm_positions) {
  if (sequence_length < 1 || sequence_length > c.max_positions) {
    throw std::invalid_argument(c.name + ": sequence_length " + std::to_string(sequence_length) +
                                " is outside [1, " + std::to_string(c.max_positions) + "]");
  }
  if (mlm_positions < 0 || mlm_positions > sequence_length) {
    throw std::invalid_argument(c.name + ": mlm_positions " + std::to_string(mlm_positions) + " is outside [1, " +
                                std::to_string(sequence_length) + "] (the sequence's positions)");
  }
  ModelGraph g;
  g.name = c.name;
  g.sample_unit = "sequence";
  g.tokens_per_sample = sequence_length;
  const double s = sequence_length;
  bert_embeddings(g.layers, c, s);
  encoder(g.layers, "encoder.layer.", c, s, bert_layer);
  pooler(g.layers, c);
  mlm_head(g.layers, c, mlm_positions > 0 ? mlm_positions : s);
  return g;
}

// ViT at 224x224 with 16x16 patches: 14*14 = 196 patches plus the class token.
ModelGraph build_vit(const EncoderConfig& c) {
  constexpr double kImage = 224, kPatch = 16, kClasses = 1000;
  const double patches = (kImage / kPatch) * (kImage / kPatch), s = patches + 1, h = c.hidden;
  ModelGraph g;
  g.name = c.name;
  g.sample_unit = "image";
  g.tokens_per_sample = 1;
  Layers& L = g.layers;
  // Patch embedding: a 16x16 stride-16 conv 3 -> h with bias. The image needs no gradient, so
  // backward only computes the weight gradient (as many multiply-adds as the forward).
  const double weights = 3 * kPatch * kPatch * h;
  Layer& patch = push(L, "conv_proj", LayerKind::conv, weights + h,
                      patches * (2 * weights + h), 3 * kImage * kImage, patches * h);
  patch.backward_flops = patch.forward_flops;
  patch.matmul.input_gradient = false;
  patch.conv = {3, kImage, kImage, h, kPatch, kPatch, kPatch, 0, 0};
  // Class token prepended (h parameters) and learned positions added (s*h parameters).
  push(L, "embeddings", LayerKind::elementwise, (s + 1) * h, s * h, patches * h, s * h);
  encoder(L, "encoder.layers.", c, s, vit_layer);
  layer_norm(L, "encoder.ln", s, h);
  linear(L, "heads.head", 1, h, kClasses);  // on the class token
  return g;
}

// The configuration of an encoder of the zoo by name, with the options that vary per run.
// Table 1 of Devlin et al.: BERT-base L=12, H=768, A=12; BERT-large L=24, H=1024, A=16; the
// feed-forward size is 4H. Table 1 of Dosovitskiy et al.: ViT-Base L=12, D=768, MLP 3072, 12
// heads; ViT-Large L=24, D=1024, MLP 4096, 16 heads.
EncoderConfig encoder_config(const std::string& name, const EncoderOptions& o) {
  EncoderConfig c;
  if (name == "bert-base") c = {"bert-base", 12, 768, 12, 4 * 768};
  else if (name == "bert-large") c = {"bert-large", 24, 1024, 16, 4 * 1024};
  else if (name == "vit-b16") c = {"vit-b16", 12, 768, 12, 3072};
  else if (name == "vit-l16") c = {"vit-l16", 24, 1024, 16, 4096};
  else throw std::out_of_range("'" + name + "' is not an encoder of the zoo (bert-base, bert-large, vit-b16, vit-l16)");
  const bool bert = name.rfind("bert-", 0) == 0;
  c.dropout = bert;
  c.masked = bert;
  c.flash_attention = o.flash_attention;
  c.flash_kernel = o.flash_attention ? o.flash_kernel : FlashKernel::fa2;
  c.fused_kernels = o.fused_kernels;
  c.softmax_in_fp32 = !o.fused_kernels && o.softmax_in_fp32;
  return c;
}

}  // namespace

ModelGraph encoder_model(const std::string& name, const EncoderOptions& o) {
  const EncoderConfig c = encoder_config(name, o);
  if (name.rfind("vit-", 0) == 0) return build_vit(c);
  return build_bert(c, o.sequence_length == 0 ? 128 : o.sequence_length, o.mlm_positions);
}

ModelGraph bert_base(int sequence_length, int mlm_positions, bool flash_attention) {
  return build_bert(encoder_config("bert-base", {sequence_length, mlm_positions, flash_attention}), sequence_length,
                    mlm_positions);
}

ModelGraph bert_large(int sequence_length, int mlm_positions, bool flash_attention) {
  return build_bert(encoder_config("bert-large", {sequence_length, mlm_positions, flash_attention}), sequence_length,
                    mlm_positions);
}

ModelGraph vit_b16(bool flash_attention) { return encoder_model("vit-b16", {0, 0, flash_attention}); }

ModelGraph vit_l16(bool flash_attention) { return encoder_model("vit-l16", {0, 0, flash_attention}); }

}  // namespace dlsim::models
