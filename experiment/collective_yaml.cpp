#include "experiment/collective_yaml.hpp"

#include <algorithm>
#include <cmath>

namespace dlsim::experiment {
namespace {

const std::vector<std::string> kOperations{"all-reduce", "reduce-scatter", "all-gather", "broadcast",
                                           "reduce",     "all-to-all",     "send-recv",  "push-pull"};
const std::vector<std::string> kAlgorithms{"auto",   "ring",   "double-binary-tree", "hierarchical",
                                           "halving-doubling", "direct", "parameter-server"};
constexpr double kMaxMessage = 1e13;  // 10 TB per rank
constexpr std::size_t kMaxSizes = 200;

std::vector<double> read_sizes(MapReader& r) {
  const YAML::Node node = r.node("sizes");
  if (!node.IsDefined() || node.IsNull()) r.fail_missing("sizes", "message sizes: [1MiB, 1GiB] or {from: 8B, to: 1GiB, factor: 2}");
  std::vector<double> sizes;
  if (node.IsSequence()) {
    if (node.size() == 0 || node.size() > kMaxSizes) r.fail("sizes", "expected 1 to 200 message sizes");
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string path = r.path_of("sizes") + "[" + std::to_string(i) + "]";
      std::string why;
      const auto v = node[i].IsScalar() ? parse_quantity(node[i].Scalar(), Dimension::size, why) : std::nullopt;
      if (!v || *v < 1 || *v > kMaxMessage) {
        throw ConfigError(r.source().locate(node[i], path), path,
                          "expected a message size from 1B to 10TB, e.g. 64MiB" + (why.empty() ? "" : ": " + why));
      }
      sizes.push_back(*v);
    }
    return sizes;
  }
  MapReader range(node, r.path_of("sizes"), r.source());
  const double from = range.quantity("from", Dimension::size, 1, kMaxMessage);
  const double to = range.quantity("to", Dimension::size, from, kMaxMessage);
  const double factor = range.number("factor", 1.0001, 1024, 2);
  range.finish();
  for (double s = from; s <= to * (1 + 1e-12); s *= factor) sizes.push_back(std::round(s));
  if (sizes.size() > kMaxSizes) r.fail("sizes", "the range gives more than 200 sizes: use a larger factor");
  return sizes;
}

network::CollectiveKind operation_of(const std::string& s) {
  return static_cast<network::CollectiveKind>(std::find(kOperations.begin(), kOperations.end(), s) - kOperations.begin());
}

network::Algorithm algorithm_of(const std::string& s) {
  return static_cast<network::Algorithm>(std::find(kAlgorithms.begin(), kAlgorithms.end(), s) - kAlgorithms.begin());
}

}  // namespace

CollectiveConfig read_collective(MapReader& r) {
  CollectiveConfig c;
  c.operation = operation_of(r.choice("operation", kOperations, "all-reduce"));
  c.algorithm = algorithm_of(r.choice("algorithm", kAlgorithms, "auto"));
  c.sizes = read_sizes(r);
  c.groups = static_cast<int>(r.integer("groups", 1, 1024, 1));
  c.interleaved = r.choice("placement", {"packed", "interleaved"}, "packed") == "interleaved";
  c.server_shards = static_cast<int>(r.integer("server_shards", 1, 1024, 1));
  r.finish();
  return c;
}

void check_collective(const Scenario& s, const YAML::Node& root, const Source& source) {
  const CollectiveConfig& c = *s.collective;
  const YAML::Node section = root["collective"];
  const auto fail = [&](const std::string& key, const std::string& why) {
    const YAML::Node n = section[key];
    throw ConfigError(source.locate(n.IsDefined() ? n : section, "collective." + key), "collective." + key, why);
  };
  const int per_node = s.cluster.instance.accelerators_per_node;
  for (int nodes : s.node_counts()) {
    if (c.groups > nodes) fail("groups", std::to_string(c.groups) + " groups need at least as many nodes; " + std::to_string(nodes) + " given");
    const int smallest_group = nodes / c.groups * per_node;
    const std::string at = " (" + std::to_string(nodes) + " nodes, " + std::to_string(c.groups) + " group(s))";
    if (c.operation == network::CollectiveKind::send_recv && smallest_group < 2) fail("operation", "send-recv needs 2 ranks per group" + at);
    if (c.operation == network::CollectiveKind::push_pull && c.server_shards >= smallest_group) {
      fail("server_shards", "push-pull needs more ranks than server shards" + at);
    }
  }
  const bool all_reduce_only = c.algorithm == network::Algorithm::double_binary_tree ||
                               c.algorithm == network::Algorithm::halving_doubling ||
                               c.algorithm == network::Algorithm::hierarchical;
  if (all_reduce_only && c.operation != network::CollectiveKind::all_reduce &&
      !(c.algorithm == network::Algorithm::hierarchical && c.operation == network::CollectiveKind::all_to_all)) {
    fail("algorithm", network::to_string(c.algorithm) + " applies to all-reduce only");
  }
  if (c.algorithm == network::Algorithm::parameter_server && c.operation != network::CollectiveKind::push_pull) {
    fail("algorithm", "parameter-server applies to push-pull only");
  }
  if (c.algorithm == network::Algorithm::direct && c.operation != network::CollectiveKind::all_to_all &&
      c.operation != network::CollectiveKind::send_recv) {
    fail("algorithm", "direct applies to all-to-all and send-recv only");
  }
}

}  // namespace dlsim::experiment
