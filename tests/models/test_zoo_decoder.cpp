// Tests of the decoder-only transformers (zoo_decoder.cpp): parameter counts against published
// values and a hand derivation, training FLOPs against the 6N + 6Ls*h rule, grouped-query K/V.
// Mixture of experts: test_zoo_moe.cpp; parallel layout and saved activations: test_zoo_layout.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

// Hand derivation of the parameter count of a DecoderConfig, independent of the layer list:
// per layer: QKV h(q + 2kv) + output qh (+ biases q + 2kv + h; q = heads x head_dim, h unless
// head_dim is given), FFN 2hf (plain, + f + h biases)
// or 3hf (gated, + 2f + h), two norms (one in a parallel block unless it has two; h each for
// RMSNorm, 2h for LayerNorm); then the final norm, an embedding norm where there is one, the
// embedding table (vocab + learned positions) * h and an untied LM head vocab * h.
// With E experts the FFN matrices (and their biases) are held E times, plus a router h*E.
double hand_parameters(const DecoderConfig& c) {
  const double h = c.hidden, f = c.ffn, v = c.vocab, q = decoder_q_features(c), kv = decoder_kv_features(c);
  const double nrm = c.rms_norm ? h : 2 * h, e = c.experts > 0 ? c.experts : 1;
  const double router = c.experts > 0 ? h * c.experts : 0;
  const double norms = c.parallel_block && !c.parallel_block_two_norms ? 1 : 2;
  double layer = h * (q + 2 * kv) + q * h + e * (c.gated_ffn() ? 3 : 2) * h * f + router + norms * nrm;
  if (c.linear_bias) layer += (q + 2 * kv) + h + e * ((c.gated_ffn() ? 2 * f : f) + h);
  const double positions = c.positions == Positions::learned ? c.max_positions : 0;
  return c.layers * layer + (c.embedding_norm ? 2 : 1) * nrm + (v + positions) * h + (c.tied_embeddings ? 0 : v * h);
}

struct Published {
  const char* name;
  double derived;    // what the builder gives (exact)
  double published;  // the published count
  double tolerance;  // relative
};

