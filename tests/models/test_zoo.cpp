// Tests of the model zoo: parameter and FLOP counts derived from the architectures.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

double sum_where(const ModelGraph& g, bool (*keep)(const Layer&), double Layer::*field) {
  double total = 0;
  for (const Layer& l : g.layers) {
    if (keep(l)) total += l.*field;
  }
  return total;
}

bool is_conv_or_linear(const Layer& l) {
  return l.kind == LayerKind::conv || l.kind == LayerKind::linear;
}
bool is_mlm_head(const Layer& l) { return l.name.starts_with("mlm."); }

void expect_layers_well_formed(const ModelGraph& g) {
  ASSERT_FALSE(g.layers.empty());
  for (const Layer& l : g.layers) {
    EXPECT_GT(l.input_elements, 0) << g.name << " " << l.name;
    EXPECT_GT(l.activation_elements, 0) << g.name << " " << l.name;
    EXPECT_GE(l.parameters, 0) << g.name << " " << l.name;
    EXPECT_GT(l.forward_flops, 0) << g.name << " " << l.name;
  }
}

TEST(ZooResNet50, ParameterCountMatchesTorchvision) {
  // torchvision resnet50: 25,557,032 trainable parameters (BN running stats are buffers).
  EXPECT_DOUBLE_EQ(resnet50().parameters(), 25'557'032);
}

TEST(ZooResNet50, ForwardFlops) {
  const ModelGraph g = resnet50();
  // v1.5: about 4.1 G multiply-adds in conv + fc = 8.2 GFLOP; BN, ReLU, adds, pools add ~1%.
  EXPECT_NEAR(g.forward_flops_per_sample(), 8.2e9, 0.03 * 8.2e9);
  const double conv_fc = sum_where(g, is_conv_or_linear, &Layer::forward_flops);
  EXPECT_NEAR(conv_fc / 2, 4.1e9, 0.03 * 4.1e9);
  EXPECT_GT(g.forward_flops_per_sample(), conv_fc);  // the elementwise layers cost something
  // Backward: twice the forward for convs and the fc (input and weight gradients), once for the
  // others (BN, ReLU, adds, pools), except conv1, whose input (the image) needs no gradient.
  const double conv1 = g.layers.front().forward_flops;
  const double rest = g.forward_flops_per_sample() - conv_fc;
  EXPECT_DOUBLE_EQ(g.backward_flops_per_sample(), 2 * conv_fc + rest - conv1);
  EXPECT_DOUBLE_EQ(g.training_flops_per_sample(), 3 * conv_fc + 2 * rest - conv1);
  EXPECT_LT(g.training_flops_per_sample(), 3 * g.forward_flops_per_sample());
}

TEST(ZooResNet50, ShapesAndUnits) {
  const ModelGraph g = resnet50();
  EXPECT_EQ(g.sample_unit, "image");
  EXPECT_EQ(g.tokens_per_sample, 1);
  expect_layers_well_formed(g);
  EXPECT_EQ(g.layers.front().name, "conv1");
  EXPECT_DOUBLE_EQ(g.layers.front().input_elements, 3.0 * 224 * 224);
  EXPECT_DOUBLE_EQ(g.layers.front().activation_elements, 64.0 * 112 * 112);
  const Layer& fc = g.layers.back();
  EXPECT_EQ(fc.name, "fc");
  EXPECT_DOUBLE_EQ(fc.input_elements, 2048);
  EXPECT_DOUBLE_EQ(fc.parameters, 2048.0 * 1000 + 1000);
  // 4 downsampling projections (one per stage), 53 convs in all (1 + 16*3 + 4).
  const auto convs = std::count_if(g.layers.begin(), g.layers.end(),
                                   [](const Layer& l) { return l.kind == LayerKind::conv; });
  EXPECT_EQ(convs, 53);
  // v1.5: the 3x3 conv of layer2.0 carries the stride (56x56 in, 28x28 out).
  const auto it = std::find_if(g.layers.begin(), g.layers.end(),
                               [](const Layer& l) { return l.name == "layer2.0.conv2"; });
  ASSERT_NE(it, g.layers.end());
  EXPECT_DOUBLE_EQ(it->input_elements, 128.0 * 56 * 56);
  EXPECT_DOUBLE_EQ(it->activation_elements, 128.0 * 28 * 28);
}

