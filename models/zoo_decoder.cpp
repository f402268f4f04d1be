// Decoder-only (GPT-style) transformers built layer by layer from their parameters: token
// (and optionally learned position) embeddings, L pre-norm decoder layers (causal self-attention
// with optional grouped-query K/V, then a plain GELU, gated SwiGLU or mixture-of-experts SwiGLU
// feed-forward), a final norm and the language-model head. Per-sample costs are for one sequence
// of s tokens; a multiply-add is 2 FLOPs. Causal attention is costed on the lower triangle only
// (s(s+1)/2 scores per head), as causal kernels (FlashAttention, Megatron fused masked softmax)
// skip the masked half. The LM head and the loss are costed on all s positions.
// Models trained with dropout (GPT-2/3: dropout 0.1 on the attention probabilities and on the
// attention and FFN outputs) get those dropout layers: their cost is a memory-bound elementwise
// pass, and they keep a one-byte mask each (counted as half an element: exact at fp16/bf16).
//
// Layout for parallel plans (model_graph.hpp): every layer of decoder layer i has block = i.
// Megatron tensor parallelism (Shoeybi et al. 2019) splits the QKV (column-parallel), rotary,
// scores, softmax, context (by heads), the attention output (row-parallel, all-reduced), the FFN
// up / gate_up (column), its activation and the FFN down (row, all-reduced); the token embedding
// and LM head are vocabulary-parallel (the embedding output is all-reduced; the small learned
// position table is counted with it). Norms and residual adds are replicated.
//
// Activations kept for backward (saved_elements, per sequence), following Korthikanti et al.
// 2022, "Reducing Activation Recomputation in Large Transformer Models", sec. 4.1, without the
// dropout masks and dropout outputs we do not model:
//   norms: their input (s*h)           qkv: its input (s*h)       rotary: nothing (linear map)
//   scores: Q and K (s*(h + kv))       softmax: its output, the full heads*s*s matrix (Megatron's
//   fused causal softmax writes all s*s entries, zeros above the diagonal, and autograd keeps it)
//   context: V only (s*kv; the probabilities are the softmax output already counted)
//   attention output: its input (s*h)  residual adds: nothing
//   GELU: its input (s*ffn)            SwiGLU: gate and up (2*s*ffn)    FFN down: its input (s*ffn)
// Without dropout this is 16*s*h + heads*s^2 elements per layer, i.e. 32sbh + 2as^2b bytes at
// 2-byte elements: Korthikanti's 34sbh + 5as^2b minus the two sbh dropout masks, the as^2b
// softmax dropout mask and the 2as^2b dropout output. With dropout (GPT-3): the attention dropout
// keeps its mask (as^2b bytes), the context matmul keeps the dropped-out probabilities (2as^2b)
// besides V, and the two output dropouts keep their masks (sbh each): exactly 34sbh + 5as^2b
// (tests/models/test_zoo_layout.cpp).
//
// Fused kernels (DecoderConfig::fused_kernels, Megatron-LM's default): the bias of the FFN up
// projection is added inside its GeLU kernel, that of the row-parallel outputs inside one
// bias-dropout-add kernel, and the attention scores are scaled, masked and normalised by one
// softmax kernel. Unfused (Megatron's fusions off, or eager code) each of those steps is a kernel
// of its own: a bias add (forward only: its gradient passes through, and the bias gradient is the
// linear layer's reduction), the residual add after dropout, and scale and mask before the
// softmax (with softmax_in_fp32 the three run in FP32 between two conversions, as Megatron-LM 2021
// runs them). The new kernels add no FLOPs (the arithmetic is the fused kernel's) and no saved
// activations beyond the FP32 softmax output, which backward keeps in place of the 16-bit one.
//
// Mixture of experts (experts > 0, Mixtral/Switch style): the FFN becomes a router (h -> E
// linear, replicated, followed by the dispatch all-to-all), E experts of the configured FFN
// (SwiGLU for Mixtral) applied to the top_k * s token copies routed to them (parameters: all E
// experts; FLOPs: top_k experts' work per token), the combine all-to-all after the expert down
// projection, and a weighted sum of each token's top_k expert outputs.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/zoo.hpp"
#include "models/zoo_layout.hpp"

