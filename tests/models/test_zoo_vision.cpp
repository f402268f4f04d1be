// Tests of the image models added beside ResNet-50: VGG-16, Inception-v3 and the Vision
// Transformers. Parameter counts against torchvision's exact counts and the papers' rounded
// figures; multiply-accumulates against torchvision's model tables; shapes at known points.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

const Layer& find_layer(const ModelGraph& g, const std::string& name) {
  const auto it = std::find_if(g.layers.begin(), g.layers.end(),
                               [&](const Layer& l) { return l.name == name; });
  if (it == g.layers.end()) throw std::runtime_error("no layer " + name);
  return *it;
}

// Multiply-accumulates of the conv, linear and matmul layers (FLOPs / 2, bias adds included).
double macs(const ModelGraph& g) {
  double total = 0;
  for (const Layer& l : g.layers) {
    if (l.kind == LayerKind::conv || l.kind == LayerKind::linear || l.kind == LayerKind::matmul) {
      total += l.forward_flops / 2;
    }
  }
  return total;
}

double parameters_where(const ModelGraph& g, const std::string& prefix) {
  double total = 0;
  for (const Layer& l : g.layers) {
    if (l.name.starts_with(prefix)) total += l.parameters;
  }
  return total;
}

struct Published {
  const char* name;
  double exact;      // torchvision's count (sum of p.numel() over model.parameters())
  double published;  // the paper's rounded figure
  double gmacs;      // torchvision model table, "GFLOPS" column (which counts multiply-adds)
};

// Papers: VGG-16 "138" M (Simonyan & Zisserman 2015, Table 2, configuration D); ViT-Base "86M",
// ViT-Large "307M" (Dosovitskiy et al. 2021, Table 1). Inception-v3: Szegedy et al. give no
// count; torchvision's with the auxiliary classifier is 27,161,264 (23,834,568 without it).
// torchvision figures: docs "Classification" table (torchvision 0.15+ model builders).
const Published kPublished[] = {
    {"resnet50", 25'557'032, 25.6e6, 4.09},
    {"vgg16", 138'357'544, 138e6, 15.47},
    {"inception-v3", 27'161'264, 27.2e6, 5.71},
    {"vit-b16", 86'567'656, 86e6, 17.56},
    {"vit-l16", 304'326'632, 307e6, 61.55},
};

TEST(ZooVision, ParameterCountsMatchTorchvisionAndPapers) {
  for (const Published& p : kPublished) {
    const ModelGraph g = zoo_model(p.name);
    EXPECT_EQ(g.name, p.name);
    EXPECT_DOUBLE_EQ(g.parameters(), p.exact) << p.name;
    EXPECT_NEAR(g.parameters(), p.published, 0.01 * p.published) << p.name;
  }
}

TEST(ZooVision, MultiplyAddsMatchTorchvision) {
  // torchvision rounds to 0.01 G; our bias adds and the Inception auxiliary head (6 M MACs,
  // which torchvision's eval-mode count skips) are within the 1% tolerance.
  for (const Published& p : kPublished) {
    const ModelGraph g = zoo_model(p.name);
    EXPECT_NEAR(macs(g), p.gmacs * 1e9, 0.01 * p.gmacs * 1e9) << p.name;
    // Norms, activations and pools cost something, but little.
    EXPECT_GT(g.forward_flops_per_sample(), 2 * macs(g)) << p.name;
    EXPECT_LT(g.forward_flops_per_sample(), 2.05 * 2 * macs(g)) << p.name;
  }
}

TEST(ZooVision, EveryLayerIsWellFormed) {
  for (const Published& p : kPublished) {
    const ModelGraph g = zoo_model(p.name);
    EXPECT_EQ(g.sample_unit, "image");
    EXPECT_EQ(g.tokens_per_sample, 1);
    for (const Layer& l : g.layers) {
      EXPECT_GT(l.input_elements, 0) << p.name << " " << l.name;
      EXPECT_GT(l.activation_elements, 0) << p.name << " " << l.name;
      EXPECT_GT(l.forward_flops, 0) << p.name << " " << l.name;
      EXPECT_GE(l.parameters, 0) << p.name << " " << l.name;
    }
  }
}