// ResNet-101 = ResNet-50 + 17 more identity bottlenecks in stage 3 (23 instead of 6 blocks; He et
// al. 2016, Table 1). Each reads 1024 channels at 14x14 (196 positions), width 256:
//   weights 1x1 1024*256 + 3x3 9*256*256 + 1x1 256*1024 = 262,144 + 589,824 + 262,144 = 1,114,112
//   BN (2 per channel) 2*(256 + 256 + 1024) = 3,072                -> 1,117,184 parameters
//   multiply-adds 1,114,112 * 196 = 218,365,952
// x 17: 18,992,128 parameters and 3.712 G multiply-adds. ResNet-50 has 25,557,032 parameters and
// ~4.09 G multiply-adds, so ResNet-101: 44,549,160 parameters (torchvision's count; "44.5 M") and
// ~7.80 G multiply-adds (torchvision's table: 7.80 "GFLOPS", which counts multiply-adds), i.e.
// ~15.6 GFLOP forward per image with a multiply-add as 2 FLOPs (the convention of the ResNet-50
// test above: 4.1 G multiply-adds = 8.2 GFLOP).
TEST(ZooResNet101, ParameterCountMatchesTorchvision) {
  EXPECT_DOUBLE_EQ(resnet101().parameters(), 44'549'160);
  EXPECT_DOUBLE_EQ(resnet101().parameters() - resnet50().parameters(), 17 * 1'117'184.0);
  EXPECT_DOUBLE_EQ(zoo_model("resnet101").parameters(), resnet101().parameters());
}

TEST(ZooResNet101, ForwardFlops) {
  const ModelGraph g = resnet101();
  EXPECT_EQ(g.name, "resnet101");
  EXPECT_NEAR(g.forward_flops_per_sample(), 15.6e9, 0.03 * 15.6e9);
  const double conv_fc = sum_where(g, is_conv_or_linear, &Layer::forward_flops);
  EXPECT_NEAR(conv_fc / 2, 7.80e9, 0.01 * 7.80e9);
  // The extra blocks' multiply-adds exactly, whatever the elementwise layers cost.
  const double conv_fc50 = sum_where(resnet50(), is_conv_or_linear, &Layer::forward_flops);
  EXPECT_DOUBLE_EQ((conv_fc - conv_fc50) / 2, 17 * 218'365'952.0);
  // 1 + 33 * 3 + 4 projections = 104 convs; the stem and head as in ResNet-50.
  const auto convs = std::count_if(g.layers.begin(), g.layers.end(),
                                   [](const Layer& l) { return l.kind == LayerKind::conv; });
  EXPECT_EQ(convs, 104);
  expect_layers_well_formed(g);
  EXPECT_EQ(g.layers.back().name, "fc");
  EXPECT_DOUBLE_EQ(g.layers.back().input_elements, 2048);
}

// Hand derivation, per-layer parameters of a BERT encoder layer with hidden h, FFN 4h:
// QKV 3(h^2+h) + output h^2+h + FFN (4h^2+4h) + (4h^2+h) + two LayerNorms 4h = 12h^2 + 13h.
double encoder_layer_params(double h) { return 12 * h * h + 13 * h; }

TEST(ZooBert, BaseParameterCount) {
  // embeddings (30522+512+2)*768 + LN 1,536 = 23,837,184; 12 layers * 7,087,872 = 85,054,464;
  // pooler 590,592 -> 109,482,240 (Hugging Face BertModel). MLM head: dense 590,592 + LN 1,536
  // + vocab bias 30,522 (decoder weight tied) = 622,650 -> 110,104,890.
  const ModelGraph g = bert_base();
  EXPECT_DOUBLE_EQ(encoder_layer_params(768), 7'087'872);
  EXPECT_DOUBLE_EQ(g.parameters(), 110'104'890);
  EXPECT_DOUBLE_EQ(g.parameters() - sum_where(g, is_mlm_head, &Layer::parameters), 109'482'240);
  EXPECT_NEAR(g.parameters(), 110e6, 0.01 * 110e6);
}

