#include "experiment/collective_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::experiment {
namespace {

const std::vector<std::string> kOperations{"all-reduce", "reduce-scatter", "all-gather", "broadcast",
                                           "reduce",     "all-to-all",     "send-recv",  "push-pull"};
const std::vector<std::string> kAlgorithms{"auto",   "ring",   "double-binary-tree", "hierarchical", "halving-doubling",
                                           "direct", "parameter-server", "nvls", "collnet", "torus"};
const std::vector<std::string> kProtocols{"auto", "simple", "ll", "ll128"};
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

network::Protocol protocol_of(const std::string& s) {
  return static_cast<network::Protocol>(std::find(kProtocols.begin(), kProtocols.end(), s) - kProtocols.begin());
}

}  // namespace

CollectiveConfig read_collective(MapReader& r) {
  CollectiveConfig c;
  c.operation = operation_of(r.choice("operation", kOperations, "all-reduce"));
  c.algorithm = algorithm_of(r.choice("algorithm", kAlgorithms, "auto"));
  c.protocol = protocol_of(r.choice("protocol", kProtocols, "auto"));
  c.sizes = read_sizes(r);
  c.ranks_per_node = static_cast<int>(r.integer("ranks_per_node", 0, 64, 0));
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
  const int per_node = c.ranks_per_node > 0 ? c.ranks_per_node : s.cluster.instance.accelerators_per_node;
  if (c.ranks_per_node > s.cluster.instance.accelerators_per_node) {
    fail("ranks_per_node", std::to_string(c.ranks_per_node) + " ranks per node, but the instance has " +
                               std::to_string(s.cluster.instance.accelerators_per_node) + " accelerators per node");
  }
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
  if ((c.algorithm == network::Algorithm::nvls || c.algorithm == network::Algorithm::collnet) &&
      c.operation != network::CollectiveKind::all_reduce) {
    fail("algorithm", network::to_string(c.algorithm) + " applies to all-reduce only");
  }
  // What the fabric can run (NVLS, SHARP, LL128 need hardware): ask the network layer, which
  // gives the reason, at the key that forced the choice.
  if (c.algorithm == network::Algorithm::automatic && c.protocol == network::Protocol::automatic) return;
  const std::string key = c.protocol != network::Protocol::automatic && c.algorithm == network::Algorithm::automatic
                              ? "protocol" : "algorithm";
  for (int nodes : s.node_counts()) {
    const network::Topology topology = s.topology_for(nodes);
    for (const auto& ranks : s.collective_groups(topology, nodes)) {
      if (ranks.size() < 2) continue;
      network::CollectiveSpec spec;
      spec.kind = c.operation;
      spec.algorithm = c.algorithm;
      spec.protocol = c.protocol;
      spec.ranks = ranks;
      spec.server_shards = c.server_shards;
      for (double bytes : {c.sizes.front(), c.sizes.back()}) {
        spec.bytes = bytes;
        try {
          network::resolve_collective(topology, spec);
        } catch (const std::invalid_argument& e) {
          fail(key, std::string("cannot run on this fabric (") + std::to_string(nodes) + " nodes): " + e.what());
        }
      }
    }
  }
}

}  // namespace dlsim::experiment
