// User-defined models (workload.model as a mapping): a transformer from its sizes must equal the
// zoo's preset of the same sizes; a layer list expands repeat groups into numbered blocks; bad
// definitions are ConfigErrors at the offending key (file, line, column, key path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/config_error.hpp"
#include "experiment/model_yaml.hpp"
#include "models/zoo.hpp"
#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

constexpr const char* kFile = "model.yaml";

// Reads workload.model of `text` as a user-defined model.
models::ModelGraph read(const std::string& text) {
  const Source source{kFile, {}};
  const YAML::Node root = YAML::Load(text);
  MapReader model(root["workload"]["model"], "workload.model", source);
  return read_model_definition(model);
}

// The ConfigError reading `text` throws; fails the test when none is thrown.
ConfigError error_reading(const std::string& text) {
  try {
    read(text);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError({}, "<none>", "<none>");
}

// Relative difference, for totals summed in different orders.
double relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1.0); }

void expect_same_costs(const models::ModelGraph& got, const models::ModelGraph& want) {
  EXPECT_EQ(got.layers.size(), want.layers.size());
  EXPECT_LT(relative(got.parameters(), want.parameters()), 1e-12) << got.parameters() << " vs " << want.parameters();
  EXPECT_LT(relative(got.forward_flops_per_sample(), want.forward_flops_per_sample()), 1e-12);
  EXPECT_LT(relative(got.training_flops_per_sample(), want.training_flops_per_sample()), 1e-12);
  EXPECT_EQ(got.tokens_per_sample, want.tokens_per_sample);
  EXPECT_EQ(got.sample_unit, want.sample_unit);
}

TEST(ModelYaml, TransformerWithGpt3XlSizesEqualsZooPreset) {
  const auto got = read(R"(workload:
  model:
    name: my-gpt
    transformer: {layers: 24, hidden: 2048, heads: 16, vocab: 50257, sequence_length: 2048, dropout: true}
)");
  EXPECT_EQ(got.name, "my-gpt");
  const auto want = models::zoo_model("gpt3-1.3b");
  expect_same_costs(got, want);
  // About 1.3 billion parameters: guards against both sides being wrong the same way.
  EXPECT_GT(got.parameters(), 1.2e9);
  EXPECT_LT(got.parameters(), 1.4e9);
}

TEST(ModelYaml, TransformerDefaultsSpelledOutChangeNothing) {
  const auto got = read(R"(workload:
  model:
    name: my-gpt
    transformer: {layers: 24, hidden: 2048, heads: 16, kv_heads: 16, ffn: 8192, vocab: 50257,
                  sequence_length: 2048, ffn_kind: gelu, tied_embeddings: true,
                  positions: learned, norm: layernorm, bias: true, dropout: true, experts: 0}
)");
  expect_same_costs(got, models::zoo_model("gpt3-1.3b"));
}

// Zoo presets spelled out as transformer options: Llama 3 8B (grouped K/V heads, SwiGLU, RMSNorm,
// untied) and Gemma 7B (16 heads of 256 on a width of 3072: head_dim; GeGLU; tied).
TEST(ModelYaml, TransformerOptionsEqualZooPresets) {
  const std::pair<const char*, const char*> cases[] = {
      {"llama3-8b", "{layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, sequence_length: 8192, "
                    "ffn_kind: swiglu, tied_embeddings: false, positions: rotary, norm: rmsnorm, bias: false}"},
      {"gemma-7b", "{layers: 28, hidden: 3072, heads: 16, head_dim: 256, ffn: 24576, vocab: 256000, sequence_length: 8192, "
                   "ffn_kind: geglu, tied_embeddings: true, positions: rotary, norm: rmsnorm, bias: false}"},
  };
  for (const auto& [preset, transformer] : cases) {
    const auto got = read(std::string("workload:\n  model:\n    name: mine\n    transformer: ") + transformer + "\n");
    expect_same_costs(got, models::zoo_model(preset));
  }
  // Heads need not divide hidden once head_dim is given; without it they must.
  const auto odd_heads = [](const char* head_dim) {
    return read(std::string("workload:\n  model:\n    name: m\n    transformer: {layers: 2, hidden: 100, heads: 3, ") +
                head_dim + "vocab: 100, sequence_length: 16}\n");
  };
  EXPECT_NO_THROW(odd_heads("head_dim: 32, "));
  EXPECT_THROW(odd_heads(""), ConfigError);
}

