// How a collective's group looks to NCCL, and the resolution of its algorithm and protocol.
//
// NCCL's tuner reasons on the graphs its topology search found: rings inside a node with a
// bandwidth per channel, the network bandwidth per node, whether intra-node hops are NVLink,
// whether switches reduce. dlsim reads the same from the topology: the node's rings
// (ring_search.hpp) and the achievable bandwidth of the links they cross, the node's NIC links,
// the NVSwitch and fabric switches' reduction bandwidth.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "network/collectives_detail.hpp"
#include "network/nccl_tuning.hpp"
#include "network/ring_search.hpp"

namespace dlsim::network::detail {
namespace {

constexpr int kMaxChannels = 32;       // NCCL's MAXCHANNELS
constexpr double kNcclNvlinkBw = 20e9;  // per NVLink, NCCL's per-channel unit (topo.h SM70/SM80)

int compute_capability_of(const Topology& topology, const std::vector<VertexId>& ranks) {
  int cc = std::numeric_limits<int>::max();
  for (VertexId v : ranks) cc = std::min(cc, topology.vertex(v).nccl_compute_capability);
  return ranks.empty() ? 0 : cc;
}

bool runs_nccl(const Topology& topology, const std::vector<VertexId>& ranks) {
  for (VertexId v : ranks) {
    if (topology.vertex(v).nccl_compute_capability <= 0) return false;
  }
  return true;
}

double achievable_bottleneck(const Topology& topology, const Path& path) {
  double b = std::numeric_limits<double>::infinity();
  for (LinkId l : path) b = std::min(b, topology.link(l).achievable);
  return b;
}

// The links from each NIC of the accelerators `members` to the switch it attaches to.
std::vector<LinkId> nic_uplinks(const Topology& topology, const std::vector<VertexId>& members) {
  std::set<LinkId> out;
  for (VertexId a : members) {
    for (LinkId l : topology.out_links(a)) {
      const VertexId nic = topology.link(l).to;
      if (topology.vertex(nic).kind != VertexKind::nic) continue;
      for (LinkId up : topology.out_links(nic)) {
        if (topology.vertex(topology.link(up).to).kind == VertexKind::switch_) out.insert(up);
      }
    }
  }
  return {out.begin(), out.end()};
}

// The switch one NVLink hop from `v` that reduces (NVLink SHARP), or none.
std::optional<VertexId> reducing_nvswitch(const Topology& topology, VertexId v) {
  for (LinkId l : topology.out_links(v)) {
    const LinkInfo& link = topology.link(l);
    const VertexInfo& to = topology.vertex(link.to);
    if (link.kind == "nvlink" && to.kind == VertexKind::switch_ && to.reduction_bandwidth > 0) return link.to;
  }
  return std::nullopt;
}

// The switch behind the NIC `v` reaches first, when it reduces (InfiniBand SHARP), or none.
std::optional<VertexId> reducing_fabric_switch(const Topology& topology, VertexId v) {
  const std::vector<LinkId> ups = nic_uplinks(topology, {v});
  if (ups.empty()) return std::nullopt;
  const VertexId sw = topology.link(ups.front()).to;
  if (topology.vertex(sw).reduction_bandwidth > 0) return sw;
  return std::nullopt;
}

std::vector<VertexId> members_of(const Plan& plan, const std::vector<int>& group) {
  std::vector<VertexId> out;
  for (int i : group) out.push_back(plan.ranks[static_cast<std::size_t>(i)]);
  return out;
}

// Per node (nvls) or per rank (collnet), the reducing switch; empty when any is missing.
std::vector<VertexId> reducers_of(const Plan& plan, const Topology& topology, Algorithm algorithm, double& bandwidth) {
  std::vector<VertexId> out;
  bandwidth = std::numeric_limits<double>::infinity();
  const auto keep = [&](std::optional<VertexId> sw) {
    if (!sw) return false;
    out.push_back(*sw);
    bandwidth = std::min(bandwidth, topology.vertex(*sw).reduction_bandwidth);
    return true;
  };
  if (algorithm == Algorithm::nvls) {
    for (const auto& group : plan.layout.groups) {
      const auto sw = reducing_nvswitch(topology, plan.ranks[static_cast<std::size_t>(group.front())]);
      for (int i : group) {
        if (reducing_nvswitch(topology, plan.ranks[static_cast<std::size_t>(i)]) != sw) return {};
      }
      if (!keep(sw)) return {};
    }
  } else if (algorithm == Algorithm::collnet) {
    if (plan.layout.nodes() < 2) return {};
    for (VertexId v : plan.ranks) {
      if (!keep(reducing_fabric_switch(topology, v))) return {};
    }
  }
  if (out.empty()) bandwidth = 0;
  return out;
}

}  // namespace

std::vector<std::vector<int>> node_rings(const Topology& topology, const Plan& plan) {
  const Layout& layout = plan.layout;
  const int g = layout.per_node();
  std::vector<int> identity(static_cast<std::size_t>(std::max(g, 0)));
  for (int i = 0; i < g; ++i) identity[static_cast<std::size_t>(i)] = i;
  if (g < 3 || !layout.uniform) return {identity};
  const std::vector<VertexId> members = members_of(plan, layout.groups.front());
  std::vector<std::vector<double>> bw(static_cast<std::size_t>(g), std::vector<double>(static_cast<std::size_t>(g), 0));
  double smallest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < g; ++i) {
    for (LinkId l : topology.out_links(members[static_cast<std::size_t>(i)])) {
      const auto it = std::find(members.begin(), members.end(), topology.link(l).to);
      if (it == members.end()) continue;
      bw[static_cast<std::size_t>(i)][static_cast<std::size_t>(it - members.begin())] += topology.link(l).bandwidth;
      smallest = std::min(smallest, topology.link(l).bandwidth);
    }
  }
  if (!std::isfinite(smallest)) return {identity};  // no direct links: through a switch or PCIe
  std::vector<std::vector<int>> units(static_cast<std::size_t>(g), std::vector<int>(static_cast<std::size_t>(g), 0));
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) units[i][j] = static_cast<int>(std::lround(bw[i][j] / smallest));
  }
  std::vector<std::vector<int>> rings = search_rings(units);
  if (rings.empty()) return {identity};
  return rings;
}