namespace dlsim::models {
namespace {

// Approximate elementwise costs in FLOPs per element.
constexpr double kLayerNormFlops = 7;  // mean (1) + variance (2) + normalize, scale, shift (4)
constexpr double kRmsNormFlops = 4;    // square-sum (2) + normalize (1) + scale (1)
constexpr double kGeluFlops = 8;       // tanh approximation: cube, multiply-adds, tanh
constexpr double kSwiGluFlops = 6;     // SiLU (sigmoid 4 + multiply 1) + gate multiply 1
constexpr double kGeGluFlops = 9;      // tanh GELU (8) + gate multiply 1
constexpr double kReluFlops = 1;       // a compare and select
constexpr double kRotaryFlops = 3;     // two multiplies and an add per rotated element
constexpr double kAddFlops = 1;

// push() and the tensor-parallel annotations (zoo_layout.hpp).
using namespace zoo_layout;

// Dense layer (bias optional) applied to each of `tokens` positions.
Layer& linear(Layers& out, const std::string& name, double tokens, double in, double features,
              bool bias) {
  const double b = bias ? features : 0;
  return gemm(push(out, name, LayerKind::linear, in * features + b, tokens * (2 * in * features + b),
                   tokens * in, tokens * features),
              tokens, in, features);
}

Layer& elementwise(Layers& out, const std::string& name, double flops_per_element,
                   double elements, double inputs_per_element = 1) {
  return push(out, name, LayerKind::elementwise, 0, flops_per_element * elements,
              inputs_per_element * elements, elements);
}

// An unfused bias add on `elements` outputs of a linear layer whose GEMM left the bias out
// (Megatron's skip_bias_add): a stream kernel forward, nothing backward, no FLOPs of its own.
Layer& bias_add(Layers& out, const std::string& name, double elements) {
  Layer& l = elementwise(out, name, 0, elements);
  l.backward_free = true;
  return l;
}

// LayerNorm (scale and shift, 2h parameters) or RMSNorm (scale only, h parameters).
void norm(Layers& out, const std::string& name, const DecoderConfig& c, double tokens) {
  const double h = c.hidden;
  push(out, name, LayerKind::norm, c.rms_norm ? h : 2 * h,
       (c.rms_norm ? kRmsNormFlops : kLayerNormFlops) * tokens * h, tokens * h, tokens * h)
      .memory_kernel = c.rms_norm ? MemoryKernel::rms_norm : MemoryKernel::layer_norm;
}

// The attention core as one fused FlashAttention kernel (attention_model.hpp): scores, softmax,
// dropout and context without the s x s matrix. It keeps Q, K, V, its output and the softmax's
// log-sum-exp (fp32, two elements per head and query) for backward, which recomputes the scores.
// Its output is the very tensor the output projection keeps as its input (one allocation, saved
// by both), so it is counted there, not twice.
void flash_attention(Layers& out, const std::string& p, const DecoderConfig& c, double s) {
  const double q = decoder_q_features(c), kv = decoder_kv_features(c), causal = s * (s + 1) / 2;
  Layer& a = split(push(out, p + ".attn.flash", LayerKind::attention, 0, 2 * (2 * causal * q), s * (q + 2 * kv), s * q));
  a.backward_flops = 2 * a.forward_flops;  // model FLOPs: the recomputed scores are not counted
  a.attention = {double(c.heads), double(c.kv_heads == 0 ? c.heads : c.kv_heads), s, s, decoder_head_dim(c), true};
  a.attention.kernel = c.flash_kernel;
  saves(a, s * (q + 2 * kv) + 2 * double(c.heads) * s);
}

// The unfused attention core as Megatron-LM (2021) and Hugging Face run it: batched GEMMs over the
// full s x s scores (baddbmm/bmm compute the masked half too; grouped K/V heads are expanded to
// the query heads), a fused scale-mask-softmax kernel over all s x s entries, dropout on the
// probabilities, and the context bmm.
void unfused_attention(Layers& out, const std::string& p, const DecoderConfig& c, double s) {
  const double q = decoder_q_features(c), kv = decoder_kv_features(c), d = decoder_head_dim(c), heads = c.heads;
  const double causal = s * (s + 1) / 2;           // scored (query, key) pairs per head
  const double scores = heads * causal;            // over all heads
  const double probabilities = heads * s * s;      // what the kernels read and write
  gemm(attention_core(push(out, p + ".attn.scores", LayerKind::matmul, 0, 2 * causal * q, s * (q + kv), probabilities)),
       s, d, s, heads, true);
  if (c.fused_kernels) {
    saves(attention_core(push(out, p + ".attn.softmax", LayerKind::softmax, 0, kSoftmaxFlops * scores, probabilities,
                              probabilities)),
          probabilities);
  } else {
    unfused_softmax(out, p + ".attn.", c.softmax_in_fp32, true, probabilities, scores);
  }
  if (c.dropout) {
    attention_core(dropout(out, p + ".attn.dropout", probabilities)).forward_flops = kDropoutFlops * scores;
  }
  gemm(saves(attention_core(push(out, p + ".attn.context", LayerKind::matmul, 0, 2 * causal * q, probabilities + s * kv,
                                 s * q)),
             s * kv + (c.dropout ? probabilities : 0.0)),
       s, s, d, heads, true);
}

// Dropout (with dropout) and the residual add. Megatron-LM fuses them into one kernel
// (bias-dropout-add, on by default): the add then moves only the residual it reads.
// Unfused, the row-parallel output's bias is added by a kernel of its own first, and the add
// after dropout is one too.
void residual(Layers& out, const std::string& p, const DecoderConfig& c, double elements) {
  if (!c.fused_kernels && c.linear_bias) bias_add(out, p + ".output_bias", elements);
  if (c.dropout) {
    dropout(out, p + ".output_dropout", elements);
  }
  elementwise(out, p + ".residual", kAddFlops, elements, 2).fused = c.dropout && c.fused_kernels;
}

// Causal self-attention: fused Q/K/V projection (K and V have kv_heads * head_dim features each),
// rotary embedding on Q and K with rotary positions (ALiBi has no kernel of its own), per-head
// scores QK^T over the lower triangle (2 * head_dim per score, summed over heads: s(s+1)*q FLOPs
// with q = heads * head_dim), softmax, scores*V (the same), the output projection q -> h and the
// residual add.
// The attention from the Q/K/V projection to the output projection; `reduced`: the output
// projection's partial sums are all-reduced here (not in a parallel block, where the MLP's
// down projection reduces both).
void attention_body(Layers& out, const std::string& p, const DecoderConfig& c, double s, bool reduced) {
  const double h = c.hidden, q = decoder_q_features(c), kv = decoder_kv_features(c);
  split(linear(out, p + ".attn.qkv", s, h, q + 2 * kv, c.linear_bias));
  if (c.positions == Positions::rotary) {
    split(elementwise(out, p + ".attn.rotary", kRotaryFlops, s * (q + kv))).memory_kernel = MemoryKernel::rotary;
  }
  if (c.flash_attention) {
    flash_attention(out, p, c, s);
  } else {
    unfused_attention(out, p, c, s);
  }
  Layer& output = linear(out, p + ".attn.output", s, q, h, c.linear_bias);
  if (reduced) {
    row_parallel(output);
  } else {
    split(output);
  }
}

void attention(Layers& out, const std::string& p, const DecoderConfig& c, double s) {
  norm(out, p + ".attn.norm", c, s);
  attention_body(out, p, c, s, true);
  residual(out, p + ".attn", c, s * double(c.hidden));
}

// Feed-forward on `tokens` positions, without norm and residual: plain h -> ffn (GELU or ReLU) ->
// h, or gated (SwiGLU, GeGLU) with gate and up projections h -> ffn each, act(gate) * up, then
// down ffn -> h.
// The up / gate_up is column-parallel, the down row-parallel. Returns the down layer's index.
size_t mlp(Layers& out, const std::string& p, const DecoderConfig& c, double tokens) {
  const double h = c.hidden, f = c.ffn;
  const bool separate_bias = !c.fused_kernels && c.linear_bias;
  if (c.gated_ffn()) {
    split(linear(out, p + ".gate_up", tokens, h, 2 * f, c.linear_bias));
    if (separate_bias) split(bias_add(out, p + ".gate_up_bias", 2 * tokens * f));
    saves(split(push(out, p + (c.ffn_kind == FfnKind::geglu ? ".geglu" : ".swiglu"), LayerKind::elementwise, 0,
                     (c.ffn_kind == FfnKind::geglu ? kGeGluFlops : kSwiGluFlops) * tokens * f, 2 * tokens * f, tokens * f)),
          2 * tokens * f)
        .memory_kernel = MemoryKernel::gated_act;
  } else {
    split(linear(out, p + ".up", tokens, h, f, c.linear_bias));
    if (separate_bias) split(bias_add(out, p + ".up_bias", tokens * f));
    if (c.ffn_kind == FfnKind::relu) {
      saves(split(elementwise(out, p + ".relu", kReluFlops, tokens * f)), tokens * f).memory_kernel = MemoryKernel::relu;
    } else {
      saves(split(elementwise(out, p + ".gelu", kGeluFlops, tokens * f)), tokens * f).memory_kernel = MemoryKernel::activation;
    }
  }
  row_parallel(linear(out, p + ".down", tokens, f, h, c.linear_bias));
  return out.size() - 1;
}

// Mixture-of-experts feed-forward (see the file comment). Each expert layer holds E experts
// (E times one expert's parameters) and does top_k experts' work per token.
void moe_mlp(Layers& out, const std::string& p, const DecoderConfig& c, double s) {
  const double h = c.hidden, e = c.experts, routed = double(c.top_k) * s;
  linear(out, p + ".router", s, h, e, false).all_to_all_after = true;  // dispatch
  const size_t first = out.size();
  const size_t down = mlp(out, p + ".experts", c, routed);
  out[down].all_to_all_after = true;  // combine
  for (size_t i = first; i < out.size(); ++i) {
    out[i].experts = c.experts;
    out[i].parameters *= e;
  }
  // Weighted sum of each token's top_k expert outputs; the router-weight gradient needs them.
  saves(push(out, p + ".experts.combine", LayerKind::elementwise, 0, 2 * routed * h, routed * h,
             s * h),
        routed * h);
}

// A parallel block (GPT-J, PaLM: Chowdhery et al. 2022, sec. 2): y = x + attn(norm(x)) +
// mlp(norm(x)), one norm shared (or a second one for the MLP, parallel_block_two_norms); under
// tensor parallelism the two row-parallel outputs are summed before one all-reduce (the down
// projection's), halving the block's collectives.
void parallel_block(Layers& out, const std::string& p, const DecoderConfig& c, double s) {
  norm(out, p + ".norm", c, s);
  attention_body(out, p, c, s, false);
  if (c.parallel_block_two_norms) norm(out, p + ".ffn.norm", c, s);
  if (c.experts > 0) {
    moe_mlp(out, p + ".ffn", c, s);
  } else {
    mlp(out, p + ".ffn", c, s);
  }
  residual(out, p, c, s * double(c.hidden));
}

void feed_forward(Layers& out, const std::string& p, const DecoderConfig& c, double s) {
  norm(out, p + ".ffn.norm", c, s);
  if (c.experts > 0) {
    moe_mlp(out, p + ".ffn", c, s);
  } else {
    mlp(out, p + ".ffn", c, s);
  }
  residual(out, p + ".ffn", c, s * double(c.hidden));
}

// Megatron-LM's vocabulary-parallel cross-entropy (mpu/cross_entropy.py, 2021; Megatron-Core's
// unfused path is the same) on each rank's s x v/t logits: [to FP32], the row maximum (all-reduced
// over the tensor group), logits minus it, exp, the row sum (all-reduced), the target logit of each
// row (all-reduced), the division that leaves the softmax, which backward keeps. Those steps sit in
// one autograd function whose backward is a single pass (the kept softmax less the one-hot target,
// times the incoming gradient), then the conversion back. Each step is a kernel over the logits.
void unfused_cross_entropy(Layers& out, const DecoderConfig& c, double s, double v) {
  const bool fp32 = c.cross_entropy_in_fp32;
  const double logits = s * v;
  const auto step = [&](const std::string& name, double outputs, double in_bytes, double out_bytes) -> Layer& {
    Layer& l = split(push(out, "loss." + name, LayerKind::elementwise, 0, 0, logits, outputs));
    fp32_island(l, fp32, in_bytes, out_bytes);
    l.backward_free = true;
    return l;
  };
  if (fp32) step("to_fp32", logits, kHalfBytes, kSingleBytes).backward_free = false;  // backward: the gradient back to 16 bits
  step("max", s, kSingleBytes, kSingleBytes).tp_all_reduce = true;
  step("subtract", logits, kSingleBytes, kSingleBytes);
  step("exp", logits, kSingleBytes, kSingleBytes);
  step("sum", s, kSingleBytes, kSingleBytes).tp_all_reduce = true;
  // The target logit's gather reads one logit per row, not the row.
  step("target", s, kSingleBytes, kSingleBytes).tp_all_reduce = true;
  out.back().input_elements = s;
  Layer& normalize = step("normalize", logits, kSingleBytes, kSingleBytes);
  normalize.forward_flops = kSoftmaxFlops * logits;  // the fused kernel's arithmetic, counted once
  normalize.backward_free = false;                   // the function's backward pass
  saves(normalize, saved_at_fp32(fp32, logits));
}

void validate(const DecoderConfig& c, int sequence_length) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(c.name + ": " + what);
  };
  if (c.layers < 1 || c.hidden < 1 || c.heads < 1 || c.ffn < 1 || c.vocab < 1 ||
      c.max_positions < 1) {
    fail("layers, hidden, heads, ffn, vocab and max_positions must be positive");
  }
  if (c.parallel_block_two_norms && !c.parallel_block) fail("parallel_block_two_norms needs parallel_block");
  if (c.head_dim < 0) fail("head_dim " + std::to_string(c.head_dim) + " must be positive (or 0: hidden / heads)");
  if (c.kv_heads < 0 || c.kv_heads > c.heads || (c.kv_heads > 0 && c.heads % c.kv_heads != 0)) {
    fail("kv_heads " + std::to_string(c.kv_heads) + " must divide heads " +
         std::to_string(c.heads));
  }
  if (c.experts < 0 || (c.experts == 0 && c.top_k != 0) ||
      (c.experts > 0 && (c.top_k < 1 || c.top_k > c.experts))) {
    fail("top_k " + std::to_string(c.top_k) + " must lie in [1, experts " +
         std::to_string(c.experts) + "] (and be 0 without experts)");
  }
  if (sequence_length < 1 || sequence_length > c.max_positions) {
    fail("sequence_length " + std::to_string(sequence_length) + " is outside [1, " +
         std::to_string(c.max_positions) + "]");
  }
}

