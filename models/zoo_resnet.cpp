// Convolutional networks built layer by layer, per-image costs, 1000 classes:
// - ResNet-50 and ResNet-101 v1.5 (He et al. 2016, "Deep Residual Learning", Table 1: bottleneck
//   stages of [3, 4, 6, 3] and [3, 4, 23, 3] blocks; v1.5 as in torchvision and NVIDIA
//   DeepLearningExamples: the stride-2 of each downsampling bottleneck sits on the 3x3 conv, not
//   the first 1x1), 224x224x3 input;
// - VGG-16 (Simonyan & Zisserman 2015, configuration D, no BN), 224x224x3 input;
// - Inception-v3 (Szegedy et al. 2016, torchvision layout; see its section below), 299x299x3.
// Conventions: a multiply-add is 2 FLOPs, a bias add 1 FLOP per output element; convs followed
// by BN carry no bias; BN has 2*C trainable parameters (running statistics are buffers, not
// parameters). The first conv needs no gradient for its input (the image), so its backward is
// the weight gradient only (as many multiply-adds as its forward). Branch concatenations
// (Inception) are not layers: the branches write into the concatenated output. Dropout is not
// modelled. CNNs have no blocks and no tensor-parallel layout (every layer replicated).
// They share the conv, BN, ReLU and pooling helpers, hence one file.
#include <initializer_list>
#include <string>
#include <vector>

#include "models/zoo.hpp"