// Intra: the rings of node 0, each limited by its most shared link (a link crossed by k ring
// hops gives each achievable / k), all carrying equal shares as the flows do: rings x the
// slowest ring. Inter: the node's NIC uplinks, each at most one capped flow per channel
// through it. Channels: NCCL's count, about one per NVLink (20 GB/s each) inside a node, two
// per NIC across nodes (S. Jeaugey, NVIDIA/nccl issue 438: "two channels per NIC").
NcclGroup nccl_group_of(const Plan& plan, const Topology& topology, Routing& routing) {
  NcclGroup g;
  g.ranks = plan.ranks_count();
  g.nodes = plan.layout.nodes();
  g.compute_capability = compute_capability_of(topology, plan.ranks);
  const std::vector<VertexId> members = members_of(plan, plan.layout.groups.front());
  const int per_node = static_cast<int>(members.size());
  g.intra_bw = std::numeric_limits<double>::infinity();
  if (per_node > 1) {
    std::vector<std::pair<LinkId, int>> usage;  // sorted by link
    std::vector<std::vector<const Path*>> hops(plan.node_rings.size());
    for (std::size_t r = 0; r < plan.node_rings.size(); ++r) {
      const auto& ring = plan.node_rings[r];
      for (std::size_t i = 0; i < ring.size(); ++i) {
        const Path& p = routing.path(members[static_cast<std::size_t>(ring[i])], members[static_cast<std::size_t>(ring[(i + 1) % ring.size()])]);
        hops[r].push_back(&p);
        for (LinkId l : p) {
          g.intra_nvlink = g.intra_nvlink && topology.link(l).kind == "nvlink";
          usage.emplace_back(l, 1);
        }
      }
    }
    std::sort(usage.begin(), usage.end());
    const auto used = [&](LinkId l) {
      const auto range = std::equal_range(usage.begin(), usage.end(), std::make_pair(l, 0),
                                          [](const auto& a, const auto& b) { return a.first < b.first; });
      return static_cast<double>(range.second - range.first);
    };
    double slowest = std::numeric_limits<double>::infinity();
    for (const auto& ring : hops) {
      for (const Path* p : ring) {
        for (LinkId l : *p) slowest = std::min(slowest, topology.link(l).achievable / used(l));
      }
    }
    g.intra_bw = slowest * static_cast<double>(plan.node_rings.size());
  }
  const std::vector<LinkId> nics = nic_uplinks(topology, members);
  if (g.nodes > 1) {
    const int channels = std::max(1, static_cast<int>(plan.node_rings.size()) * per_node);
    const double per_nic = nics.empty() ? 1.0 : static_cast<double>(channels) / static_cast<double>(nics.size());
    g.inter_bw = 0;
    for (LinkId l : nics) {
      const LinkInfo& link = topology.link(l);
      g.inter_bw += std::min(link.achievable, link.flow_cap * std::max(1.0, per_nic));
      g.gpudirect = g.gpudirect && std::isinf(link.flow_cap);
    }
    if (nics.empty()) {  // hand-built topologies: the path between the first ranks of two nodes
      const VertexId b = plan.ranks[static_cast<std::size_t>(plan.layout.groups[1].front())];
      g.inter_bw = achievable_bottleneck(topology, routing.path(members.front(), b));
    }
    if (per_node == 1) g.intra_bw = g.inter_bw;
  }
  const double raw = g.nodes == 1 ? g.intra_bw : std::min(g.intra_bw, g.inter_bw);
  const int intra_channels = g.intra_nvlink ? static_cast<int>(std::lround(raw / kNcclNvlinkBw)) : 2;
  g.channels = std::clamp(g.nodes > 1 ? 2 * std::max<int>(1, static_cast<int>(nics.size())) : intra_channels, 1, kMaxChannels);
  double bandwidth = 0;
  g.nvls = !reducers_of(plan, topology, Algorithm::nvls, bandwidth).empty();
  g.collnet = !reducers_of(plan, topology, Algorithm::collnet, bandwidth).empty();
  return g;
}