struct Preset {
  const char* name;
  DecoderConfig (*make)();
};

DecoderConfig gpt2_like(const char* name, int layers, int hidden, int heads, int context) {
  DecoderConfig c;
  c.name = name;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.ffn = 4 * hidden;
  c.vocab = 50257;
  c.max_positions = context;
  c.dropout = true;   // GPT-2 and GPT-3 train with dropout 0.1 (Radford et al. 2019; Megatron-LM)
  return c;  // defaults: tied, learned positions, LayerNorm, biases, GELU
}

DecoderConfig llama_like(const char* name, int layers, int hidden, int heads, int kv_heads,
                         int ffn, int vocab, int context) {
  DecoderConfig c;
  c.name = name;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.ffn = ffn;
  c.vocab = vocab;
  c.max_positions = context;
  c.ffn_kind = FfnKind::swiglu;
  c.tied_embeddings = false;
  c.positions = Positions::rotary;
  c.rms_norm = true;
  c.linear_bias = false;
  return c;
}

DecoderConfig mixtral_like(const char* name, int layers, int hidden, int heads, int ffn,
                           int vocab, int context) {
  DecoderConfig c = llama_like(name, layers, hidden, heads, 8, ffn, vocab, context);
  c.experts = 8;
  c.top_k = 2;
  return c;
}

