// Collective scenarios: for each node count and message size, every group runs the collective
// at the same time on one fabric, then each group alone; the ratio is what sharing costs.
#include <algorithm>
#include <stdexcept>

#include "experiment/results.hpp"
#include "network/collectives.hpp"
#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "network/topology_builders.hpp"
#include "sim/engine.hpp"

namespace dlsim::experiment {
namespace {

network::CollectiveSpec spec_for(const CollectiveConfig& c, double bytes, std::vector<network::VertexId> ranks) {
  network::CollectiveSpec spec;
  spec.kind = c.operation;
  spec.algorithm = c.algorithm;
  spec.protocol = c.protocol;
  spec.bytes = bytes;
  spec.ranks = std::move(ranks);
  spec.server_shards = c.server_shards;
  return spec;
}

// All groups at once on one engine and one flow network.
std::vector<network::CollectiveResult> run_together(const network::Topology& topology,
                                                    const std::vector<network::CollectiveSpec>& specs) {
  sim::Engine engine;
  network::Routing routing(topology);
  network::FlowNetwork flows(engine, topology);
  network::Collectives collectives(engine, flows, routing, topology);
  std::vector<network::CollectiveResult> results(specs.size());
  for (std::size_t g = 0; g < specs.size(); ++g) {
    collectives.start(specs[g], [&results, g](const network::CollectiveResult& r) { results[g] = r; });
  }
  engine.run();
  return results;
}

}  // namespace

std::vector<std::vector<network::VertexId>> Scenario::collective_groups(const network::Topology& topology, int nodes) const {
  const CollectiveConfig& c = *collective;
  const int per_node = cluster.instance.accelerators_per_node;
  const int taking_part = c.ranks_per_node > 0 ? std::min(c.ranks_per_node, per_node) : per_node;
  std::vector<std::vector<network::VertexId>> groups(static_cast<std::size_t>(c.groups));
  for (int n = 0; n < nodes; ++n) {
    // Packed: consecutive blocks of nodes; interleaved: round robin, so groups share leaves.
    const int g = c.interleaved ? n % c.groups : static_cast<int>(static_cast<long>(n) * c.groups / nodes);
    for (int local = 0; local < taking_part; ++local) {
      groups[static_cast<std::size_t>(g)].push_back(topology.accelerators().at(static_cast<std::size_t>(n * per_node + local)));
    }
  }
  return groups;
}

std::vector<CollectiveRow> run_collectives(const Scenario& s, const sim::InterruptFlag* interrupt) {
  const CollectiveConfig& c = *s.collective;
  std::vector<CollectiveRow> rows;
  for (int nodes : s.node_counts()) {
    const network::Topology topology = s.topology_for(nodes);
    const auto groups = s.collective_groups(topology, nodes);
    for (double bytes : c.sizes) {
      sim::check_interrupt(interrupt);
      std::vector<network::CollectiveSpec> specs;
      for (const auto& ranks : groups) specs.push_back(spec_for(c, bytes, ranks));
      const auto together = run_together(topology, specs);
      for (std::size_t g = 0; g < groups.size(); ++g) {
        const double alone = groups.size() == 1 ? together[g].time_s : network::run_collective(topology, specs[g]).time_s;
        CollectiveRow row;
        row.nodes = nodes;
        row.group = static_cast<int>(g);
        row.groups = c.groups;
        row.ranks = static_cast<int>(groups[g].size());
        row.operation = network::to_string(c.operation);
        row.algorithm = network::to_string(together[g].algorithm);
        row.protocol = network::to_string(together[g].protocol);
        row.bytes = bytes;
        row.time_s = together[g].time_s;
        row.algbw = together[g].algbw;
        row.busbw = together[g].busbw;
        row.time_alone_s = alone;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

}  // namespace dlsim::experiment