void resolve(Plan& plan, const CollectiveSpec& spec, const Topology& topology, Routing& routing) {
  plan.node_rings = node_rings(topology, plan);
  plan.algorithm = spec.algorithm;
  plan.protocol = Protocol::simple;
  const bool nccl = runs_nccl(topology, plan.ranks);
  const std::vector<Algorithm> algorithms = nccl_algorithms(plan.kind);
  const bool nccl_algorithm = spec.algorithm == Algorithm::automatic ||
                              std::find(algorithms.begin(), algorithms.end(), spec.algorithm) != algorithms.end();
  const bool tuned = nccl && plan.ranks_count() >= 2 && nccl_tunes(plan.kind) && nccl_algorithm;
  plan.nccl = nccl;
  double achieved_bandwidth = 1;  // of the tuned pair (nccl_achieved)
  if (tuned) {
    const NcclGroup group = nccl_group_of(plan, topology, routing);
    const NcclChoice choice = nccl_choose(plan.kind, plan.bytes, group, spec.algorithm, spec.protocol);
    plan.algorithm = choice.algorithm;
    plan.protocol = choice.protocol;
    plan.channels = nccl_channels(choice.algorithm, group);
    const NcclAchieved achieved = nccl_achieved(plan.kind, choice.algorithm, choice.protocol, group, plan.bytes);
    const double launch = nccl_launch_overhead_s(group.compute_capability);
    achieved_bandwidth = achieved.bandwidth;
    plan.wire = 1.0 / (choice.cost.fraction * achieved.bandwidth);
    plan.latency_s = launch + (choice.cost.latency_s - launch) * achieved.latency;
  } else {
    if (spec.protocol != Protocol::automatic && spec.protocol != Protocol::simple) {
      throw std::invalid_argument("protocol " + to_string(spec.protocol) + " applies to NCCL's " + to_string(plan.kind) +
                                  " algorithms only (ring, double-binary-tree, nvls, collnet), on GPUs that run NCCL");
    }
    // A box of a torus fabric's chips (TPU slices and pods) runs the torus collectives.
    const bool torus_kind = plan.kind == CollectiveKind::all_reduce || plan.kind == CollectiveKind::reduce_scatter ||
                            plan.kind == CollectiveKind::all_gather;
    if (torus_kind && (plan.algorithm == Algorithm::automatic || plan.algorithm == Algorithm::torus)) {
      plan.torus = torus_plan_of(topology, plan.ranks);
      if (plan.torus && plan.algorithm == Algorithm::automatic) plan.algorithm = Algorithm::torus;
    }
    if (plan.algorithm == Algorithm::automatic) {
      plan.algorithm = choose_algorithm(plan.kind, plan.bytes, plan.ranks_count(), plan.layout.nodes());
      // choose_algorithm sees only counts; uneven nodes cannot be split hierarchically.
      if (plan.algorithm == Algorithm::hierarchical && !plan.layout.uniform) {
        plan.algorithm = plan.kind == CollectiveKind::all_to_all ? Algorithm::direct : Algorithm::ring;
      }
    }
    if (nccl) {
      const int cc = compute_capability_of(topology, plan.ranks);
      plan.launch_s = plan.kind == CollectiveKind::send_recv ? nccl_p2p_overhead_s(cc, plan.layout.nodes() > 1)
                                                             : nccl_launch_overhead_s(cc);
    }
  }
  if (plan.algorithm == Algorithm::nvls || plan.algorithm == Algorithm::collnet) {
    plan.reducers = reducers_of(plan, topology, plan.algorithm, plan.reduction_bw);
    // The switch reduces only as fast as the protocol feeds it (NVLS's chunks, nccl_achieved):
    // the cap scales with the links' share, not only the wire bytes.
    plan.reduction_bw *= achieved_bandwidth;
    if (plan.reducers.empty()) {
      throw std::invalid_argument(plan.algorithm == Algorithm::nvls
                                      ? "nvls needs an NVSwitch that reduces (NVLink SHARP) under every rank"
                                      : "collnet needs several nodes whose NICs attach to switches that reduce (SHARP)");
    }
  }
}

}  // namespace dlsim::network::detail