// ALiBi (BLOOM, MPT): no position table and no rotary kernel; everything else as rotary.
TEST(ModelYaml, AlibiIsRotaryWithoutItsKernel) {
  const auto text = [](const char* positions) {
    return std::string(R"(workload:
  model:
    name: my-bloom
    transformer: {layers: 4, hidden: 1024, heads: 16, vocab: 50000, sequence_length: 2048,
                  positions: )") + positions + "}\n";
  };
  const auto alibi = read(text("alibi"));
  const auto rotary = read(text("rotary"));
  const auto learned = read(text("learned"));
  const auto rotary_kernels = [](const models::ModelGraph& g) {
    return std::count_if(g.layers.begin(), g.layers.end(),
                         [](const models::Layer& l) { return l.name.find(".attn.rotary") != std::string::npos; });
  };
  EXPECT_EQ(rotary_kernels(rotary), 4);
  EXPECT_EQ(rotary_kernels(alibi), 0);
  EXPECT_EQ(alibi.layers.size() + 4, rotary.layers.size());
  EXPECT_DOUBLE_EQ(alibi.parameters(), rotary.parameters());
  EXPECT_DOUBLE_EQ(learned.parameters() - alibi.parameters(), 2048.0 * 1024);  // the position table
  EXPECT_LT(alibi.forward_flops_per_sample(), rotary.forward_flops_per_sample());
  try {
    read(text("sinusoidal"));
    FAIL() << "an unknown position encoding was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("learned, rotary, alibi"), std::string::npos) << e.what();
  }
}

