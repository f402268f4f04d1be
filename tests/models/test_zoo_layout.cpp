// Tests of the layout the zoo gives parallel plans (model_graph.hpp): block indices, Megatron
// tensor-parallel split and all-reduces, attention core, backward FLOPs, and the activations
// kept for backward against Korthikanti et al. 2022.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

struct Transformer {
  std::string name;
  int layers;
  const char* block_prefix;  // layers of block i are named <prefix><i>.
};

std::vector<Transformer> transformers() {
  std::vector<Transformer> all{{"bert-base", 12, "encoder.layer."},
                               {"bert-large", 24, "encoder.layer."},
                               {"vit-b16", 12, "encoder.layers."},
                               {"vit-l16", 24, "encoder.layers."}};
  for (const std::string& n : decoder_model_names()) {
    all.push_back({n, decoder_config(n).layers, "decoder.layer."});
  }
  return all;
}

// Short sequences keep these fast; the layout does not depend on the length.
ModelGraph build(const std::string& name) {
  return zoo_model(name, zoo_model_has_sequence(name) ? 64 : 0);
}

// The block index a layer's name gives, -1 outside the repeating layers.
int block_from_name(const std::string& layer, const std::string& prefix) {
  if (!layer.starts_with(prefix)) return -1;
  return std::stoi(layer.substr(prefix.size()));
}

TEST(ZooLayout, TransformerLayersCarryTheirBlockIndex) {
  for (const Transformer& t : transformers()) {
    const ModelGraph g = build(t.name);
    EXPECT_EQ(g.blocks(), t.layers) << t.name;
    for (const Layer& l : g.layers) {
      EXPECT_EQ(l.block, block_from_name(l.name, t.block_prefix)) << t.name << " " << l.name;
      EXPECT_GE(l.block, -1) << t.name << " " << l.name;
      EXPECT_LT(l.block, t.layers) << t.name << " " << l.name;
    }
  }
}

bool ends_with(const std::string& s, const char* suffix) { return s.ends_with(suffix); }

// Within a block, replicated layers are the norms, residual adds, the MoE router and combine;
// all others (QKV, rotary, attention core, output, FFN linears and activation) are split.
bool replicated_in_block(const Layer& l) {
  return l.kind == LayerKind::norm || ends_with(l.name, "residual") ||
         ends_with(l.name, ".router") || ends_with(l.name, ".combine") ||
         ends_with(l.name, "output_dropout") || ends_with(l.name, "ffn.dropout");
}

TEST(ZooLayout, EveryBlockHasTwoAllReducesOneInAParallelBlockAndItsAttentionCoreLayers) {
  for (const Transformer& t : transformers()) {
    const ModelGraph g = build(t.name);
    std::vector<int> all_reduces(t.layers), core(t.layers);
    for (const Layer& l : g.layers) {
      if (l.block < 0) continue;
      all_reduces[l.block] += l.tp_all_reduce;
      core[l.block] += l.attention_core;
      EXPECT_EQ(l.tensor == TensorSplit::split, !replicated_in_block(l)) << t.name << " " << l.name;
      if (l.tp_all_reduce) {  // the attention output and the FFN down projection
        EXPECT_TRUE(ends_with(l.name, "output") || ends_with(l.name, "down") ||
                    ends_with(l.name, "fc2"))
            << t.name << " " << l.name;
      }
      if (l.attention_core) {
        EXPECT_TRUE(ends_with(l.name, "scores") || ends_with(l.name, "softmax") ||
                    ends_with(l.name, "attn.dropout") || ends_with(l.name, "probs_dropout") ||
                    ends_with(l.name, "context"))
            << t.name << " " << l.name;
      }
    }
    // A parallel block (GPT-NeoX, Falcon) reduces its attention and MLP partial sums together.
    const bool decoder = t.block_prefix == std::string("decoder.layer.");
    const int reductions = decoder && decoder_config(t.name).parallel_block ? 1 : 2;
    for (int i = 0; i < t.layers; ++i) {
      EXPECT_EQ(all_reduces[i], reductions) << t.name << " block " << i;
      // Scores, softmax, context, and the attention dropout in models trained with dropout.
      const bool bert = t.name.starts_with("bert-");
      const bool dropout = bert || (decoder && decoder_config(t.name).dropout);
      EXPECT_EQ(core[i], dropout ? 4 : 3) << t.name << " block " << i;
    }
    EXPECT_TRUE(g.has_tensor_layout()) << t.name;
  }
}

const Layer& find_layer(const ModelGraph& g, const std::string& name) {
  const auto it = std::find_if(g.layers.begin(), g.layers.end(),
                               [&](const Layer& l) { return l.name == name; });
  if (it == g.layers.end()) throw std::runtime_error("no layer " + name);
  return *it;
}

