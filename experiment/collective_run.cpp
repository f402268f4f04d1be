// Collective scenarios: for each node count and message size, every group runs the collective
// at the same time on one fabric, then each group alone; the ratio is what sharing costs. Each
// group also runs alone under the balanced reference routing (network/routing.hpp): the ratio
// of its time alone to that is what the fabric's routing (ECMP's hash collisions) costs.
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

// Groups' collectives at once on one engine, flow network and routing of `scheme`.
struct Together {
  std::vector<network::CollectiveResult> results;
  network::Routing::SharedLink shared;  // the most shared switch-to-switch link of all their routes
};
Together run_together(const network::Topology& topology, const std::vector<network::CollectiveSpec>& specs,
                      network::RoutingScheme scheme) {
  sim::Engine engine;
  network::Routing routing(topology, scheme);
  network::FlowNetwork flows(engine, topology);
  network::Collectives collectives(engine, flows, routing, topology);
  Together out;
  out.results.resize(specs.size());
  for (std::size_t g = 0; g < specs.size(); ++g) {
    collectives.start(specs[g], [&out, g](const network::CollectiveResult& r) { out.results[g] = r; });
  }
  engine.run();
  out.shared = routing.most_shared_link();
  return out;
}

std::string link_name(const network::Topology& t, const network::Routing::SharedLink& shared) {
  if (shared.routes == 0) return "";
  const network::LinkInfo& l = t.link(shared.link);
  return t.vertex(l.from).name + "->" + t.vertex(l.to).name;
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
    const network::RoutingScheme scheme = topology.routing();
    // One switch offers no choice of path: its reference is itself.
    const bool has_choices = s.network.custom || s.network.fabric.kind != network::FabricKind::single_switch;
    const auto groups = s.collective_groups(topology, nodes);
    for (double bytes : c.sizes) {
      sim::check_interrupt(interrupt);
      std::vector<network::CollectiveSpec> specs;
      for (const auto& ranks : groups) specs.push_back(spec_for(c, bytes, ranks));
      const Together together = run_together(topology, specs, scheme);
      for (std::size_t g = 0; g < groups.size(); ++g) {
        const Together alone = groups.size() == 1 ? together : run_together(topology, {specs[g]}, scheme);
        const double alone_s = alone.results[0].time_s;
        const double balanced_s = has_choices && scheme != network::RoutingScheme::balanced
                                      ? run_together(topology, {specs[g]}, network::RoutingScheme::balanced).results[0].time_s
                                      : alone_s;
        const network::CollectiveResult& r = together.results[g];
        CollectiveRow row;
        row.nodes = nodes;
        row.group = static_cast<int>(g);
        row.groups = c.groups;
        row.ranks = static_cast<int>(groups[g].size());
        row.operation = network::to_string(c.operation);
        row.algorithm = network::to_string(r.algorithm);
        row.protocol = network::to_string(r.protocol);
        row.channels = r.channels;
        row.bytes = bytes;
        row.time_s = r.time_s;
        row.algbw = r.algbw;
        row.busbw = r.busbw;
        row.time_alone_s = alone_s;
        row.routing = network::to_string(scheme);
        row.time_balanced_s = balanced_s;
        row.shared_link = link_name(topology, alone.shared);
        row.shared_link_routes = alone.shared.routes;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

}  // namespace dlsim::experiment