// ReLU (OPT) and GeGLU (Gemma): the same matrices as GELU and SwiGLU, another activation kernel.
TEST(ModelYaml, ReluAndGegluFeedForwardsKeepTheirMatrices) {
  const auto read_kind = [](const char* kind) {
    return read(std::string(R"(workload:
  model:
    name: my-ffn
    transformer: {layers: 2, hidden: 1024, heads: 16, vocab: 50000, sequence_length: 512, ffn_kind: )") +
                kind + "}\n");
  };
  const auto activation = [](const models::ModelGraph& g, const std::string& suffix) {
    int n = 0;
    models::MemoryKernel kind = models::MemoryKernel::count_;
    for (const models::Layer& l : g.layers) {
      if (l.name.size() >= suffix.size() && l.name.compare(l.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        ++n;
        kind = l.memory_kernel.value_or(models::MemoryKernel::count_);
      }
    }
    return std::make_pair(n, kind);
  };
  const auto gelu = read_kind("gelu"), relu = read_kind("relu");
  const auto swiglu = read_kind("swiglu"), geglu = read_kind("geglu");
  EXPECT_DOUBLE_EQ(relu.parameters(), gelu.parameters());
  EXPECT_DOUBLE_EQ(geglu.parameters(), swiglu.parameters());
  EXPECT_GT(swiglu.parameters(), gelu.parameters());  // the gate matrix
  EXPECT_EQ(activation(relu, ".relu"), std::make_pair(2, models::MemoryKernel::relu));
  EXPECT_EQ(activation(relu, ".gelu").first, 0);
  EXPECT_EQ(activation(gelu, ".gelu"), std::make_pair(2, models::MemoryKernel::activation));
  EXPECT_EQ(activation(geglu, ".geglu"), std::make_pair(2, models::MemoryKernel::gated_act));
  EXPECT_EQ(activation(geglu, ".swiglu").first, 0);
  EXPECT_LT(relu.forward_flops_per_sample(), gelu.forward_flops_per_sample());
  EXPECT_GT(geglu.forward_flops_per_sample(), swiglu.forward_flops_per_sample());
}

// GPT-NeoX and Falcon-40B put a norm before each half of a parallel block, BLOOM one on the
// embeddings: each adds one LayerNorm (2 x hidden parameters) where it is, nothing else.
TEST(ModelYaml, ParallelBlockNormsAndAnEmbeddingNormAddOneLayerNormEach) {
  const auto read_with = [](const std::string& keys) {
    return read("workload:\n  model:\n    name: m\n    transformer: {layers: 3, hidden: 256, heads: 4, vocab: 1000, "
                "sequence_length: 64, parallel_block: true" + keys + "}\n");
  };
  const auto shared = read_with(""), two = read_with(", parallel_block_norms: 2"), embedding = read_with(", embedding_norm: true");
  EXPECT_EQ(two.layers.size(), shared.layers.size() + 3);
  EXPECT_DOUBLE_EQ(two.parameters() - shared.parameters(), 3 * 2 * 256.0);
  EXPECT_EQ(embedding.layers.size(), shared.layers.size() + 1);
  EXPECT_EQ(embedding.layers[1].name, "embeddings.norm");
  EXPECT_EQ(embedding.layers[1].block, -1);  // on the first pipeline stage, with the embeddings
  EXPECT_DOUBLE_EQ(embedding.parameters() - shared.parameters(), 2 * 256.0);
}

constexpr const char* kLayerList = R"(workload:
  model:
    name: my-net
    sample_unit: image
    layers:
      - {name: conv1, kind: conv, parameters: 9408, forward_flops: 236e6, input_elements: 150528, output_elements: 802816}
      - repeat: 3
        layers:
          - {name: attn, kind: matmul, forward_flops: 1e9, input_elements: 1e5, output_elements: 1e5, tensor: split, tp_all_reduce: true, attention_core: true}
          - {name: mlp, kind: linear, parameters: 1e6, forward_flops: 2e9, backward_flops: 3e9, input_elements: 1e5, output_elements: 2e5, saved_elements: 5e4}
      - repeat: 2
        layers:
          - {name: moe, kind: linear, parameters: 8e6, forward_flops: 4e9, input_elements: 1e5, output_elements: 1e5, experts: 8, all_to_all_after: true}
      - {name: head, kind: linear, parameters: 1000, forward_flops: 2000, input_elements: 1000, output_elements: 1000}
)";

TEST(ModelYaml, LayerListExpandsRepeatsIntoNumberedBlocks) {
  const auto g = read(kLayerList);
  EXPECT_EQ(g.name, "my-net");
  EXPECT_EQ(g.sample_unit, "image");
  EXPECT_EQ(g.tokens_per_sample, 1);
  const std::vector<std::pair<std::string, int>> want{
      {"conv1", -1}, {"attn.0", 0}, {"mlp.0", 0}, {"attn.1", 1}, {"mlp.1", 1},
      {"attn.2", 2}, {"mlp.2", 2},  {"moe.0", 3}, {"moe.1", 4},  {"head", -1}};
  ASSERT_EQ(g.layers.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(g.layers[i].name, want[i].first) << "layer " << i;
    EXPECT_EQ(g.layers[i].block, want[i].second) << "layer " << i;
  }
  EXPECT_EQ(g.blocks(), 5);
  EXPECT_DOUBLE_EQ(g.parameters(), 9408 + 3 * 1e6 + 2 * 8e6 + 1000);
  EXPECT_DOUBLE_EQ(g.forward_flops_per_sample(), 236e6 + 3 * (1e9 + 2e9) + 2 * 4e9 + 2000);
  // Default rule (twice the forward for matrix layers) except mlp, which gives its own 3e9.
  EXPECT_DOUBLE_EQ(g.backward_flops_per_sample(), 2 * 236e6 + 3 * (2e9 + 3e9) + 2 * 8e9 + 4000);
}

TEST(ModelYaml, LayerListFieldsReachTheLayers) {
  const auto g = read(kLayerList);
  ASSERT_EQ(g.layers.size(), 10u);
  const models::Layer& conv = g.layers[0];
  EXPECT_EQ(conv.kind, models::LayerKind::conv);
  EXPECT_EQ(conv.input_elements, 150528);
  EXPECT_EQ(conv.activation_elements, 802816);
  EXPECT_EQ(conv.backward_flops, -1);  // absent: the default rule
  EXPECT_EQ(conv.saved_elements, -1);
  EXPECT_EQ(conv.tensor, models::TensorSplit::replicated);
  const models::Layer& attn = g.layers[3];
  EXPECT_EQ(attn.kind, models::LayerKind::matmul);
  EXPECT_EQ(attn.tensor, models::TensorSplit::split);
  EXPECT_TRUE(attn.tp_all_reduce);
  EXPECT_TRUE(attn.attention_core);
  EXPECT_FALSE(attn.all_to_all_after);
  const models::Layer& mlp = g.layers[4];
  EXPECT_EQ(mlp.backward_flops, 3e9);
  EXPECT_EQ(mlp.saved_elements, 5e4);
  EXPECT_EQ(mlp.activation_elements, 2e5);
  EXPECT_FALSE(mlp.tp_all_reduce);
  const models::Layer& moe = g.layers[8];
  EXPECT_EQ(moe.experts, 8);
  EXPECT_TRUE(moe.all_to_all_after);
  EXPECT_TRUE(g.has_experts());
  EXPECT_TRUE(g.has_tensor_layout());
}

TEST(ModelYaml, TokensPerSampleAndDefaultSampleUnit) {
  const auto g = read(R"(workload:
  model:
    name: tiny
    tokens_per_sample: 512
    layers:
      - {name: fc, kind: linear, parameters: 10, forward_flops: 20, input_elements: 1, output_elements: 1}
)");
  EXPECT_EQ(g.sample_unit, "sample");
  EXPECT_EQ(g.tokens_per_sample, 512);
  EXPECT_EQ(g.blocks(), 0);
}

// ---- errors ----

struct Case {
  std::string name;
  std::string text;
  std::string at;        // text whose first occurrence is where the error must point
  std::string key_path;  // expected ConfigError::key_path()
  std::vector<std::string> message;  // substrings message() must contain
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// `model` lines (indented under workload.model) in a scenario.
std::string model(const std::string& lines) { return "workload:\n  model:\n" + lines; }

const std::string kGoodLayer =
    "      - {name: fc, kind: linear, parameters: 10, forward_flops: 20, input_elements: 1, output_elements: 1}\n";

const std::vector<Case>& cases() {
  static const std::vector<Case> table{
      {"unknown_optional_layer_key",
       model("    name: m\n    layers:\n"
             "      - {name: fc, kind: linear, tensr: split, forward_flops: 20, input_elements: 1, output_elements: 1}\n"),
       "tensr", "workload.model.layers[0].tensr", {"unknown key 'tensr'", "did you mean 'tensor'", "allowed keys here"}},
      {"misspelt_required_layer_key",
       model("    name: m\n    layers:\n"
             "      - {name: fc, kind: linear, forward_flop: 20, input_elements: 1, output_elements: 1}\n"),
       "forward_flop", "workload.model.layers[0].forward_flop", {"unknown key 'forward_flop'", "did you mean 'forward_flops'"}},
      {"misspelt_form_key",
       model("    name: m\n    transfomer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16}\n"),
       "transfomer", "workload.model.transfomer", {"did you mean 'transformer'"}},
      {"misspelt_transformer_key",
       model("    name: m\n    transformer: {layers: 2, hiden: 64, heads: 4, vocab: 100, sequence_length: 16}\n"),
       "hiden", "workload.model.transformer.hiden", {"did you mean 'hidden'"}},
      {"both_forms",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16}\n"
             "    layers:\n" + kGoodLayer),
       "- {name: fc", "workload.model.layers", {"exactly one of 'transformer'", "'layers'", "not both"}},
      {"neither_form", model("    name: m\n    sample_unit: image\n"), "name: m", "workload.model.transformer",
       {"missing the model's structure", "'transformer:", "'layers:"}},
      {"missing_name", model("    layers:\n" + kGoodLayer), "layers:", "workload.model.name",
       {"missing required key 'name'"}},
      {"bad_kind",
       model("    name: m\n    layers:\n"
             "      - {name: fc, kind: convolution, forward_flops: 20, input_elements: 1, output_elements: 1}\n"),
       "convolution", "workload.model.layers[0].kind",
       {"unknown value 'convolution'", "allowed: conv, linear, matmul, norm, elementwise, pool, embedding, softmax"}},
      {"negative_flops",
       model("    name: m\n    layers:\n"
             "      - {name: fc, kind: linear, forward_flops: -2e9, input_elements: 1, output_elements: 1}\n"),
       "-2e9", "workload.model.layers[0].forward_flops", {"'-2e9' is out of range", "from 0 to"}},
      {"zero_output_elements",
       model("    name: m\n    layers:\n"
             "      - {name: fc, kind: linear, forward_flops: 20, input_elements: 1, output_elements: 0}\n"),
       "0}", "workload.model.layers[0].output_elements", {"must produce output", "greater than 0"}},
      {"empty_layer_list", model("    name: m\n    layers: []\n"), "[]", "workload.model.layers", {"empty"}},
      {"zero_flops_model",
       model("    name: m\n    layers:\n"
             "      - {name: a, kind: linear, forward_flops: 0, input_elements: 1, output_elements: 1}\n"
             "      - {name: b, kind: norm, forward_flops: 0e0, input_elements: 1, output_elements: 1}\n"),
       "- {name: a", "workload.model.layers", {"does no work"}},
      {"nested_repeat",
       model("    name: m\n    layers:\n      - repeat: 2\n        layers:\n          - repeat: 3\n"
             "            layers:\n        " + kGoodLayer),
       "3\n", "workload.model.layers[0].layers[0]", {"cannot hold another group", "one level"}},
      {"empty_group", model("    name: m\n    layers:\n      - repeat: 2\n        layers: []\n"), "[]",
       "workload.model.layers[0].layers", {"empty"}},
      {"group_without_repeat", model("    name: m\n    layers:\n      - layers:\n    " + kGoodLayer), "layers:\n          -",
       "workload.model.layers[0].repeat", {"missing required key 'repeat'"}},
      {"duplicate_layer_name",
       model("    name: m\n    layers:\n" + kGoodLayer +
             "      - {name: fc, kind: norm, forward_flops: 2, input_elements: 1, output_elements: 1}\n"),
       "fc, kind: norm", "workload.model.layers[1].name", {"'fc' is used twice", "workload.model.layers[0].name"}},
      {"top_k_without_experts",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16, top_k: 2}\n"),
       "2}", "workload.model.transformer.top_k", {"needs a mixture of experts"}},
      {"experts_without_top_k",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16, experts: 8}\n"),
       "{layers", "workload.model.transformer.top_k", {"missing required key 'top_k'", "from 1 to 8"}},
      {"top_k_above_experts",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16, experts: 4, top_k: 5}\n"),
       "5}", "workload.model.transformer.top_k", {"'5' is out of range", "from 1 to 4"}},
      {"heads_not_dividing_hidden",
       model("    name: m\n    transformer: {layers: 2, hidden: 1000, heads: 12, vocab: 100, sequence_length: 16}\n"),
       "12", "workload.model.transformer.heads", {"heads 12 must divide hidden 1000"}},
      {"kv_heads_not_dividing_heads",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, kv_heads: 3, vocab: 100, sequence_length: 16}\n"),
       "3,", "workload.model.transformer.kv_heads", {"kv_heads 3 must divide heads 4"}},
      {"bad_ffn_kind",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16, ffn_kind: silu}\n"),
       "silu", "workload.model.transformer.ffn_kind", {"unknown value 'silu'", "allowed: gelu, relu, swiglu, geglu"}},
      {"two_norms_without_parallel_block",
       model("    name: m\n    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16, parallel_block_norms: 2}\n"),
       "2}", "workload.model.transformer.parallel_block_norms", {"needs parallel_block: true"}},
      {"tokens_per_sample_with_transformer",
       model("    name: m\n    tokens_per_sample: 16\n"
             "    transformer: {layers: 2, hidden: 64, heads: 4, vocab: 100, sequence_length: 16}\n"),
       "16\n", "workload.model.tokens_per_sample", {"sequence_length", "remove 'tokens_per_sample'"}},
      {"layers_not_a_list", model("    name: m\n    layers: {fc: 1}\n"), "{fc", "workload.model.layers",
       {"expected a list of layers, got a mapping"}},
      {"layer_not_a_mapping", model("    name: m\n    layers:\n      - conv1\n"), "conv1",
       "workload.model.layers[0]", {"expected a mapping"}},
  };
  return table;
}

class ModelYamlError : public ::testing::TestWithParam<Case> {};

TEST_P(ModelYamlError, ReportedAtTheKeyWithLocation) {
  const Case& c = GetParam();
  const auto [line, column] = test::position_of(c.text, c.at);
  ASSERT_GT(line, 0) << "'" << c.at << "' is not in the case's text";
  const ConfigError e = error_reading(c.text);
  EXPECT_EQ(e.key_path(), c.key_path);
  EXPECT_EQ(e.where().file, kFile);
  EXPECT_EQ(e.where().line, line) << e.what();
  EXPECT_EQ(e.where().column, column) << e.what();
  for (const auto& part : c.message) EXPECT_NE(e.message().find(part), std::string::npos) << e.what();
  const std::string prefix = std::string(kFile) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                             c.key_path + ": ";
  EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
}

INSTANTIATE_TEST_SUITE_P(Cases, ModelYamlError, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace dlsim::experiment