TEST(ZooLayout, VocabularyParallelEmbeddingAndHead) {
  for (const char* name : {"gpt3-175b", "llama2-70b", "mixtral-8x7b"}) {
    const ModelGraph g = build(name);
    const Layer& embedding = find_layer(g, "embeddings");
    EXPECT_EQ(embedding.tensor, TensorSplit::split) << name;
    EXPECT_TRUE(embedding.tp_all_reduce) << name;
    EXPECT_EQ(find_layer(g, "lm_head").tensor, TensorSplit::split) << name;
    EXPECT_FALSE(find_layer(g, "lm_head").tp_all_reduce) << name;
    EXPECT_EQ(find_layer(g, "final_norm").tensor, TensorSplit::replicated) << name;
  }
  const ModelGraph bert = build("bert-large");
  EXPECT_TRUE(find_layer(bert, "embeddings").tp_all_reduce);
  EXPECT_EQ(find_layer(bert, "mlm.decoder").tensor, TensorSplit::split);
  EXPECT_EQ(find_layer(bert, "pooler.dense").tensor, TensorSplit::replicated);
}

TEST(ZooLayout, ConvolutionalNetworksHaveNoBlocksAndNoTensorLayout) {
  for (const char* name : {"resnet50", "vgg16", "inception-v3"}) {
    const ModelGraph g = build(name);
    EXPECT_EQ(g.blocks(), 0) << name;
    EXPECT_FALSE(g.has_tensor_layout()) << name;
    EXPECT_FALSE(g.has_experts()) << name;
    for (const Layer& l : g.layers) EXPECT_FALSE(l.tp_all_reduce) << name << " " << l.name;
  }
}

TEST(ZooLayout, BackwardCostsMoreThanForwardEverywhere) {
  for (const std::string& name : zoo_model_names()) {
    const ModelGraph g = zoo_model(name);  // at the usual length
    const double forward = g.forward_flops_per_sample(), backward = g.backward_flops_per_sample();
    EXPECT_GT(backward, forward) << name;
    EXPECT_LE(backward, 2 * forward) << name;  // 2x is the matrix-layer ceiling
    EXPECT_DOUBLE_EQ(g.training_flops_per_sample(), forward + backward) << name;
  }
}

// Saved activation bytes of one decoder layer at 2-byte elements, micro-batch b = 1.
double block_saved_bytes(const ModelGraph& g, int block) {
  double elements = 0;
  for (const Layer& l : g.layers) {
    if (l.block == block) elements += saved_elements(l);
  }
  return 2 * elements;
}

// Korthikanti et al. 2022, sec. 4.1: one transformer layer keeps sbh(34 + 5as/h) bytes at
// 16-bit precision with dropout:
//   attention 11sbh + 5as^2b: QKV input 2sbh, Q and K 4sbh, softmax output 2as^2b, softmax
//     dropout mask as^2b, dropout output 2as^2b, V 2sbh, output-linear input 2sbh, its dropout
//     mask sbh;
//   MLP 19sbh: first linear's input 2sbh, GELU input 8sbh, second linear's input 8sbh, dropout
//     mask sbh;
//   two LayerNorm inputs 4sbh.
// GPT-3 trains with dropout, and its layers keep exactly these (our softmax keeps the full a*s*s
// matrix as Megatron does; its FLOPs are the causal half). Without dropout (a GPT-3 layout with
// dropout off) the two sbh masks, the as^2b mask and the 2as^2b dropout output go: 32sbh + 2as^2b.
TEST(ZooLayout, SavedActivationsMatchKorthikanti) {
  const double s = 2048, b = 1, h = 12288, a = 96;
  const ModelGraph g = decoder_model("gpt3-175b", int(s));
  const double with_dropout = s * b * h * (34 + 5 * a * s / h);
  EXPECT_NEAR(block_saved_bytes(g, 0), with_dropout, 0.15 * with_dropout);
  // Our layer-by-layer sum reproduces the reference exactly, and every layer keeps the same.
  EXPECT_DOUBLE_EQ(block_saved_bytes(g, 0), with_dropout);
  EXPECT_DOUBLE_EQ(block_saved_bytes(g, 95), with_dropout);
  DecoderConfig no_dropout = decoder_config("gpt3-175b");
  no_dropout.dropout = false;
  const ModelGraph plain = decoder_transformer(no_dropout, int(s));
  EXPECT_DOUBLE_EQ(block_saved_bytes(plain, 0), 32 * s * b * h + 2 * a * s * s * b);
}

