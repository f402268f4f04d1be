// The kernel-level check of serving iterations: one Llama-2 layer's kernels at T tokens as
// models::ServingStepModel::layer_s times them, against the sum of the same kernels measured by
// vidur (../shared/reference/kernels: the four GEMMs, both RMSNorms, rotary, SiLU-and-multiply
// and the two residual adds; attention and communication are not in those tables). Skipped,
// visibly, without ../shared/reference/kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "experiment/load.hpp"
#include "models/serving_iteration.hpp"

namespace dlsim::experiment {
namespace {

std::string kernels_dir() {
  const char* dir = std::getenv("DLSIM_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/../shared/reference/kernels";
}

// (gpu, model, tp, tokens) -> summed median ms of one layer's kernels, and how many were summed.
using Key = std::tuple<std::string, std::string, int, int>;
struct Sum {
  double ms = 0;
  int kernels = 0;
};

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string c;
  while (std::getline(in, c, ',')) out.push_back(c);
  return out;
}

// Each op's weight in a layer: the residual add runs twice (after attention, after the MLP).
double weight_of(const std::string& op) {
  if (op == "add") return 2;
  if (op == "emb") return 0;  // once per model, not per layer
  return 1;
}

void add_gemms(std::map<Key, Sum>& sums, const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // gpu,source_model,op,tp,m,n,k,bias,dtype,median_ms,...
  while (std::getline(in, line)) {
    const auto c = cells(line);
    Sum& s = sums[{c[0], c[1], std::stoi(c[3]), std::stoi(c[4])}];
    s.ms += std::stod(c[9]);
    ++s.kernels;
  }
}

// The element-wise ops; tp 0 rows (independent of tp) count at every tp.
void add_elementwise(std::map<Key, Sum>& sums, const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // gpu,source_model,op,tp,num_tokens,elements,bytes,dtype,median_ms,...
  while (std::getline(in, line)) {
    const auto c = cells(line);
    const double w = weight_of(c[2]);
    if (w == 0) continue;
    const int tp = std::stoi(c[3]);
    for (int t : {1, 2, 4, 8}) {
      if (tp != 0 && tp != t) continue;
      Sum& s = sums[{c[0], c[1], t, std::stoi(c[4])}];
      s.ms += w * std::stod(c[8]);
      s.kernels += static_cast<int>(w);
    }
  }
}

TEST(ServingKernels, LlamaLayersAtServingTokenCountsMatchTheMeasuredKernelSums) {
  const std::string dir = kernels_dir();
  if (!std::filesystem::exists(dir + "/gemm_vidur.csv")) GTEST_SKIP() << "no measured kernels at " << dir << " (../shared absent)";
  std::map<Key, Sum> sums;
  add_gemms(sums, dir + "/gemm_vidur.csv");
  add_elementwise(sums, dir + "/elementwise_vidur.csv");
  const std::map<std::string, std::string> instance_of{{"A100", "azure/Standard_ND96amsr_A100_v4"}, {"H100", "aws/p5.48xlarge"}};
  const std::map<std::string, std::string> model_of{{"Llama-2-7b-hf", "llama2-7b"}, {"Llama-2-70b-hf", "llama2-70b"}};
  constexpr int kLayerKernels = 4 + 2 + 1 + 1 + 2;  // GEMMs, norms, rotary, activation, adds
  for (const auto& [gpu, instance] : instance_of) {
    for (const auto& [vidur_model, zoo_model] : model_of) {
      // decode-sized (T <= 256) and prefill-sized (T >= 512) iterations
      std::vector<double> decode, prefill;
      // The device and its shipped kernel profile, as a serving scenario gets them.
      const Scenario s = load_scenario_text("cluster: {instance: " + instance + "}\nserving: {model: " + zoo_model +
                                                ", tensor: 8, requests: {rate: 1, count: 1, prompt_tokens: 1, output_tokens: 1}}\n",
                                            "k.yaml");
      for (int tp : {1, 2, 4, 8}) {
        models::ServingStepOptions o;
        o.tensor = tp;
        o.precision = models::Precision::fp16;
        const models::ServingStepModel m(s.serving->model, s.cluster.device, s.cluster.profile, o, [](double) { return 0.0; });
        for (const auto& [key, sum] : sums) {
          if (std::get<0>(key) != gpu || std::get<1>(key) != vidur_model || std::get<2>(key) != tp) continue;
          if (sum.kernels != kLayerKernels) continue;  // a token count some op was not measured at
          const int tokens = std::get<3>(key);
          const double error = m.layer_s(tokens) / (sum.ms * 1e-3) - 1;
          if (tokens <= 256) decode.push_back(std::fabs(error));
          if (tokens >= 512) prefill.push_back(std::fabs(error));
        }
      }
      ASSERT_GT(decode.size(), 20u) << gpu << " " << vidur_model;
      ASSERT_GT(prefill.size(), 20u) << gpu << " " << vidur_model;
      double d = 0, p = 0;
      for (double e : decode) d += e;
      for (double e : prefill) p += e;
      d /= double(decode.size());
      p /= double(prefill.size());
      std::printf("serving layer kernels %s %s: mean |error| %.1f%% over %zu decode-sized, %.1f%% over %zu prefill-sized token counts\n",
                  gpu.c_str(), zoo_model.c_str(), 100 * d, decode.size(), 100 * p, prefill.size());
      EXPECT_LT(d, 0.10) << gpu << " " << zoo_model << " decode-sized layers";
      EXPECT_LT(p, 0.10) << gpu << " " << zoo_model << " prefill-sized layers";
    }
  }
}

}  // namespace
}  // namespace dlsim::experiment
