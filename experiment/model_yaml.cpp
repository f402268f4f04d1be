// User-defined models (model_yaml.hpp): a transformer from its sizes, or an explicit layer list
// with one level of repeat groups. Figures arrive per sample in model_graph.hpp units.
#include "experiment/model_yaml.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "models/zoo.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kMaxCount = 1e18;                // parameters or elements per sample of a layer
constexpr double kMaxFlops = 1e21;                // FLOPs per sample of a layer
constexpr std::size_t kMaxLayers = 1'000'000;     // layers of a model, repeats expanded
constexpr std::int64_t kMaxRepeat = 100'000;
constexpr std::int64_t kMaxExperts = 65'536;
constexpr std::int64_t kMaxSequence = 1'048'576;  // as workload.sequence_length

const std::vector<std::pair<std::string, models::LayerKind>> kKinds{
    {"conv", models::LayerKind::conv},     {"linear", models::LayerKind::linear},
    {"matmul", models::LayerKind::matmul}, {"norm", models::LayerKind::norm},
    {"elementwise", models::LayerKind::elementwise}, {"pool", models::LayerKind::pool},
    {"embedding", models::LayerKind::embedding}, {"softmax", models::LayerKind::softmax}};

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const auto& k : kKinds) names.push_back(k.first);
  return names;
}

models::LayerKind kind_of(const std::string& name) {
  for (const auto& k : kKinds) {
    if (k.first == name) return k.second;
  }
  throw std::logic_error("kind_of: unchecked layer kind '" + name + "'");
}