namespace dlsim::models {
namespace {

// Approximate elementwise costs in FLOPs per element. Training-mode BN: per-channel statistics
// (sum and sum of squares, ~3) plus a scale-and-shift folded into one multiply-add (2).
constexpr double kBatchNormFlops = 5;
constexpr double kReluFlops = 1;
constexpr double kAddFlops = 1;

struct Shape {
  int c = 0, h = 0, w = 0;
  double elements() const { return double(c) * h * w; }
};

using Layers = std::vector<Layer>;

void push(Layers& out, std::string name, LayerKind kind, double params, double flops,
          double input_elements, double output_elements) {
  out.push_back(Layer{std::move(name), kind, params, flops, output_elements, input_elements});
}

int out_size(int size, int kernel, int stride, int pad) {
  return (size + 2 * pad - kernel) / stride + 1;
}

// A kh x kw convolution with stride and padding per axis.
struct ConvSpec {
  int cout = 0, kh = 1, kw = 1, stride = 1, ph = 0, pw = 0;
  bool bias = false;
};

Shape conv(Layers& out, const std::string& name, Shape in, const ConvSpec& k) {
  Shape o{k.cout, out_size(in.h, k.kh, k.stride, k.ph), out_size(in.w, k.kw, k.stride, k.pw)};
  const double weights = double(k.kh) * k.kw * in.c * k.cout, bias = k.bias ? k.cout : 0;
  const double positions = double(o.h) * o.w;
  push(out, name, LayerKind::conv, weights + bias, positions * (2 * weights + bias),
       in.elements(), o.elements());
  out.back().conv = {double(in.c), double(in.h), double(in.w), double(k.cout), double(k.kh), double(k.kw),
                     double(k.stride), double(k.ph), double(k.pw)};
  return o;
}

// k x k convolution, "same" padding (k / 2), no bias.
Shape conv(Layers& out, const std::string& name, Shape in, int cout, int k, int stride) {
  return conv(out, name, in, ConvSpec{cout, k, k, stride, k / 2, k / 2});
}

// The input layer: the image needs no gradient, only the weights do.
void weight_gradient_only(Layer& first_conv) {
  first_conv.backward_flops = first_conv.forward_flops;
  first_conv.matmul.input_gradient = false;
}

Shape batch_norm(Layers& out, const std::string& name, Shape x) {
  push(out, name, LayerKind::norm, 2.0 * x.c, kBatchNormFlops * x.elements(), x.elements(),
       x.elements());
  out.back().memory_kernel = MemoryKernel::batch_norm;
  return x;
}

Shape relu(Layers& out, const std::string& name, Shape x) {
  push(out, name, LayerKind::elementwise, 0, kReluFlops * x.elements(), x.elements(), x.elements());
  out.back().memory_kernel = MemoryKernel::relu;
  return x;
}

// Residual add: reads both branches, writes one.
Shape add(Layers& out, const std::string& name, Shape x) {
  push(out, name, LayerKind::elementwise, 0, kAddFlops * x.elements(), 2 * x.elements(),
       x.elements());
  return x;
}

// k x k pooling (max or average): one operation per window element.
Shape pool(Layers& out, const std::string& name, Shape in, int k, int stride, int pad) {
  Shape o{in.c, out_size(in.h, k, stride, pad), out_size(in.w, k, stride, pad)};
  push(out, name, LayerKind::pool, 0, double(k) * k * o.elements(), in.elements(), o.elements());
  return o;
}

// 3x3 stride-2 max pooling, padding 1.
Shape max_pool(Layers& out, const std::string& name, Shape in) { return pool(out, name, in, 3, 2, 1); }

// Global average pooling: one add per input element, one divide per channel.
Shape global_avg_pool(Layers& out, const std::string& name, Shape in) {
  Shape o{in.c, 1, 1};
  push(out, name, LayerKind::pool, 0, in.elements() + in.c, in.elements(), o.elements());
  return o;
}

Shape fully_connected(Layers& out, const std::string& name, Shape in, int features) {
  const double weights = in.elements() * features;
  push(out, name, LayerKind::linear, weights + features, 2 * weights + features, in.elements(),
       features);
  out.back().matmul = {1, double(features), in.elements()};
  return Shape{features, 1, 1};
}

// Bottleneck: 1x1 (width) -> 3x3 (width, stride) -> 1x1 (4*width), plus the shortcut
// (a strided 1x1 projection + BN where the shape changes, identity otherwise).
Shape bottleneck(Layers& out, const std::string& p, Shape in, int width, int stride) {
  Shape x = relu(out, p + ".relu1",
                 batch_norm(out, p + ".bn1", conv(out, p + ".conv1", in, width, 1, 1)));
  x = relu(out, p + ".relu2",
           batch_norm(out, p + ".bn2", conv(out, p + ".conv2", x, width, 3, stride)));
  x = batch_norm(out, p + ".bn3", conv(out, p + ".conv3", x, 4 * width, 1, 1));
  if (stride != 1 || in.c != 4 * width) {
    batch_norm(out, p + ".downsample.1", conv(out, p + ".downsample.0", in, 4 * width, 1, stride));
  }
  return relu(out, p + ".relu3", add(out, p + ".add", x));
}

// The bottleneck ResNets of He et al. 2016, Table 1: a 7x7 stride-2 stem, 3x3 max pool, four
// bottleneck stages (widths 64, 128, 256, 512; the first block of stages 2-4 downsamples), global
// average pool and the 1000-class fc. Only the block counts differ between depths.
ModelGraph bottleneck_resnet(const std::string& name, const int (&blocks)[4]) {
  ModelGraph g;
  g.name = name;
  g.sample_unit = "image";
  g.tokens_per_sample = 1;
  Layers& L = g.layers;

  Shape x{3, 224, 224};
  x = conv(L, "conv1", x, 64, 7, 2);
  weight_gradient_only(L.back());
  x = relu(L, "relu", batch_norm(L, "bn1", x));
  x = max_pool(L, "maxpool", x);
  const int widths[] = {64, 128, 256, 512}, strides[] = {1, 2, 2, 2};
  for (int s = 0; s < 4; ++s) {
    for (int b = 0; b < blocks[s]; ++b) {
      const std::string prefix = "layer" + std::to_string(s + 1) + "." + std::to_string(b);
      x = bottleneck(L, prefix, x, widths[s], b == 0 ? strides[s] : 1);
    }
  }
  x = global_avg_pool(L, "avgpool", x);
  fully_connected(L, "fc", x, 1000);
  return g;
}

// VGG conv: 3x3, padding 1, with bias, then ReLU.
Shape vgg_conv(Layers& out, const std::string& name, Shape in, int cout) {
  return relu(out, name + ".relu", conv(out, name, in, ConvSpec{cout, 3, 3, 1, 1, 1, true}));
}

// ---- Inception-v3 (Szegedy et al. 2016, "Rethinking the Inception Architecture"), as
// torchvision.models.inception_v3 builds it: every conv is a BasicConv2d (conv without bias, BN,
// ReLU); modules A (35x35), B (grid reduction to 17x17), C (factorized 7x7), D (reduction to
// 8x8), E (expanded filter banks); the auxiliary classifier on the 17x17 grid.

Shape basic_conv(Layers& out, const std::string& name, Shape in, const ConvSpec& k) {
  return relu(out, name + ".relu", batch_norm(out, name + ".bn", conv(out, name + ".conv", in, k)));
}
ConvSpec k1(int cout) { return {cout, 1, 1, 1, 0, 0}; }
ConvSpec k3(int cout, int stride = 1, int pad = 0) { return {cout, 3, 3, stride, pad, pad}; }
ConvSpec k1x7(int cout) { return {cout, 1, 7, 1, 0, 3}; }
ConvSpec k7x1(int cout) { return {cout, 7, 1, 1, 3, 0}; }

// Branches read the module input `in` and are concatenated along channels.
Shape concat(std::initializer_list<Shape> branches) {
  Shape o{0, branches.begin()->h, branches.begin()->w};
  for (const Shape& b : branches) o.c += b.c;
  return o;
}

Shape inception_a(Layers& L, const std::string& p, Shape in, int pool_features) {
  const Shape b1 = basic_conv(L, p + ".branch1x1", in, k1(64));
  Shape b5 = basic_conv(L, p + ".branch5x5_1", in, k1(48));
  b5 = basic_conv(L, p + ".branch5x5_2", b5, ConvSpec{64, 5, 5, 1, 2, 2});
  Shape b3 = basic_conv(L, p + ".branch3x3dbl_1", in, k1(64));
  b3 = basic_conv(L, p + ".branch3x3dbl_2", b3, k3(96, 1, 1));
  b3 = basic_conv(L, p + ".branch3x3dbl_3", b3, k3(96, 1, 1));
  const Shape bp = basic_conv(L, p + ".branch_pool", pool(L, p + ".avg_pool", in, 3, 1, 1),
                              k1(pool_features));
  return concat({b1, b5, b3, bp});
}

Shape inception_b(Layers& L, const std::string& p, Shape in) {
  const Shape b3 = basic_conv(L, p + ".branch3x3", in, k3(384, 2));
  Shape bd = basic_conv(L, p + ".branch3x3dbl_1", in, k1(64));
  bd = basic_conv(L, p + ".branch3x3dbl_2", bd, k3(96, 1, 1));
  bd = basic_conv(L, p + ".branch3x3dbl_3", bd, k3(96, 2));
  return concat({b3, bd, pool(L, p + ".max_pool", in, 3, 2, 0)});
}

Shape inception_c(Layers& L, const std::string& p, Shape in, int c7) {
  const Shape b1 = basic_conv(L, p + ".branch1x1", in, k1(192));
  Shape b7 = basic_conv(L, p + ".branch7x7_1", in, k1(c7));
  b7 = basic_conv(L, p + ".branch7x7_2", b7, k1x7(c7));
  b7 = basic_conv(L, p + ".branch7x7_3", b7, k7x1(192));
  Shape bd = basic_conv(L, p + ".branch7x7dbl_1", in, k1(c7));
  bd = basic_conv(L, p + ".branch7x7dbl_2", bd, k7x1(c7));
  bd = basic_conv(L, p + ".branch7x7dbl_3", bd, k1x7(c7));
  bd = basic_conv(L, p + ".branch7x7dbl_4", bd, k7x1(c7));
  bd = basic_conv(L, p + ".branch7x7dbl_5", bd, k1x7(192));
  const Shape bp =
      basic_conv(L, p + ".branch_pool", pool(L, p + ".avg_pool", in, 3, 1, 1), k1(192));
  return concat({b1, b7, bd, bp});
}

Shape inception_d(Layers& L, const std::string& p, Shape in) {
  Shape b3 = basic_conv(L, p + ".branch3x3_1", in, k1(192));
  b3 = basic_conv(L, p + ".branch3x3_2", b3, k3(320, 2));
  Shape b7 = basic_conv(L, p + ".branch7x7x3_1", in, k1(192));
  b7 = basic_conv(L, p + ".branch7x7x3_2", b7, k1x7(192));
  b7 = basic_conv(L, p + ".branch7x7x3_3", b7, k7x1(192));
  b7 = basic_conv(L, p + ".branch7x7x3_4", b7, k3(192, 2));
  return concat({b3, b7, pool(L, p + ".max_pool", in, 3, 2, 0)});
}

Shape inception_e(Layers& L, const std::string& p, Shape in) {
  const ConvSpec k1x3{384, 1, 3, 1, 0, 1}, k3x1{384, 3, 1, 1, 1, 0};
  const Shape b1 = basic_conv(L, p + ".branch1x1", in, k1(320));
  const Shape b3 = basic_conv(L, p + ".branch3x3_1", in, k1(384));
  const Shape b3a = basic_conv(L, p + ".branch3x3_2a", b3, k1x3);
  const Shape b3b = basic_conv(L, p + ".branch3x3_2b", b3, k3x1);
  Shape bd = basic_conv(L, p + ".branch3x3dbl_1", in, k1(448));
  bd = basic_conv(L, p + ".branch3x3dbl_2", bd, k3(384, 1, 1));
  const Shape bda = basic_conv(L, p + ".branch3x3dbl_3a", bd, k1x3);
  const Shape bdb = basic_conv(L, p + ".branch3x3dbl_3b", bd, k3x1);
  const Shape bp =
      basic_conv(L, p + ".branch_pool", pool(L, p + ".avg_pool", in, 3, 1, 1), k1(192));
  return concat({b1, b3a, b3b, bda, bdb, bp});
}

// Auxiliary classifier on the 17x17x768 grid: 5x5 stride-3 average pool, 1x1 conv to 128, 5x5
// conv to 768 (both BasicConv2d), global average pool, fully connected to the classes.
void inception_aux(Layers& L, const std::string& p, Shape in) {
  Shape x = pool(L, p + ".avg_pool", in, 5, 3, 0);
  x = basic_conv(L, p + ".conv0", x, k1(128));
  x = basic_conv(L, p + ".conv1", x, ConvSpec{768, 5, 5, 1, 0, 0});
  fully_connected(L, p + ".fc", global_avg_pool(L, p + ".avgpool", x), 1000);
}

}  // namespace

ModelGraph resnet50() {
  constexpr int kBlocks[4] = {3, 4, 6, 3};
  return bottleneck_resnet("resnet50", kBlocks);
}

ModelGraph resnet101() {
  constexpr int kBlocks[4] = {3, 4, 23, 3};
  return bottleneck_resnet("resnet101", kBlocks);
}

// Configuration D of Simonyan & Zisserman, Table 1: 13 3x3 convs in five stages of 2, 2, 3, 3, 3
// (64, 128, 256, 512, 512 channels), each stage ending in a 2x2 stride-2 max pool, then FC
// 25088 -> 4096 -> 4096 -> 1000 with ReLU between (torchvision vgg16 layout).
ModelGraph vgg16() {
  ModelGraph g;
  g.name = "vgg16";
  g.sample_unit = "image";
  g.tokens_per_sample = 1;
  Layers& L = g.layers;
  struct Stage {
    int convs, channels;
  };
  const Stage stages[] = {{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}};
  Shape x{3, 224, 224};
  for (int s = 0; s < 5; ++s) {
    for (int i = 0; i < stages[s].convs; ++i) {
      const std::string name = "conv" + std::to_string(s + 1) + "_" + std::to_string(i + 1);
      x = vgg_conv(L, name, x, stages[s].channels);
      if (s == 0 && i == 0) weight_gradient_only(L[L.size() - 2]);  // the conv before its ReLU
    }
    x = pool(L, "pool" + std::to_string(s + 1), x, 2, 2, 0);
  }
  x = relu(L, "fc6.relu", fully_connected(L, "fc6", x, 4096));
  x = relu(L, "fc7.relu", fully_connected(L, "fc7", x, 4096));
  fully_connected(L, "fc8", x, 1000);
  return g;
}

ModelGraph inception_v3() {
  ModelGraph g;
  g.name = "inception-v3";
  g.sample_unit = "image";
  g.tokens_per_sample = 1;
  Layers& L = g.layers;
  Shape x{3, 299, 299};
  x = basic_conv(L, "Conv2d_1a_3x3", x, k3(32, 2));  // 149x149
  weight_gradient_only(L[L.size() - 3]);              // conv, bn, relu: the conv
  x = basic_conv(L, "Conv2d_2a_3x3", x, k3(32));       // 147x147
  x = basic_conv(L, "Conv2d_2b_3x3", x, k3(64, 1, 1));
  x = pool(L, "maxpool1", x, 3, 2, 0);                 // 73x73
  x = basic_conv(L, "Conv2d_3b_1x1", x, k1(80));
  x = basic_conv(L, "Conv2d_4a_3x3", x, k3(192));      // 71x71
  x = pool(L, "maxpool2", x, 3, 2, 0);                 // 35x35
  x = inception_a(L, "Mixed_5b", x, 32);               // 256 channels
  x = inception_a(L, "Mixed_5c", x, 64);               // 288
  x = inception_a(L, "Mixed_5d", x, 64);               // 288
  x = inception_b(L, "Mixed_6a", x);                   // 768, 17x17
  x = inception_c(L, "Mixed_6b", x, 128);
  x = inception_c(L, "Mixed_6c", x, 160);
  x = inception_c(L, "Mixed_6d", x, 160);
  x = inception_c(L, "Mixed_6e", x, 192);
  inception_aux(L, "AuxLogits", x);
  x = inception_d(L, "Mixed_7a", x);                   // 1280, 8x8
  x = inception_e(L, "Mixed_7b", x);                   // 2048
  x = inception_e(L, "Mixed_7c", x);                   // 2048
  fully_connected(L, "fc", global_avg_pool(L, "avgpool", x), 1000);
  return g;
}

}  // namespace dlsim::models
