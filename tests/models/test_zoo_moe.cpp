// Tests of the mixture-of-experts decoders (zoo_decoder.cpp): Mixtral 8x7B and 8x22B. Total
// parameter counts are checked with the other decoders (test_zoo_decoder.cpp); here: active
// parameters, the expert layers' costs, the all-to-all placement and the training FLOPs.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

const Layer& find_layer(const ModelGraph& g, const std::string& name) {
  const auto it = std::find_if(g.layers.begin(), g.layers.end(),
                               [&](const Layer& l) { return l.name == name; });
  if (it == g.layers.end()) throw std::runtime_error("no layer " + name);
  return *it;
}

TEST(ZooMoe, ActiveParametersMatchPublished) {
  // Mistral AI: Mixtral 8x7B "uses 12.9B parameters per token" ("Mixtral of experts",
  // 2023-12-11); 8x22B "39B active parameters out of 141B" (2024-04-17).
  const double a7 = decoder_active_parameters(decoder_config("mixtral-8x7b"));
  const double a22 = decoder_active_parameters(decoder_config("mixtral-8x22b"));
  EXPECT_NEAR(a7, 12.9e9, 0.01 * 12.9e9);
  EXPECT_NEAR(a22, 39e9, 0.01 * 39e9);
  // Hand derivation for 8x7B: per layer attention 4096*(4096 + 2*1024) + 4096^2, two experts
  // 2*3*4096*14336, router 4096*8, two RMSNorms; embeddings and head 2*32000*4096, final norm.
  const double h = 4096, layer = h * (h + 2048) + h * h + 2 * 3 * h * 14336 + 8 * h + 2 * h;
  EXPECT_DOUBLE_EQ(a7, 32 * layer + 2 * 32000 * h + h);
  // A dense model's active parameters are all of them.
  const DecoderConfig llama = decoder_config("llama2-7b");
  EXPECT_DOUBLE_EQ(decoder_active_parameters(llama), decoder_model("llama2-7b", 1).parameters());
}

TEST(ZooMoe, ExpertLayersHoldAllExpertsAndDoTopKWork) {
  const double s = 256, h = 4096, f = 14336, e = 8, k = 2;
  const ModelGraph g = decoder_model("mixtral-8x7b", int(s));
  EXPECT_TRUE(g.has_experts());
  EXPECT_FALSE(decoder_model("llama2-7b", 16).has_experts());
  const std::string p = "decoder.layer.3.ffn.";
  const Layer& router = find_layer(g, p + "router");
  EXPECT_DOUBLE_EQ(router.parameters, h * e);
  EXPECT_EQ(router.experts, 0);
  EXPECT_EQ(router.tensor, TensorSplit::replicated);
  EXPECT_TRUE(router.all_to_all_after);  // dispatch
  const Layer& gate_up = find_layer(g, p + "experts.gate_up");
  EXPECT_EQ(gate_up.experts, 8);
  EXPECT_DOUBLE_EQ(gate_up.parameters, e * h * 2 * f);
  EXPECT_DOUBLE_EQ(gate_up.forward_flops, k * s * 2 * h * 2 * f);
  EXPECT_DOUBLE_EQ(gate_up.input_elements, k * s * h);  // each token copied to its k experts
  EXPECT_FALSE(gate_up.all_to_all_after);
  EXPECT_EQ(find_layer(g, p + "experts.swiglu").experts, 8);
  const Layer& down = find_layer(g, p + "experts.down");
  EXPECT_EQ(down.experts, 8);
  EXPECT_DOUBLE_EQ(down.parameters, e * f * h);
  EXPECT_DOUBLE_EQ(down.forward_flops, k * s * 2 * f * h);
  EXPECT_TRUE(down.all_to_all_after);  // combine
  EXPECT_TRUE(down.tp_all_reduce);
  EXPECT_DOUBLE_EQ(find_layer(g, p + "experts.combine").activation_elements, s * h);
  // Two all-to-alls per layer, none outside the layers.
  const auto a2a = std::count_if(g.layers.begin(), g.layers.end(),
                                 [](const Layer& l) { return l.all_to_all_after; });
  EXPECT_EQ(a2a, 2 * 32);
}

TEST(ZooMoe, ExpertWorkIsTopKTimesTheDenseFeedForward) {
  DecoderConfig moe = decoder_config("mixtral-8x7b");
  DecoderConfig dense = moe;
  dense.experts = 0;
  dense.top_k = 0;
  const ModelGraph a = decoder_transformer(moe, 128), b = decoder_transformer(dense, 128);
  const std::string p = "decoder.layer.0.ffn.";
  for (const char* layer : {"gate_up", "swiglu", "down"}) {
    EXPECT_DOUBLE_EQ(find_layer(a, p + "experts." + layer).forward_flops,
                     2 * find_layer(b, p + layer).forward_flops)
        << layer;
    EXPECT_DOUBLE_EQ(find_layer(a, p + "experts." + layer).parameters,
                     8 * find_layer(b, p + layer).parameters)
        << layer;
  }
}

// Training FLOPs per token against Kaplan's 6N + 6*L*s*h with N the *active* matrix weights:
// per layer attention h(h + 2kv) + h^2, top_k experts' 3hf, the router hE, plus the LM head Vh.
// The expert combine, norms, softmax and activations add a little above it.
TEST(ZooMoe, TrainingFlopsPerTokenFollowActiveParameters) {
  for (const char* name : {"mixtral-8x7b", "mixtral-8x22b"}) {
    const DecoderConfig c = decoder_config(name);
    const double h = c.hidden, f = c.ffn, v = c.vocab, kv = decoder_kv_features(c), s = 4096;
    const double n =
        c.layers * (h * (h + 2 * kv) + h * h + c.top_k * 3 * h * f + h * c.experts) + v * h;
    const double expected = 6 * n + 6 * c.layers * s * h;
    const double per_token = decoder_model(name, int(s)).training_flops_per_sample() / s;
    EXPECT_NEAR(per_token, expected, 0.01 * expected) << name;
    EXPECT_GT(per_token, expected) << name;
  }
}

TEST(ZooMoe, RejectsBadRouting) {
  DecoderConfig c = decoder_config("mixtral-8x7b");
  EXPECT_EQ(c.experts, 8);
  EXPECT_EQ(c.top_k, 2);
  EXPECT_EQ(c.max_positions, 32768);
  EXPECT_EQ(decoder_config("mixtral-8x22b").max_positions, 65536);
  c.top_k = 9;  // more than the experts
  EXPECT_THROW(decoder_transformer(c, 16), std::invalid_argument);
  c.top_k = 0;  // experts without routing
  EXPECT_THROW(decoder_transformer(c, 16), std::invalid_argument);
  c.experts = 0;
  c.top_k = 2;  // routing without experts
  EXPECT_THROW(decoder_transformer(c, 16), std::invalid_argument);
  c.top_k = 0;
  EXPECT_NO_THROW(decoder_transformer(c, 16));
}

}  // namespace
}  // namespace dlsim::models