// The layouts of other published training runs, each from its paper's architecture table and its
// Hugging Face config; what dlsim's decoder cannot express is said.
DecoderConfig opt_like(const char* name, int layers, int hidden, int heads) {
  DecoderConfig c = gpt2_like(name, layers, hidden, heads, 2048);
  c.vocab = 50272;  // facebook/opt-*: vocab_size
  c.ffn_kind = FfnKind::relu;
  return c;
}

// The GPT-2 layout as later runs trained it: their vocabulary, no position table (rotary, or
// ALiBi), no dropout.
DecoderConfig gpt2_layout_2022(const char* name, int layers, int hidden, int heads, int context, int vocab,
                               bool alibi) {
  DecoderConfig c = gpt2_like(name, layers, hidden, heads, context);
  c.vocab = vocab;
  c.positions = alibi ? Positions::alibi : Positions::rotary;
  c.dropout = false;
  return c;
}

// BLOOM 176B (BigScience 2022, Table 3; bigscience/bloom config): ALiBi, GELU, LayerNorm, biases,
// tied embeddings, a LayerNorm on the embeddings (word_embeddings_layernorm).
DecoderConfig bloom_176b() {
  DecoderConfig c = gpt2_layout_2022("bloom-176b", 70, 14336, 112, 2048, 250880, true);
  c.embedding_norm = true;
  return c;
}

