// A user-defined model written in a scenario: workload.model given as a mapping instead of a
// zoo name. Two forms, exactly one of them, each with a required `name`:
//
//   transformer: {layers, hidden, heads, vocab, sequence_length, kv_heads, ffn, ffn_kind,
//                 tied_embeddings, positions, norm, bias, dropout, experts, top_k}
//       a decoder-only transformer built by models::decoder_transformer() (zoo.hpp), at its
//       full context (max_positions = sequence_length).
//
//   sample_unit, tokens_per_sample, layers: [ {name, kind, parameters, forward_flops, ...},
//                                             {repeat: N, layers: [ ... ]}, ... ]
//       an explicit layer list in forward order. Costs are per sample (model_graph.hpp units).
//       A repeat group is one level deep; each repetition is one block (Layer::block, numbered
//       in order over the whole model) and its layer names get the suffix ".<repetition>".
//       Layers outside groups have block -1. Layer names must be unique in the model.
//
// Every error is a ConfigError naming file, line, column and key path (workload.model.layers[2]
// .kind), the bad value and what is allowed.
#pragma once

#include <string>
#include <vector>

#include "experiment/yaml_reader.hpp"
#include "models/model_graph.hpp"
#include "models/zoo.hpp"

namespace dlsim::experiment {

// workload.attention and a defined transformer's attention: "auto" (the default), "unfused",
// "flash" (FlashAttention-2), "flash-triton" (its Triton kernel), "flash3" (FlashAttention-3, Hopper).
inline const std::vector<std::string> kAttentionChoices{"auto", "unfused", "flash", "flash-triton", "flash3"};

// Reads workload.model when it is a mapping: a user-defined model. Calls model.finish().
// Throws ConfigError.
// With `transformer_sizes`, a transformer definition's sizes are stored there, and with
// `attention` its attention setting (kAttentionChoices; the graph is built unfused
// for "auto": the caller, which knows the device, rebuilds it).
models::ModelGraph read_model_definition(MapReader& model, models::DecoderConfig* transformer_sizes = nullptr,
                                         std::string* attention = nullptr);

}  // namespace dlsim::experiment
