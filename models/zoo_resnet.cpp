// ResNet-50 v1.5 built layer by layer (He et al. 2016, "Deep Residual Learning"; v1.5 as in
// torchvision and NVIDIA DeepLearningExamples: the stride-2 of each downsampling bottleneck sits
// on the 3x3 conv, not the first 1x1). 224x224x3 input, 1000 classes, per-image costs.
// Conventions: a multiply-add is 2 FLOPs; convs followed by BN carry no bias; BN has 2*C
// trainable parameters (running statistics are buffers, not parameters).
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

// k x k convolution, "same" padding (k / 2), no bias.
Shape conv(Layers& out, const std::string& name, Shape in, int cout, int k, int stride) {
  Shape o{cout, out_size(in.h, k, stride, k / 2), out_size(in.w, k, stride, k / 2)};
  const double weights = double(k) * k * in.c * cout;
  push(out, name, LayerKind::conv, weights, 2 * weights * o.h * o.w, in.elements(), o.elements());
  return o;
}

Shape batch_norm(Layers& out, const std::string& name, Shape x) {
  push(out, name, LayerKind::norm, 2.0 * x.c, kBatchNormFlops * x.elements(), x.elements(),
       x.elements());
  return x;
}

Shape relu(Layers& out, const std::string& name, Shape x) {
  push(out, name, LayerKind::elementwise, 0, kReluFlops * x.elements(), x.elements(), x.elements());
  return x;
}

// Residual add: reads both branches, writes one.
Shape add(Layers& out, const std::string& name, Shape x) {
  push(out, name, LayerKind::elementwise, 0, kAddFlops * x.elements(), 2 * x.elements(),
       x.elements());
  return x;
}

// 3x3 stride-2 max pooling, padding 1: one comparison per window element.
Shape max_pool(Layers& out, const std::string& name, Shape in) {
  Shape o{in.c, out_size(in.h, 3, 2, 1), out_size(in.w, 3, 2, 1)};
  push(out, name, LayerKind::pool, 0, 9 * o.elements(), in.elements(), o.elements());
  return o;
}

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

}  // namespace

ModelGraph resnet50() {
  ModelGraph g;
  g.name = "resnet50";
  g.sample_unit = "image";
  g.tokens_per_sample = 1;
  Layers& L = g.layers;

  Shape x{3, 224, 224};
  x = relu(L, "relu", batch_norm(L, "bn1", conv(L, "conv1", x, 64, 7, 2)));
  x = max_pool(L, "maxpool", x);
  struct Stage {
    int blocks, width, stride;
  };
  const Stage stages[] = {{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}};
  for (int s = 0; s < 4; ++s) {
    for (int b = 0; b < stages[s].blocks; ++b) {
      const std::string prefix = "layer" + std::to_string(s + 1) + "." + std::to_string(b);
      x = bottleneck(L, prefix, x, stages[s].width, b == 0 ? stages[s].stride : 1);
    }
  }
  x = global_avg_pool(L, "avgpool", x);
  fully_connected(L, "fc", x, 1000);
  return g;
}

}  // namespace dlsim::models