// GPT-NeoX-20B (Black et al. 2022; EleutherAI/gpt-neox-20b config): attention and MLP side by
// side, each on its own LayerNorm, rotary on a quarter of each head (costed as on all of it),
// untied embeddings.
DecoderConfig gpt_neox_20b() {
  DecoderConfig c = gpt2_layout_2022("gpt-neox-20b", 44, 6144, 64, 2048, 50432, false);
  c.parallel_block = true;
  c.parallel_block_two_norms = true;
  c.tied_embeddings = false;
  return c;
}

// MPT-7B and MPT-30B (MosaicML 2023; mosaicml/mpt-* configs): ALiBi, LayerNorm, no biases, tied,
// expansion ratio 4.
DecoderConfig mpt_like(const char* name, int layers, int hidden, int heads, int context) {
  DecoderConfig c = gpt2_layout_2022(name, layers, hidden, heads, context, 50432, true);
  c.linear_bias = false;
  return c;
}

// Falcon (TII 2023; tiiuae/falcon-* configs): parallel attention and MLP, rotary, LayerNorm, no
// biases, GELU MLP of 4 x hidden, tied embeddings; 7B multi-query on one shared norm, 40B and
// 180B 8 K/V groups with a norm each for attention and MLP (new_decoder_architecture).
DecoderConfig falcon_like(const char* name, int layers, int hidden, int heads, int kv_heads) {
  DecoderConfig c = gpt2_layout_2022(name, layers, hidden, heads, 2048, 65024, false);
  c.kv_heads = kv_heads;
  c.parallel_block = true;
  c.parallel_block_two_norms = kv_heads > 1;
  c.linear_bias = false;
  return c;
}