TEST(ZooVision, Vgg16Shapes) {
  const ModelGraph g = vgg16();
  const auto convs = std::count_if(g.layers.begin(), g.layers.end(),
                                   [](const Layer& l) { return l.kind == LayerKind::conv; });
  EXPECT_EQ(convs, 13);
  // conv1_1: 3 -> 64 at 224x224, 3x3 with bias.
  const Layer& c11 = find_layer(g, "conv1_1");
  EXPECT_DOUBLE_EQ(c11.parameters, 27.0 * 64 + 64);
  EXPECT_DOUBLE_EQ(c11.activation_elements, 64.0 * 224 * 224);
  // After five 2x2 pools: 512 x 7 x 7 = 25,088 features into fc6.
  EXPECT_DOUBLE_EQ(find_layer(g, "fc6").input_elements, 25'088);
  EXPECT_DOUBLE_EQ(find_layer(g, "fc6").parameters, 25'088.0 * 4096 + 4096);
  EXPECT_DOUBLE_EQ(find_layer(g, "fc8").activation_elements, 1000);
  // The convolutions hold 14,714,688 parameters, the classifier the other 123,642,856.
  EXPECT_DOUBLE_EQ(parameters_where(g, "conv"), 14'714'688);
}

TEST(ZooVision, InceptionV3Shapes) {
  const ModelGraph g = inception_v3();
  EXPECT_DOUBLE_EQ(find_layer(g, "Conv2d_1a_3x3.conv").activation_elements, 32.0 * 149 * 149);
  // Module outputs: 35x35x288 into Mixed_6a, 17x17x768 into Mixed_7a, 8x8x2048 into the pool.
  EXPECT_DOUBLE_EQ(find_layer(g, "Mixed_6a.branch3x3.conv").input_elements, 288.0 * 35 * 35);
  EXPECT_DOUBLE_EQ(find_layer(g, "Mixed_7a.branch3x3_1.conv").input_elements, 768.0 * 17 * 17);
  EXPECT_DOUBLE_EQ(find_layer(g, "avgpool").input_elements, 2048.0 * 8 * 8);
  EXPECT_DOUBLE_EQ(find_layer(g, "fc").parameters, 2048.0 * 1000 + 1000);
  // Factorized 1x7 conv of Mixed_6b: 128 -> 128 channels, 7 taps, keeps 17x17.
  const Layer& f17 = find_layer(g, "Mixed_6b.branch7x7_2.conv");
  EXPECT_DOUBLE_EQ(f17.parameters, 7.0 * 128 * 128);
  EXPECT_DOUBLE_EQ(f17.activation_elements, 128.0 * 17 * 17);
  // The auxiliary classifier: 3,326,696 parameters; without it, torchvision's 23,834,568.
  EXPECT_DOUBLE_EQ(parameters_where(g, "AuxLogits"), 3'326'696);
  EXPECT_DOUBLE_EQ(g.parameters() - parameters_where(g, "AuxLogits"), 23'834'568);
  // Every conv is followed by its BN and ReLU (BasicConv2d): 94 convs + aux 2 = 96.
  const auto convs = std::count_if(g.layers.begin(), g.layers.end(),
                                   [](const Layer& l) { return l.kind == LayerKind::conv; });
  const auto norms = std::count_if(g.layers.begin(), g.layers.end(),
                                   [](const Layer& l) { return l.kind == LayerKind::norm; });
  EXPECT_EQ(convs, 96);
  EXPECT_EQ(norms, convs);
}

// ViT encoder layer with hidden h, MLP 4h: QKV 3(h^2+h), output h^2+h, MLP 4h^2+4h + 4h^2+h,
// two LayerNorms 4h = 12h^2 + 13h (as BERT's).
TEST(ZooVision, VitParametersByHand) {
  for (const auto& [g, h, layers] :
       {std::tuple{vit_b16(), 768.0, 12.0}, std::tuple{vit_l16(), 1024.0, 24.0}}) {
    const double patch = 3 * 16 * 16 * h + h, tokens = (1 + 197) * h, head = h * 1000 + 1000;
    EXPECT_DOUBLE_EQ(g.parameters(),
                     patch + tokens + layers * (12 * h * h + 13 * h) + 2 * h + head)
        << g.name;
    EXPECT_EQ(g.blocks(), int(layers)) << g.name;
  }
}

TEST(ZooVision, VitShapes) {
  const ModelGraph g = vit_b16();
  const Layer& patch = find_layer(g, "conv_proj");
  EXPECT_EQ(patch.kind, LayerKind::conv);
  EXPECT_DOUBLE_EQ(patch.input_elements, 3.0 * 224 * 224);
  EXPECT_DOUBLE_EQ(patch.activation_elements, 196.0 * 768);
  // 197 tokens (196 patches + class token), full (non-causal) attention over 12 heads.
  const Layer& scores = find_layer(g, "encoder.layers.0.attention.scores");
  EXPECT_DOUBLE_EQ(scores.forward_flops, 2.0 * 197 * 197 * 768);
  EXPECT_DOUBLE_EQ(scores.activation_elements, 12.0 * 197 * 197);
  // The head reads the class token only.
  EXPECT_DOUBLE_EQ(find_layer(g, "heads.head").input_elements, 768);
  EXPECT_DOUBLE_EQ(find_layer(g, "encoder.ln").input_elements, 197.0 * 768);
}

}  // namespace
}  // namespace dlsim::models