TEST(ZooBert, LargeParameterCount) {
  // Devlin et al. 2019 publish "340M" for BERT-large; we test the exact count of the Hugging
  // Face layout (BertForMaskedLM plus the pooler), 336.2 M, and the range it must lie in.
  // Embeddings 31,036*1024 + 2,048 = 31,782,912; 24 layers * 12,596,224 = 302,309,376;
  // pooler 1,049,600 -> 335,141,888. MLM head 1,049,600 + 2,048 + 30,522 = 1,082,170
  // -> 336,224,058. The paper's "340M" is rounded: the exact count is 1.1% below it.
  const ModelGraph g = bert_large();
  EXPECT_DOUBLE_EQ(encoder_layer_params(1024), 12'596'224);
  EXPECT_DOUBLE_EQ(g.parameters(), 336'224'058);
  EXPECT_DOUBLE_EQ(g.parameters() - sum_where(g, is_mlm_head, &Layer::parameters), 335'141'888);
  EXPECT_GE(g.parameters(), 335e6);
  EXPECT_LE(g.parameters(), 340e6);
}

// Closed form of the forward FLOPs of one sequence of s tokens:
//   2 s (L (12h^2 + 13h) + h^2 + h)   every weight of the encoder layers and the MLM dense,
//                                      used once per token (bias adds counted as 2 FLOPs here)
// + 2 s h V                           the tied decoder to the vocabulary
// + 4 L s^2 h                         attention scores QK^T and scores*V
// + 2 h^2                             the pooler, on [CLS] only.
// The builder also counts LayerNorm, softmax, GELU and residual adds, which the closed form
// leaves out: they are under 1% of the total for these shapes, hence the tolerance.
double bert_closed_form(double layers, double h, double s) {
  const double vocab = 30522;
  return 2 * s * (layers * encoder_layer_params(h) + h * h + h) + 2 * s * h * vocab +
         4 * layers * s * s * h + 2 * h * h;
}

TEST(ZooBert, ForwardFlopsMatchClosedForm) {
  for (int s : {128, 512}) {
    const double base = bert_base(s).forward_flops_per_sample();
    const double large = bert_large(s).forward_flops_per_sample();
    EXPECT_NEAR(base, bert_closed_form(12, 768, s), 0.01 * base) << "s=" << s;
    EXPECT_NEAR(large, bert_closed_form(24, 1024, s), 0.01 * large) << "s=" << s;
  }
}

TEST(ZooBert, AttentionMakesCostSuperlinearInSequenceLength) {
  const double f128 = bert_base(128).forward_flops_per_sample();
  const double f256 = bert_base(256).forward_flops_per_sample();
  EXPECT_GT(f256, 2 * f128);
  EXPECT_DOUBLE_EQ(bert_base(128).parameters(), bert_base(512).parameters());
}

TEST(ZooBert, ShapesAndUnits) {
  const ModelGraph g = bert_large(384);
  EXPECT_EQ(g.sample_unit, "sequence");
  EXPECT_EQ(g.tokens_per_sample, 384);
  expect_layers_well_formed(g);
  const auto it = std::find_if(g.layers.begin(), g.layers.end(), [](const Layer& l) {
    return l.name == "encoder.layer.0.attention.scores";
  });
  ASSERT_NE(it, g.layers.end());
  EXPECT_EQ(it->kind, LayerKind::matmul);
  EXPECT_DOUBLE_EQ(it->forward_flops, 2.0 * 384 * 384 * 1024);
  EXPECT_DOUBLE_EQ(it->activation_elements, 16.0 * 384 * 384);  // heads * s * s scores
}

TEST(ZooBert, RejectsSequencesOutsideThePositionTable) {
  EXPECT_THROW(bert_base(0), std::invalid_argument);
  EXPECT_THROW(bert_large(513), std::invalid_argument);
  EXPECT_NO_THROW(bert_base(512));
}