// BERT pre-trains with dropout 0.1 (Devlin et al. 2019): its post-LN layer keeps what a GPT-3
// layer keeps, sbh(34 + 5as/h) bytes, fused or not (the unfused scale and mask keep nothing; the
// FP32 softmax of 16-bit training keeps its output at 4 bytes: 2as^2b more). ViT trains without
// dropout: 32sbh + 2as^2b.
TEST(ZooLayout, EncoderLayersKeepKorthikantisActivations) {
  const double s = 128, b = 1, h = 1024, a = 16;
  const double with_dropout = s * b * h * (34 + 5 * a * s / h);
  EXPECT_DOUBLE_EQ(block_saved_bytes(bert_large(int(s)), 0), with_dropout);
  EXPECT_DOUBLE_EQ(block_saved_bytes(bert_large(int(s)), 23), with_dropout);
  const ModelGraph unfused = encoder_model("bert-large", {int(s), 0, false, false, false});
  EXPECT_DOUBLE_EQ(block_saved_bytes(unfused, 0), with_dropout);
  const ModelGraph fp32_softmax = encoder_model("bert-large", {int(s), 0, false, false, true});
  EXPECT_DOUBLE_EQ(block_saved_bytes(fp32_softmax, 0), with_dropout + 2 * a * s * s * b);
  const double vs = 197, vh = 768, va = 12;
  EXPECT_DOUBLE_EQ(block_saved_bytes(vit_b16(), 0), 32 * vs * b * vh + 2 * va * vs * vs * b);
}

// Fused (Megatron's kernels, the default) an encoder layer's attention softmax is one kernel and
// each dropout carries the residual add; unfused (eager PyTorch) BERT scales, masks and
// normalises in three kernels and adds the residual in a fourth, ViT has no mask to apply, and
// only with softmax_in_fp32 are there conversions. The FLOPs stay the same. (In the decoders'
// unfused path, Megatron-LM's, the probabilities go back to 16 bits before the dropout.)
TEST(ZooLayout, UnfusedEncoderKernelsAreSeparateLayers) {
  const auto has = [](const ModelGraph& g, const std::string& name) {
    return std::any_of(g.layers.begin(), g.layers.end(), [&](const Layer& l) { return l.name == name; });
  };
  const ModelGraph fused = bert_large(128);
  const ModelGraph eager = encoder_model("bert-large", {128, 0, false, false, true});
  const std::string p = "encoder.layer.0.attention.";
  EXPECT_TRUE(has(fused, p + "softmax"));
  EXPECT_FALSE(has(fused, p + "scale"));
  EXPECT_TRUE(find_layer(fused, p + "residual").fused);
  for (const char* step : {"softmax_to_fp32", "scale", "mask", "softmax", "probs_dropout", "probs_to_half",
                           "output_dropout"}) {
    EXPECT_TRUE(has(eager, p + step)) << step;
  }
  // Autocast drops the probabilities out in FP32 and converts them for the context product.
  EXPECT_FALSE(has(eager, p + "softmax_to_half"));
  EXPECT_EQ(find_layer(eager, p + "probs_dropout").output_element_bytes, 4);
  EXPECT_EQ(find_layer(eager, p + "probs_to_half").output_element_bytes, 2);
  EXPECT_FALSE(find_layer(eager, p + "residual").fused);
  EXPECT_EQ(find_layer(eager, p + "softmax").output_element_bytes, 4);
  EXPECT_DOUBLE_EQ(eager.forward_flops_per_sample(), fused.forward_flops_per_sample());
  const ModelGraph vit = encoder_model("vit-b16", {0, 0, false, false, false});
  EXPECT_TRUE(has(vit, "encoder.layers.0.attention.scale"));
  EXPECT_FALSE(has(vit, "encoder.layers.0.attention.mask"));
  EXPECT_FALSE(has(vit, "encoder.layers.0.attention.softmax_to_fp32"));
  EXPECT_FALSE(has(vit, "encoder.layers.0.attention.probs_dropout"));
}

TEST(ZooLayout, SavedActivationsOfGatedGroupedQueryLayers) {
  // llama2-70b: two RMSNorm inputs 2sh, QKV input sh, rotated Q and K s(h + kv), softmax output
  // a*s*s, V s*kv, output input sh, gate_up input sh, SwiGLU inputs 2sf, down input sf.
  const double s = 512, h = 8192, kv = 1024, f = 28672, a = 64;
  const ModelGraph g = decoder_model("llama2-70b", int(s));
  const double elements = 2 * s * h + s * h + s * (h + kv) + a * s * s + s * kv + s * h +
                          s * h + 2 * s * f + s * f;
  EXPECT_DOUBLE_EQ(block_saved_bytes(g, 0), 2 * elements);
  EXPECT_DOUBLE_EQ(saved_elements(find_layer(g, "decoder.layer.0.attn.rotary")), 0);
}

}  // namespace
}  // namespace dlsim::models