// ---- transformer ----

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool contains_word(const std::string& text, const std::string& word) {
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_word_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_word_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// The transformer key a message from decoder_transformer() is about; "" when none is named.
std::string blamed_key(const std::string& message, const MapReader& t) {
  const std::pair<const char*, const char*> words[] = {
      {"top_k", "top_k"}, {"experts", "experts"}, {"kv_heads", "kv_heads"},
      {"sequence_length", "sequence_length"}, {"max_positions", "sequence_length"}, {"ffn", "ffn"},
      {"heads", "heads"}, {"hidden", "hidden"}, {"vocab", "vocab"}, {"layers", "layers"}};
  for (const auto& [word, key] : words) {
    if (contains_word(message, word) && t.has(key)) return key;
  }
  return "";
}

// The values of ffn_kind and positions (MapReader::choice has checked the name).
models::FfnKind ffn_kind_named(const std::string& name) {
  if (name == "relu") return models::FfnKind::relu;
  if (name == "swiglu") return models::FfnKind::swiglu;
  if (name == "geglu") return models::FfnKind::geglu;
  return models::FfnKind::gelu;
}
models::Positions positions_named(const std::string& name) {
  if (name == "rotary") return models::Positions::rotary;
  if (name == "alibi") return models::Positions::alibi;
  return models::Positions::learned;
}

// The mixture-of-experts keys: top_k is required with experts > 0 and rejected without.
void read_experts(MapReader& t, models::DecoderConfig& c) {
  c.experts = static_cast<int>(t.integer("experts", 0, kMaxExperts, 0));
  if (c.experts > 0) {
    c.top_k = static_cast<int>(t.integer("top_k", 1, c.experts));
  } else if (t.has("top_k")) {
    t.fail("top_k", "top_k (the experts each token is routed to) needs a mixture of experts: "
                    "set experts to more than 0, or remove top_k");
  } else {
    t.allow({"top_k"});
  }
}

// decoder_transformer(), its std::invalid_argument turned into a ConfigError at the key it
// names (the checks above catch what it checks today; this keeps future checks located).
models::ModelGraph build_transformer(const models::DecoderConfig& c, const MapReader& t, const YAML::Node& node) {
  try {
    return models::decoder_transformer(c, c.max_positions);
  } catch (const std::invalid_argument& e) {
    // The message opens with the model's name, which must not decide the key.
    const std::string message = e.what();
    const std::string prefix = c.name + ": ";
    const std::string key = blamed_key(message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message, t);
    if (!key.empty()) t.fail(key, message);
    throw ConfigError(t.source().locate(node, t.path()), t.path(), message);
  }
}

models::ModelGraph read_transformer(MapReader& model, const std::string& name, models::DecoderConfig* out, std::string* attention) {
  const YAML::Node node = model.node("transformer");
  MapReader t(node, model.path_of("transformer"), model.source());
  models::DecoderConfig c;
  c.name = name;
  c.layers = static_cast<int>(t.integer("layers", 1, 100'000));
  c.hidden = static_cast<int>(t.integer("hidden", 1, 1'048'576));
  c.heads = static_cast<int>(t.integer("heads", 1, 65'536));
  // head_dim: PaLM's and Gemma's heads x head_dim differ from hidden; by default each head has
  // hidden / heads features, so heads must divide hidden.
  c.head_dim = static_cast<int>(t.integer("head_dim", 1, 65'536, 0));
  if (c.head_dim == 0 && c.hidden % c.heads != 0) {
    t.fail("heads", "heads " + std::to_string(c.heads) + " must divide hidden " + std::to_string(c.hidden) +
                        " (each head has hidden / heads features unless head_dim is given)");
  }
  c.kv_heads = static_cast<int>(t.integer("kv_heads", 1, c.heads, c.heads));
  if (c.heads % c.kv_heads != 0) {
    t.fail("kv_heads", "kv_heads " + std::to_string(c.kv_heads) + " must divide heads " + std::to_string(c.heads) +
                           " (each K/V head serves heads / kv_heads query heads)");
  }
  c.ffn = static_cast<int>(t.integer("ffn", 1, 16'777'216, 4 * std::int64_t{c.hidden}));
  c.vocab = static_cast<int>(t.integer("vocab", 1, 100'000'000));
  const int sequence_length = static_cast<int>(t.integer("sequence_length", 1, kMaxSequence));
  c.max_positions = sequence_length;
  const std::string ffn_kind = t.choice("ffn_kind", {"gelu", "relu", "swiglu", "geglu"}, "gelu");
  c.ffn_kind = ffn_kind_named(ffn_kind);
  c.tied_embeddings = t.boolean("tied_embeddings", true);
  const std::string positions = t.choice("positions", {"learned", "rotary", "alibi"}, "learned");
  c.positions = positions_named(positions);
  c.rms_norm = t.choice("norm", {"layernorm", "rmsnorm"}, "layernorm") == "rmsnorm";
  c.linear_bias = t.boolean("bias", true);
  c.dropout = t.boolean("dropout", false);
  c.parallel_block = t.boolean("parallel_block", false);
  // parallel_block_norms: 1, one norm shared by attention and MLP (GPT-J, PaLM, Falcon-7B); 2, a
  // norm each (GPT-NeoX, Falcon-40B/180B). Only a parallel block has the choice.
  const int parallel_norms = static_cast<int>(t.integer("parallel_block_norms", 1, 2, 1));
  if (parallel_norms == 2 && !c.parallel_block) {
    t.fail("parallel_block_norms", "2 norms per block needs parallel_block: true (a sequential block has one before each half)");
  }
  c.parallel_block_two_norms = parallel_norms == 2;
  c.embedding_norm = t.boolean("embedding_norm", false);
  // The attention core: "unfused" (batched GEMMs, softmax and dropout over the s x s scores, as
  // Megatron-LM 2021 and eager PyTorch run it), "flash" (one FlashAttention kernel), or "auto"
  // (the default: flash where the device and precision run it; decided by the workload, which
  // knows them, see scenario_loader.cpp); "flash-triton": FlashAttention's Triton kernel (MPT's
  // attn_impl: triton), slower than FA2 (models/attention_model.cpp R8); "flash3": FlashAttention-3,
  // Hopper only (R9; the workload refuses it elsewhere, at this key).
  const std::string choice = t.choice("attention", kAttentionChoices, "auto");
  const std::optional<models::FlashKernel> kernel = models::flash_kernel_named(choice);
  c.flash_attention = kernel.has_value();
  c.flash_kernel = kernel.value_or(models::FlashKernel::fa2);
  if (attention) *attention = choice;
  read_experts(t, c);
  t.finish();
  if (out) *out = c;
  return build_transformer(c, t, node);
}

// ---- layer list ----

// A layer read from the file, with where its name is (for duplicate-name errors).
struct ReadLayer {
  models::Layer layer;
  YAML::Node name_node;
  std::string name_path;
};

struct ListBuilder {
  models::ModelGraph graph;
  int next_block = 0;
  std::map<std::string, std::string> seen;  // layer name -> key path of its first definition
};

models::Layer read_layer_fields(MapReader& r) {
  models::Layer l;
  l.name = r.text("name");
  if (l.name.empty()) r.fail("name", "expected a non-empty layer name");
  l.kind = kind_of(r.choice("kind", kind_names()));
  l.parameters = r.number("parameters", 0, kMaxCount, 0.0);
  l.forward_flops = r.number("forward_flops", 0, kMaxFlops);
  l.backward_flops = r.number("backward_flops", 0, kMaxFlops, -1.0);  // -1: the default rule
  l.input_elements = r.number("input_elements", 0, kMaxCount);
  l.activation_elements = r.number("output_elements", 0, kMaxCount);
  if (l.activation_elements == 0) {
    r.fail("output_elements", "a layer must produce output: expected a number greater than 0");
  }
  l.saved_elements = r.number("saved_elements", 0, kMaxCount, -1.0);  // -1: the default rule
  l.tensor = r.choice("tensor", {"replicated", "split"}, "replicated") == "split" ? models::TensorSplit::split
                                                                                  : models::TensorSplit::replicated;
  l.tp_all_reduce = r.boolean("tp_all_reduce", false);
  l.attention_core = r.boolean("attention_core", false);
  l.all_to_all_after = r.boolean("all_to_all_after", false);
  l.experts = static_cast<int>(r.integer("experts", 0, kMaxExperts, 0));
  r.finish();
  return l;
}

ReadLayer read_layer(const YAML::Node& item, const std::string& path, const Source& source) {
  MapReader r(item, path, source);
  ReadLayer out{read_layer_fields(r), {}, r.path_of("name")};
  out.name_node = r.node("name");
  return out;
}

// The `layers` key of `r`: a non-empty list.
YAML::Node layer_list(MapReader& r) {
  const YAML::Node list = r.node("layers");
  if (!r.has("layers")) r.fail_missing("layers", "a list of layers, e.g. [{name: fc, kind: linear, ...}]");
  if (!list.IsSequence()) {
    r.fail("layers", std::string("expected a list of layers, got ") + (list.IsMap() ? "a mapping" : "'" + list.Scalar() + "'"));
  }
  if (list.size() == 0) r.fail("layers", "the layer list is empty: give at least one layer");
  return list;
}

bool is_group(const YAML::Node& item) {
  return item.IsMap() && (item["repeat"].IsDefined() || item["layers"].IsDefined());
}

void add(ListBuilder& b, models::Layer layer, const ReadLayer& from, const Source& source) {
  const auto [at, inserted] = b.seen.emplace(layer.name, from.name_path);
  if (!inserted) {
    throw ConfigError(source.locate(from.name_node, from.name_path), from.name_path,
                      "layer name '" + layer.name + "' is used twice (first at " + at->second +
                          "); layer names must be unique in a model");
  }
  if (b.graph.layers.size() >= kMaxLayers) {
    throw ConfigError(source.locate(from.name_node, from.name_path), from.name_path,
                      "the model has more than " + std::to_string(kMaxLayers) + " layers (repeats expanded)");
  }
  b.graph.layers.push_back(std::move(layer));
}

// {repeat: N, layers: [...]}: N blocks, numbered on from b.next_block.
void read_group(const YAML::Node& item, const std::string& path, const Source& source, ListBuilder& b) {
  MapReader g(item, path, source);
  const int repeat = static_cast<int>(g.integer("repeat", 1, kMaxRepeat));
  const YAML::Node list = layer_list(g);
  std::vector<ReadLayer> body;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = g.path_of("layers") + "[" + std::to_string(i) + "]";
    if (is_group(list[i])) {
      const YAML::Node inner = list[i]["repeat"].IsDefined() ? list[i]["repeat"] : list[i]["layers"];
      throw ConfigError(source.locate(inner, item_path), item_path,
                        "a repeat group cannot hold another group (groups are one level deep); "
                        "list the inner layers in this group, or repeat them with a separate group");
    }
    body.push_back(read_layer(list[i], item_path, source));
  }
  g.finish();
  for (int rep = 0; rep < repeat; ++rep) {
    for (const ReadLayer& r : body) {
      models::Layer layer = r.layer;
      layer.name.append(".").append(std::to_string(rep));
      layer.block = b.next_block;
      add(b, std::move(layer), r, source);
    }
    ++b.next_block;
  }
}

models::ModelGraph read_layer_list(MapReader& model, const std::string& name) {
  ListBuilder b;
  b.graph.name = name;
  const auto unit = model.optional_text("sample_unit");
  if (unit && unit->empty()) model.fail("sample_unit", "expected a name for one sample, e.g. image or sequence");
  b.graph.sample_unit = unit.value_or("sample");
  b.graph.tokens_per_sample = model.number("tokens_per_sample", 1, 1e9, 1.0);
  const YAML::Node list = layer_list(model);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = model.path_of("layers") + "[" + std::to_string(i) + "]";
    if (is_group(list[i])) {
      read_group(list[i], path, model.source(), b);
    } else {
      const ReadLayer r = read_layer(list[i], path, model.source());
      add(b, r.layer, r, model.source());
    }
  }
  if (b.graph.forward_flops_per_sample() <= 0) {
    model.fail("layers", "the model does no work: every layer has forward_flops 0; give each layer its FLOPs per sample");
  }
  return std::move(b.graph);
}

}  // namespace

models::ModelGraph read_model_definition(MapReader& model, models::DecoderConfig* transformer_sizes, std::string* attention) {
  const std::string name = model.text("name");
  if (name.empty()) model.fail("name", "expected a non-empty model name");
  const bool transformer = model.has("transformer");
  const bool layers = model.has("layers");
  if (transformer && layers) {
    model.fail("layers", "give exactly one of 'transformer' (a decoder-only transformer from its sizes) or "
                         "'layers' (an explicit layer list), not both");
  }
  if (!transformer && !layers) {
    // A misspelt key is the likeliest cause: report it with the nearest known key first.
    model.allow({"transformer", "layers", "sample_unit", "tokens_per_sample"});
    model.finish();
    model.fail("transformer", "missing the model's structure: give either 'transformer: {layers, hidden, heads, "
                              "vocab, sequence_length, ...}' or 'layers: [...]' (an explicit layer list)");
  }
  models::ModelGraph graph;
  if (transformer) {
    for (const char* key : {"sample_unit", "tokens_per_sample"}) {
      if (model.has(key)) {
        model.fail(key, "a transformer's sample is one sequence of transformer.sequence_length tokens; remove '" +
                            std::string(key) + "'");
      }
    }
    model.allow({"layers"});
    graph = read_transformer(model, name, transformer_sizes, attention);
  } else {
    model.allow({"transformer"});
    graph = read_layer_list(model, name);
  }
  model.finish();
  return graph;
}

}  // namespace dlsim::experiment