TEST(Zoo, NamesAndLookup) {
  const auto names = zoo_model_names();
  // bert-base, bert-large; six image models; the decoders.
  EXPECT_EQ(names.size(), 8u + decoder_model_names().size());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const std::string& name : names) EXPECT_EQ(zoo_model(name).name, name);
  EXPECT_DOUBLE_EQ(zoo_model("bert-base", 256).forward_flops_per_sample(),
                   bert_base(256).forward_flops_per_sample());
  EXPECT_DOUBLE_EQ(zoo_model("resnet50", 512).parameters(), resnet50().parameters());
  EXPECT_EQ(zoo_model("gpt3-175b").parameters(), decoder_model("gpt3-175b").parameters());
  EXPECT_EQ(zoo_model("bert-large").tokens_per_sample, 128);  // 0 = the usual length
  EXPECT_THROW(zoo_model("gpt3-176b"), std::out_of_range);
  EXPECT_THROW(zoo_model("ResNet50"), std::out_of_range);  // names are exact
  for (const char* image :
       {"resnet50", "resnet101", "vgg16", "inception-v3", "vit-b16", "vit-l16"}) {
    EXPECT_FALSE(zoo_model_has_sequence(image)) << image;
    EXPECT_EQ(zoo_model(image, 4096).sample_unit, "image") << image;
    EXPECT_NE(std::find(names.begin(), names.end(), image), names.end()) << image;
  }
  for (const char* text : {"bert-base", "gpt3-175b", "mixtral-8x7b"}) {
    EXPECT_TRUE(zoo_model_has_sequence(text)) << text;
  }
  EXPECT_EQ(zoo_model("mixtral-8x7b", 256).tokens_per_sample, 256);
}

}  // namespace
}  // namespace dlsim::models

namespace dlsim::models {
namespace {

// The masked-LM head on the gathered masked positions only (max_predictions_per_seq): the
// decoder to the 30,522-word vocabulary and the transform run on 20 positions, not 128.
TEST(ZooBert, MaskedLmHeadRunsOnTheMaskedPositionsWhenGathered) {
  const ModelGraph all = bert_large(128);
  const ModelGraph masked = bert_large(128, 20);
  EXPECT_EQ(all.parameters(), masked.parameters());
  const double h = 1024, v = 30522;
  const double decoder_saved = (128 - 20) * 2 * h * v;  // multiply-adds of the vocabulary GEMM
  const double saved = all.forward_flops_per_sample() - masked.forward_flops_per_sample();
  EXPECT_GT(saved, decoder_saved);                        // and the transform's dense, GELU, norm
  EXPECT_LT(saved, 1.1 * decoder_saved);
  EXPECT_EQ(bert_large(128, 128).forward_flops_per_sample(), all.forward_flops_per_sample());
  EXPECT_THROW(bert_large(128, 129), std::invalid_argument);
  EXPECT_THROW(bert_base(128, -1), std::invalid_argument);
}

}  // namespace
}  // namespace dlsim::models

namespace dlsim::models {
namespace {

// GPT-J / PaLM parallel blocks: one norm per block instead of two, the same parameters otherwise,
// and one tensor-parallel all-reduce per block instead of two.
TEST(ZooDecoder, ParallelBlocksShareTheNormAndTheAllReduce) {
  DecoderConfig c = decoder_config("gpt3-1.3b");
  const ModelGraph sequential = decoder_transformer(c, 2048);
  c.parallel_block = true;
  const ModelGraph parallel = decoder_transformer(c, 2048);
  const auto reduces = [](const ModelGraph& g) {
    return std::count_if(g.layers.begin(), g.layers.end(), [](const Layer& l) { return l.tp_all_reduce && l.block >= 0; });
  };
  EXPECT_EQ(reduces(sequential), 2 * c.layers);
  EXPECT_EQ(reduces(parallel), c.layers);
  const double norm = 2.0 * c.hidden;  // LayerNorm scale and shift
  EXPECT_NEAR(sequential.parameters() - parallel.parameters(), c.layers * norm, 1e-6 * sequential.parameters());
  EXPECT_LT(parallel.forward_flops_per_sample(), sequential.forward_flops_per_sample());
  EXPECT_GT(parallel.forward_flops_per_sample(), 0.98 * sequential.forward_flops_per_sample());
  EXPECT_EQ(parallel.blocks(), c.layers);
}

}  // namespace
}  // namespace dlsim::models