// PaLM 540B (Chowdhery et al. 2022, Table 1 and Sec. 2): 118 layers of width 18432, 48 query
// heads of 256 features sharing one K/V head (multi-query), SwiGLU of 4 x width, parallel
// attention and MLP, rotary, no biases (norms with a scale only, counted as RMSNorm's h),
// shared input and output embeddings, a 256k vocabulary, 2048 tokens.
DecoderConfig palm_540b() {
  DecoderConfig c = llama_like("palm-540b", 118, 18432, 48, 1, 73728, 256000, 2048);
  c.head_dim = 256;
  c.parallel_block = true;
  c.tied_embeddings = true;
  return c;
}

// Gemma (Gemma Team 2024, Table 1; google/gemma-* configs): heads of 256 features (not hidden /
// heads), GeGLU, RMSNorm, rotary, tied embeddings, a 256k vocabulary, 8192 tokens; 2B multi-query.
DecoderConfig gemma_like(const char* name, int layers, int hidden, int heads, int kv_heads, int ffn) {
  DecoderConfig c = llama_like(name, layers, hidden, heads, kv_heads, ffn, 256000, 8192);
  c.head_dim = 256;
  c.ffn_kind = FfnKind::geglu;
  c.tied_embeddings = true;
  return c;
}

// GPT-2 (Radford et al. 2019; Hugging Face configs): context 1024, vocabulary 50257.
// GPT-3 (Brown et al. 2020, Table 2.1): context 2048, same BPE vocabulary, FFN 4d, the GPT-2
// layout (its alternating sparse attention is not modelled). Table 2.1 lists GPT-3 XL with 24
// heads of d_head 128, which does not multiply to d_model 2048; 16 heads of 128 are used here
// (costs do not depend on the head count when heads * d_head = d_model). GPT-3 13B is built with
// the table's d_model 5140 (head width 128.5 here).
// Llama 2 (Touvron et al. 2023) and Llama 3 (Meta 2024) per their Hugging Face configs.
// LLaMA (Touvron et al. 2023, "LLaMA", Table 2): the Llama layout, context 2048, vocabulary 32000,
// no grouped-query attention. Mistral 7B (Jiang et al. 2023; mistralai/Mistral-7B-v0.1 config):
// the Llama layout with 8 K/V heads, context 32768 (its 4096-token sliding window is not modelled).
// OPT (Zhang et al. 2022, Table 1): the GPT-2 layout with ReLU, vocabulary 50272, context 2048.
// Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts"; HF mistralai/Mixtral-8x7B-v0.1 config:
// max_position_embeddings 32768) and 8x22B (HF mistralai/Mixtral-8x22B-v0.1: 65536): the Llama
// layout with 8 KV heads and 8 SwiGLU experts per layer, 2 per token.
const Preset kPresets[] = {
    {"gpt2", [] { return gpt2_like("gpt2", 12, 768, 12, 1024); }},
    {"gpt2-medium", [] { return gpt2_like("gpt2-medium", 24, 1024, 16, 1024); }},
    {"gpt2-large", [] { return gpt2_like("gpt2-large", 36, 1280, 20, 1024); }},
    {"gpt2-xl", [] { return gpt2_like("gpt2-xl", 48, 1600, 25, 1024); }},
    {"gpt3-125m", [] { return gpt2_like("gpt3-125m", 12, 768, 12, 2048); }},
    {"gpt3-350m", [] { return gpt2_like("gpt3-350m", 24, 1024, 16, 2048); }},
    {"gpt3-1.3b", [] { return gpt2_like("gpt3-1.3b", 24, 2048, 16, 2048); }},
    {"gpt3-2.7b", [] { return gpt2_like("gpt3-2.7b", 32, 2560, 32, 2048); }},
    {"gpt3-6.7b", [] { return gpt2_like("gpt3-6.7b", 32, 4096, 32, 2048); }},
    {"gpt3-13b", [] { return gpt2_like("gpt3-13b", 40, 5140, 40, 2048); }},
    {"gpt3-175b", [] { return gpt2_like("gpt3-175b", 96, 12288, 96, 2048); }},
    {"llama2-7b", [] { return llama_like("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096); }},
    {"llama2-13b",
     [] { return llama_like("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096); }},
    {"llama2-70b", [] { return llama_like("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096); }},
    {"llama3-8b", [] { return llama_like("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192); }},
    {"llama3-70b",
     [] { return llama_like("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192); }},
    {"llama3-405b",
     [] { return llama_like("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192); }},
    {"llama-7b", [] { return llama_like("llama-7b", 32, 4096, 32, 32, 11008, 32000, 2048); }},
    {"llama-13b", [] { return llama_like("llama-13b", 40, 5120, 40, 40, 13824, 32000, 2048); }},
    {"llama-33b", [] { return llama_like("llama-33b", 60, 6656, 52, 52, 17920, 32000, 2048); }},
    {"llama-65b", [] { return llama_like("llama-65b", 80, 8192, 64, 64, 22016, 32000, 2048); }},
    {"mistral-7b", [] { return llama_like("mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768); }},
    {"opt-13b", [] { return opt_like("opt-13b", 40, 5120, 40); }},
    {"opt-30b", [] { return opt_like("opt-30b", 48, 7168, 56); }},
    {"opt-66b", [] { return opt_like("opt-66b", 64, 9216, 72); }},
    {"opt-175b", [] { return opt_like("opt-175b", 96, 12288, 96); }},
    {"bloom-176b", bloom_176b},
    {"gpt-neox-20b", gpt_neox_20b},
    {"mpt-7b", [] { return mpt_like("mpt-7b", 32, 4096, 32, 2048); }},
    {"mpt-30b", [] { return mpt_like("mpt-30b", 48, 7168, 64, 8192); }},
    {"falcon-7b", [] { return falcon_like("falcon-7b", 32, 4544, 71, 1); }},
    {"falcon-40b", [] { return falcon_like("falcon-40b", 60, 8192, 128, 8); }},
    {"falcon-180b", [] { return falcon_like("falcon-180b", 80, 14848, 232, 8); }},
    {"palm-540b", palm_540b},
    {"gemma-2b", [] { return gemma_like("gemma-2b", 18, 2048, 8, 1, 16384); }},
    {"gemma-7b", [] { return gemma_like("gemma-7b", 28, 3072, 16, 16, 24576); }},
    {"mixtral-8x7b",
     [] { return mixtral_like("mixtral-8x7b", 32, 4096, 32, 14336, 32000, 32768); }},
    {"mixtral-8x22b",
     [] { return mixtral_like("mixtral-8x22b", 56, 6144, 48, 16384, 32768, 65536); }},
};

}  // namespace

double decoder_head_dim(const DecoderConfig& c) {
  return c.head_dim > 0 ? double(c.head_dim) : double(c.hidden) / double(c.heads);
}

double decoder_q_features(const DecoderConfig& c) { return double(c.heads) * decoder_head_dim(c); }

double decoder_kv_features(const DecoderConfig& c) {
  const int kv_heads = c.kv_heads == 0 ? c.heads : c.kv_heads;
  return double(kv_heads) * decoder_head_dim(c);
}

ModelGraph decoder_transformer(const DecoderConfig& c, int sequence_length) {
  validate(c, sequence_length);
  ModelGraph g;
  g.name = c.name;
  g.sample_unit = "sequence";
  g.tokens_per_sample = sequence_length;
  const double s = sequence_length, h = c.hidden, v = c.vocab;
  // Token (+ learned position) rows gathered per token; one FLOP per element counted for the
  // gather/position add. Vocabulary-parallel: each rank holds 1/t of the rows and the partial
  // outputs are all-reduced.
  const double table_rows = v + (c.positions == Positions::learned ? double(c.max_positions) : 0.0);
  row_parallel(push(g.layers, "embeddings", LayerKind::embedding, table_rows * h, s * h,
                    (c.positions == Positions::learned ? 2 : 1) * s * h, s * h));
  if (c.embedding_norm) norm(g.layers, "embeddings.norm", c, s);
  for (int i = 0; i < c.layers; ++i) {
    const std::string prefix = "decoder.layer." + std::to_string(i);
    const size_t first = g.layers.size();
    if (c.parallel_block) {
      parallel_block(g.layers, prefix, c, s);
    } else {
      attention(g.layers, prefix, c, s);
      feed_forward(g.layers, prefix, c, s);
    }
    for (size_t j = first; j < g.layers.size(); ++j) g.layers[j].block = i;
  }
  norm(g.layers, "final_norm", c, s);
  // LM head h -> vocab without bias, vocabulary-parallel; a tied head reuses the token embedding
  // (counted there).
  gemm(split(push(g.layers, "lm_head", LayerKind::linear, c.tied_embeddings ? 0 : v * h,
                  s * 2 * h * v, s * h, s * v)),
       s, h, v);
  g.layers.back().vocabulary = true;
  if (c.tied_embeddings) g.layers.back().tied_to = 0;  // the token embedding (layer 0)
  if (c.fused_cross_entropy) {
    // The loss as one fused softmax cross-entropy kernel over the (vocabulary-parallel) logits, a
    // row reduction that reads every logit; nothing kept beyond what the head saved.
    Layer& loss = saves(split(push(g.layers, "loss", LayerKind::softmax, 0, kSoftmaxFlops * s * v, s * v, s)), 0);
    loss.memory_kernel = MemoryKernel::cross_entropy;
  } else {
    unfused_cross_entropy(g.layers, c, s, v);
  }
  return g;
}

double decoder_active_parameters(const DecoderConfig& c) {
  const ModelGraph g = decoder_transformer(c, 1);
  double total = 0;
  for (const Layer& l : g.layers) {
    total += l.experts > 0 ? l.parameters * c.top_k / l.experts : l.parameters;
  }
  return total;
}

std::vector<std::string> decoder_model_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

DecoderConfig decoder_config(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name == p.name) return p.make();
  }
  std::string known;
  for (const Preset& p : kPresets) known += (known.empty() ? "" : ", ") + std::string(p.name);
  throw std::out_of_range("unknown decoder model '" + name + "'; known: " + known);
}

ModelGraph decoder_model(const std::string& name) {
  const DecoderConfig c = decoder_config(name);
  return decoder_transformer(c, c.max_positions);
}

ModelGraph decoder_model(const std::string& name, int sequence_length) {
  return decoder_transformer(decoder_config(name), sequence_length);
}

}  // namespace dlsim::models