// Published: GPT-2 per the Hugging Face checkpoints; GPT-3 per Brown et al. Table 2.1 (rounded
// labels: 350M, 1.3B and 2.7B are 1.7%, 1.2% and 1.8% from the count the table's shapes give,
// so those three are held to 2%); Llama 2 per Touvron et al.; Llama 3 per Meta's model cards;
// Mixtral 8x7B "46.7B total parameters" (Mistral AI, "Mixtral of experts", 2023-12-11; Jiang et
// al. 2024 round it to 47B), Mixtral 8x22B "141B" (Mistral AI, "Cheaper, Better, Faster,
// Stronger", 2024-04-17; the Hugging Face model card lists 140.6B).
const Published kPublished[] = {
    {"gpt2", 124'439'808, 124e6, 0.01},
    {"gpt2-medium", 354'823'168, 355e6, 0.01},
    {"gpt2-large", 774'030'080, 774e6, 0.01},
    {"gpt2-xl", 1'557'611'200, 1.558e9, 0.01},  // "1.5B"; Radford et al. list 1542M
    {"gpt3-125m", 125'226'240, 125e6, 0.01},
    {"gpt3-350m", 355'871'744, 350e6, 0.02},
    {"gpt3-1.3b", 1'315'723'264, 1.3e9, 0.02},
    {"gpt3-2.7b", 2'651'553'280, 2.7e9, 0.02},
    {"gpt3-6.7b", 6'658'404'352, 6.7e9, 0.01},
    {"gpt3-13b", 12'952'938'780, 13e9, 0.01},
    {"gpt3-175b", 174'604'259'328, 175e9, 0.01},
    {"llama2-7b", 6'738'415'616, 6.74e9, 0.01},
    {"llama2-13b", 13'015'864'320, 13.0e9, 0.01},
    {"llama2-70b", 68'976'648'192, 69.0e9, 0.01},
    {"llama3-8b", 8'030'261'248, 8.03e9, 0.01},
    {"llama3-70b", 70'553'706'496, 70.6e9, 0.01},
    {"llama3-405b", 405'853'388'800, 405.9e9, 0.01},
    // LLaMA (Touvron et al. 2023a, Table 2: 6.7B, 13.0B, 32.5B, 65.2B); Mistral 7B ("7.3B",
    // mistral.ai, 2023-09-27); OPT (Zhang et al. 2022, Table 1 labels); BLOOM (BigScience 2022:
    // 176,247,271,424 with its embedding LayerNorm); GPT-NeoX-20B (Black et al. 2022, Table 1:
    // 20,554,567,680, two LayerNorms per parallel block); MPT (MosaicML
    // model cards: 6.7B, 30B); Falcon (TII model cards' labels 7B, 40B, 180B: the configs' shapes
    // give 6.9B and 41.3B, so those two are held to 2% and 4%).
    {"llama-7b", 6'738'415'616, 6.7e9, 0.01},
    {"llama-13b", 13'015'864'320, 13.0e9, 0.01},
    {"llama-33b", 32'528'943'616, 32.5e9, 0.01},
    {"llama-65b", 65'285'660'672, 65.2e9, 0.01},
    {"mistral-7b", 7'241'732'096, 7.3e9, 0.01},
    {"opt-13b", 12'853'463'040, 13e9, 0.02},
    {"opt-30b", 29'974'525'952, 30e9, 0.01},
    {"opt-66b", 65'719'683'072, 66e9, 0.01},
    {"opt-175b", 174'604'443'648, 175e9, 0.01},
    {"bloom-176b", 176'247'271'424, 176'247'271'424, 1e-12},
    {"gpt-neox-20b", 20'554'567'680, 20'554'567'680, 1e-12},
    {"mpt-7b", 6'649'552'896, 6.7e9, 0.01},
    {"mpt-30b", 29'957'896'192, 30e9, 0.01},
    {"falcon-7b", 6'921'720'704, 7e9, 0.02},
    {"falcon-40b", 41'303'293'952, 40e9, 0.04},
    {"falcon-180b", 178'557'088'768, 180e9, 0.01},
    // PaLM 540B (Chowdhery et al. 2022, Table 1: 540.35B); Gemma 2B and 7B (Gemma Team 2024,
    // Table 2: 2.51B and 8.54B, embeddings included): heads of 256, not hidden / heads.
    {"palm-540b", 540'356'474'880, 540.35e9, 0.001},
    {"gemma-2b", 2'506'172'416, 2.51e9, 0.005},
    {"gemma-7b", 8'537'680'896, 8.54e9, 0.005},
    {"mixtral-8x7b", 46'702'792'704, 46.7e9, 0.01},
    {"mixtral-8x22b", 140'630'071'296, 141e9, 0.01},
};

TEST(ZooDecoder, ParameterCountsMatchPublishedAndHandDerivation) {
  ASSERT_EQ(decoder_model_names().size(), std::size(kPublished));
  for (const Published& p : kPublished) {
    const ModelGraph g = decoder_model(p.name);
    EXPECT_EQ(g.name, p.name);
    EXPECT_DOUBLE_EQ(g.parameters(), p.derived) << p.name;
    EXPECT_DOUBLE_EQ(g.parameters(), hand_parameters(decoder_config(p.name))) << p.name;
    EXPECT_NEAR(g.parameters(), p.published, p.tolerance * p.published) << p.name;
  }
}

TEST(ZooDecoder, Gpt2ParametersByHand) {
  // wte 50257*768 + wpe 1024*768 + 12 * (12h^2 + 13h) + final LN 2h = 124,439,808.
  const double h = 768;
  EXPECT_DOUBLE_EQ(decoder_model("gpt2").parameters(),
                   (50257.0 + 1024) * h + 12 * (12 * h * h + 13 * h) + 2 * h);
}

// Reference for the training FLOPs per token of a dense decoder: Kaplan et al. 2020, Table 1,
// C_train = 3 * C_forward = 6N + 6 * n_layer * n_ctx * d_attn, with
//   N = L * (h*(h + 2*kv) + h*h + m*h*f) + V*h,  d_attn = h,  n_ctx = s,
// kv = kv_heads*h/heads, m = 3 for a gated FFN and 2 otherwise. N counts the weight matrices of
// the decoder layers plus the LM-head matmul V*h (Kaplan's "de-embed" 2*d_model*n_vocab forward
// term, which his N leaves out), and leaves out embeddings, biases and norms. Kaplan's attention
// term 2*n_layer*n_ctx*d_attn per token forward is QK^T and scores*V over n_ctx/2 keys on
// average, which is exactly what our causal costing does (s(s+1)/2 pairs per head: 2(s+1)h per
// token per layer forward), so it needs no further halving. Our backward is 2x forward for the
// matrix layers (as in Kaplan) but 1x for norms, softmax, activations and adds, which the
// reference leaves out entirely; together with the +1 of s+1 and the embedding they put us a
// little above it: 0.02% (gpt3-175b) to 0.12% (gpt3-1.3b at 2048), so 1% is a safe bound.
double closed_form_training_flops_per_token(const DecoderConfig& c, double s) {
  const double h = c.hidden, f = c.ffn, v = c.vocab, kv = decoder_kv_features(c);
  const double n =
      c.layers * (h * (h + 2 * kv) + h * h + (c.gated_ffn() ? 3 : 2) * h * f) + v * h;
  return 6 * n + 6 * c.layers * s * h;
}

TEST(ZooDecoder, TrainingFlopsPerTokenMatchClosedForm) {
  for (const char* name : {"gpt3-175b", "llama2-70b", "gpt3-1.3b"}) {
    const DecoderConfig c = decoder_config(name);
    for (int s : {c.max_positions, 512}) {
      const ModelGraph g = decoder_model(name, s);
      ASSERT_EQ(g.tokens_per_sample, s);
      const double per_token = g.training_flops_per_sample() / s;
      const double expected = closed_form_training_flops_per_token(c, s);
      EXPECT_NEAR(per_token, expected, 0.01 * expected) << name << " s=" << s;
      EXPECT_GT(per_token, expected) << name;  // norms, softmax, activations cost something
    }
  }
  // gpt3-175b at s=2048: 6N = 6 * 174.59e9 (+ 0.6%), attention 6*96*2048*12288 = 14.5 TFLOP.
  const double gpt3 = decoder_model("gpt3-175b").training_flops_per_sample() / 2048;
  EXPECT_NEAR(gpt3, 1.0625e12, 0.02 * 1.0625e12);
}

const Layer& find_layer(const ModelGraph& g, const std::string& name) {
  const auto it = std::find_if(g.layers.begin(), g.layers.end(),
                               [&](const Layer& l) { return l.name == name; });
  if (it == g.layers.end()) throw std::runtime_error("no layer " + name);
  return *it;
}

TEST(ZooDecoder, GroupedQueryAttentionShrinksKV) {
  DecoderConfig gqa = decoder_config("llama2-70b");  // 64 heads, 8 KV heads, head_dim 128
  DecoderConfig mha = gqa;
  mha.kv_heads = 0;  // plain multi-head
  const double h = 8192, kv = 8 * 128;
  EXPECT_DOUBLE_EQ(decoder_kv_features(gqa), kv);
  EXPECT_DOUBLE_EQ(decoder_kv_features(mha), h);
  const ModelGraph a = decoder_transformer(gqa, 128), b = decoder_transformer(mha, 128);
  EXPECT_DOUBLE_EQ(find_layer(a, "decoder.layer.0.attn.qkv").parameters, h * (h + 2 * kv));
  EXPECT_DOUBLE_EQ(find_layer(b, "decoder.layer.0.attn.qkv").parameters, 3 * h * h);
  // 80 layers, K and V each shrink from h*h to h*kv.
  EXPECT_DOUBLE_EQ(b.parameters() - a.parameters(), 80 * 2 * h * (h - kv));
  EXPECT_LT(a.forward_flops_per_sample(), b.forward_flops_per_sample());
  gqa.kv_heads = 7;  // must divide the heads
  EXPECT_THROW(decoder_transformer(gqa, 128), std::invalid_argument);
}

TEST(ZooDecoder, LayoutFollowsTheConfig) {
  const ModelGraph gpt = decoder_model("gpt2", 64), llama = decoder_model("llama2-7b", 64);
  // GPT-2: GELU FFN with biases, LayerNorm, tied head (no parameters of its own).
  EXPECT_DOUBLE_EQ(find_layer(gpt, "decoder.layer.0.ffn.up").parameters, 768.0 * 3072 + 3072);
  EXPECT_DOUBLE_EQ(find_layer(gpt, "decoder.layer.0.attn.norm").parameters, 2 * 768.0);
  EXPECT_DOUBLE_EQ(find_layer(gpt, "lm_head").parameters, 0);
  EXPECT_DOUBLE_EQ(find_layer(gpt, "embeddings").parameters, (50257.0 + 1024) * 768);
  // Llama: SwiGLU (gate + up, down), no biases, RMSNorm, rotary, untied head.
  EXPECT_DOUBLE_EQ(find_layer(llama, "decoder.layer.0.ffn.gate_up").parameters,
                   2 * 4096.0 * 11008);
  EXPECT_DOUBLE_EQ(find_layer(llama, "decoder.layer.0.ffn.down").parameters, 11008.0 * 4096);
  EXPECT_DOUBLE_EQ(find_layer(llama, "decoder.layer.0.attn.norm").parameters, 4096);
  EXPECT_DOUBLE_EQ(find_layer(llama, "lm_head").parameters, 32000.0 * 4096);
  EXPECT_DOUBLE_EQ(find_layer(llama, "embeddings").parameters, 32000.0 * 4096);
  EXPECT_NO_THROW(find_layer(llama, "decoder.layer.31.attn.rotary"));
  EXPECT_THROW(find_layer(gpt, "decoder.layer.0.attn.rotary"), std::runtime_error);
  for (const ModelGraph* g : {&gpt, &llama}) {
    EXPECT_EQ(g->sample_unit, "sequence");
    for (const Layer& l : g->layers) {
      EXPECT_GT(l.input_elements, 0) << l.name;
      EXPECT_GT(l.activation_elements, 0) << l.name;
      EXPECT_GT(l.forward_flops, 0) << l.name;
    }
  }
  // Causal scores: s(s+1)/2 pairs per head, 2*h FLOPs per pair over all heads.
  EXPECT_DOUBLE_EQ(find_layer(gpt, "decoder.layer.0.attn.scores").forward_flops,
                   64.0 * 65 / 2 * 2 * 768);
}

TEST(ZooDecoder, UnfusedKernelsAddLaunchesButNoArithmeticOrParameters) {
  DecoderConfig c = decoder_config("gpt2");
  const ModelGraph fused = decoder_transformer(c, 64);
  c.fused_kernels = false;
  c.softmax_in_fp32 = true;
  const ModelGraph unfused = decoder_transformer(c, 64);
  EXPECT_DOUBLE_EQ(unfused.parameters(), fused.parameters());
  EXPECT_DOUBLE_EQ(unfused.forward_flops_per_sample(), fused.forward_flops_per_sample());
  EXPECT_DOUBLE_EQ(unfused.training_flops_per_sample(), fused.training_flops_per_sample());
  // Per layer: the up projection's bias add, two output bias adds, and four more softmax steps
  // (to FP32, scale, mask, back to 16 bits) around the softmax itself.
  EXPECT_EQ(unfused.layers.size(), fused.layers.size() + 12u * 7);
  const Layer& bias = find_layer(unfused, "decoder.layer.0.ffn.up_bias");
  EXPECT_TRUE(bias.backward_free);
  EXPECT_EQ(bias.tensor, TensorSplit::split);             // on the column-parallel output
  EXPECT_DOUBLE_EQ(bias.input_elements, 64.0 * 3072);
  EXPECT_TRUE(find_layer(unfused, "decoder.layer.0.attn.output_bias").backward_free);
  EXPECT_FALSE(find_layer(unfused, "decoder.layer.0.attn.residual").fused);
  EXPECT_TRUE(find_layer(fused, "decoder.layer.0.attn.residual").fused);  // bias-dropout-add
  // The softmax in FP32 between two conversions; backward keeps its FP32 output, twice the
  // 16-bit elements the fused kernel's output takes.
  const double probabilities = 12.0 * 64 * 64;
  const Layer& to_fp32 = find_layer(unfused, "decoder.layer.0.attn.softmax_to_fp32");
  EXPECT_DOUBLE_EQ(to_fp32.input_element_bytes, 2);
  EXPECT_DOUBLE_EQ(to_fp32.output_element_bytes, 4);
  EXPECT_TRUE(to_fp32.attention_core);
  EXPECT_DOUBLE_EQ(find_layer(unfused, "decoder.layer.0.attn.mask").input_element_bytes, 4);
  EXPECT_DOUBLE_EQ(find_layer(unfused, "decoder.layer.0.attn.softmax_to_half").output_element_bytes, 2);
  EXPECT_DOUBLE_EQ(saved_elements(find_layer(unfused, "decoder.layer.0.attn.softmax")), 2 * probabilities);
  EXPECT_DOUBLE_EQ(saved_elements(find_layer(fused, "decoder.layer.0.attn.softmax")), probabilities);
  // Without the FP32 softmax: scale and mask only, at the training precision.
  c.softmax_in_fp32 = false;
  const ModelGraph half = decoder_transformer(c, 64);
  EXPECT_EQ(half.layers.size(), fused.layers.size() + 12u * 5);
  EXPECT_DOUBLE_EQ(find_layer(half, "decoder.layer.0.attn.scale").input_element_bytes, 0);
  EXPECT_THROW(find_layer(half, "decoder.layer.0.attn.softmax_to_fp32"), std::runtime_error);
}

TEST(ZooDecoder, UnfusedCrossEntropyIsMegatronsStepsOverTheLogits) {
  DecoderConfig c = decoder_config("gpt2");
  const ModelGraph fused = decoder_transformer(c, 64);
  c.fused_cross_entropy = false;
  c.cross_entropy_in_fp32 = true;
  const ModelGraph unfused = decoder_transformer(c, 64);
  EXPECT_DOUBLE_EQ(unfused.training_flops_per_sample(), fused.training_flops_per_sample());
  EXPECT_DOUBLE_EQ(unfused.parameters(), fused.parameters());
  // to FP32, max, subtract, exp, sum, target, normalize in place of the one fused kernel.
  EXPECT_EQ(unfused.layers.size(), fused.layers.size() + 6);
  const double logits = 64.0 * 50257;
  const Layer& to_fp32 = find_layer(unfused, "loss.to_fp32");
  EXPECT_FALSE(to_fp32.backward_free);  // its backward converts the gradient back
  EXPECT_DOUBLE_EQ(to_fp32.output_element_bytes, 4);
  for (const char* reduced : {"loss.max", "loss.sum", "loss.target"}) {
    const Layer& l = find_layer(unfused, reduced);
    EXPECT_TRUE(l.tp_all_reduce) << reduced;
    EXPECT_TRUE(l.backward_free) << reduced;
    EXPECT_DOUBLE_EQ(l.activation_elements, 64) << reduced;
  }
  EXPECT_DOUBLE_EQ(find_layer(unfused, "loss.max").input_elements, logits);
  EXPECT_DOUBLE_EQ(find_layer(unfused, "loss.target").input_elements, 64);  // one logit per row
  EXPECT_TRUE(find_layer(unfused, "loss.exp").backward_free);
  const Layer& normalize = find_layer(unfused, "loss.normalize");
  EXPECT_FALSE(normalize.backward_free);  // the autograd function's one backward pass
  EXPECT_DOUBLE_EQ(saved_elements(normalize), 2 * logits);  // the FP32 softmax
  EXPECT_TRUE(unfused.layers.back().tensor == TensorSplit::split);
}

TEST(ZooDecoder, SequenceLengthDefaultsToContextAndIsBounded) {
  EXPECT_EQ(decoder_model("gpt2").tokens_per_sample, 1024);
  EXPECT_EQ(decoder_model("gpt3-175b").tokens_per_sample, 2048);
  EXPECT_EQ(decoder_model("llama2-7b").tokens_per_sample, 4096);
  EXPECT_EQ(decoder_model("llama3-405b").tokens_per_sample, 8192);
  EXPECT_EQ(decoder_model("llama3-8b", 1).tokens_per_sample, 1);
  EXPECT_THROW(decoder_model("gpt2", 1025), std::invalid_argument);
  EXPECT_THROW(decoder_model("llama2-7b", 0), std::invalid_argument);
  EXPECT_NO_THROW(decoder_model("llama2-7b", 4096));
  // Parameters do not depend on the sequence length.
  EXPECT_DOUBLE_EQ(decoder_model("llama3-8b", 128).parameters(),
                   decoder_model("llama3-8b").parameters());
}

TEST(ZooDecoder, UnknownNamesThrow) {
  EXPECT_THROW(decoder_model("gpt4"), std::out_of_range);
  EXPECT_THROW(decoder_model("GPT2"), std::out_of_range);  // names are exact
  EXPECT_THROW(decoder_config("llama2-7B"), std::out_of_range);
  EXPECT_THROW(decoder_model("bert-base", 128), std::out_of_range);
}

}  // namespace
}  // namespace dlsim::models
