#include "experiment/network_yaml.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "network/ici.hpp"
#include "network/link_tech.hpp"

namespace dlsim::experiment {
namespace {

constexpr double kMaxBandwidth = 1e15;
constexpr double kMaxLatency = 10.0;
constexpr double kPcieHopLatency = 0.5e-6;   // accelerator to NIC through the host: an assumption
constexpr double kSwitchLinkLatency = 1e-6;  // one switch-to-switch hop: an assumption

const std::vector<std::string> kNodeKinds{"nvswitch", "hybrid-cube-mesh", "pcie", "tpu-board", "nvlink-pairs"};
const std::vector<std::string> kFabricKinds{"single-switch", "leaf-spine", "fat-tree", "rail-optimized", "torus", "wan"};
const std::vector<std::string> kRouting{"d-mod-k", "ecmp"};
const std::vector<std::string> kAllReduce{"auto", "ring", "double-binary-tree", "hierarchical", "halving-doubling", "nvls", "collnet", "torus"};

// NVLink SHARP's reduction bandwidth per GPU port, as a fraction of the GPU's achievable NVLink
// bandwidth: NCCL's NVLS algorithm bandwidth ratio 5/6 (src/graph/tuning.cc, NCCL 2.20.3). On
// 8 x H100 it gives busbw 481 GB/s against 479-480 measured (nccl-azure-ndh100v5-allreduce-8g,
// nccl-maint-h100-nvls), held out.
constexpr double kNvlsFraction = 5.0 / 6.0;

network::NodeKind node_kind(const std::string& s) {
  if (s == "hybrid-cube-mesh") return network::NodeKind::hybrid_cube_mesh;
  if (s == "pcie") return network::NodeKind::pcie;
  if (s == "tpu-board") return network::NodeKind::tpu_board;
  if (s == "nvlink-pairs") return network::NodeKind::nvlink_pairs;
  return network::NodeKind::nvswitch;
}

// NCCL's compute-capability class of a GPU generation (0: does not run NCCL). Blackwell (sm_100)
// takes NCCL's Hopper rows of latencies and bandwidth factors (nccl_tuning.cpp has no newer row);
// AMD's MI300X runs RCCL, a fork of NCCL with its own tuning that dlsim does not model: its
// collectives are ideal phases at the links' line rate, optimistic (docs/validation.md). So are
// those of AWS's Trainium chips, which run Neuron's collectives on their own CC-cores, not NCCL.
int compute_capability(models::Generation g) {
  switch (g) {
    case models::Generation::kepler: return 37;
    case models::Generation::pascal: return 60;
    case models::Generation::volta: return 70;
    case models::Generation::turing: return 75;
    case models::Generation::ampere: return 80;
    case models::Generation::ada: return 89;
    case models::Generation::hopper: return 90;
    case models::Generation::blackwell: return 100;
    default: return 0;
  }
}

bool nvlink_node(network::NodeKind k) {
  return k == network::NodeKind::nvswitch || k == network::NodeKind::hybrid_cube_mesh || k == network::NodeKind::nvlink_pairs;
}

// The technology of the node's accelerator links, from its design and GPU generation.
network::LinkTech link_tech_of(network::NodeKind kind, int cc, double link_bandwidth) {
  if (nvlink_node(kind)) return network::nvlink_of(cc);
  if (kind == network::NodeKind::pcie) return network::pcie_of(link_bandwidth);
  return network::LinkTech::ici;  // tpu_board
}

// NVSwitch-3 and its successor in Blackwell systems (H100/H200 and B200/GB200 NVSwitch nodes) reduce
// in the switch.
bool nvls_capable(const network::NodeSpec& node, int cc) { return node.kind == network::NodeKind::nvswitch && cc >= 90; }

std::string node_kind_name(network::NodeKind k) { return kNodeKinds[static_cast<int>(k)]; }

network::FabricKind fabric_kind(const std::string& s) {
  return static_cast<network::FabricKind>(std::find(kFabricKinds.begin(), kFabricKinds.end(), s) - kFabricKinds.begin());
}

network::Algorithm algorithm(const std::string& s) {
  if (s == "ring") return network::Algorithm::ring;
  if (s == "double-binary-tree") return network::Algorithm::double_binary_tree;
  if (s == "hierarchical") return network::Algorithm::hierarchical;
  if (s == "halving-doubling") return network::Algorithm::halving_doubling;
  if (s == "nvls") return network::Algorithm::nvls;
  if (s == "collnet") return network::Algorithm::collnet;
  if (s == "torus") return network::Algorithm::torus;
  return network::Algorithm::automatic;
}

// Link units an accelerator's intra-node bandwidth is spread over: a cube-mesh V100/P100 has 6
// NVLinks, the builder's link unit (dgx1v-topology); a TPU chip its generation's ICI links
// (network/ici.hpp: 4 or 6), of which a host board uses some; other node kinds carry it on one.
double link_units(network::NodeKind kind, network::IciGeneration ici) {
  if (kind == network::NodeKind::hybrid_cube_mesh) return 6.0;
  if (kind == network::NodeKind::tpu_board && ici != network::IciGeneration::none) {
    return network::ici_spec(ici).links_per_chip;
  }
  return 1.0;
}

// network.node. The accelerators' generation (node.nccl_compute_capability, from the device)
// sets the NVLink generation; nvls defaults to what the node can do.
void read_node(MapReader& r, network::NodeSpec& node, int cc, network::IciGeneration ici) {
  const network::NodeKind instance_kind = node.kind;
  node.kind = node_kind(r.choice("kind", kNodeKinds, node_kind_name(node.kind)));
  // Without an explicit link figure the accelerator's total intra-node bandwidth is kept.
  const double link_default = node.link_bandwidth * link_units(instance_kind, ici) / link_units(node.kind, ici);
  node.link_bandwidth = r.quantity("link_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, link_default);
  node.link_latency_s = r.quantity("link_latency", Dimension::duration, 0, kMaxLatency, node.link_latency_s);
  node.link_tech = link_tech_of(node.kind, cc, node.link_bandwidth);
  const double total_nic = node.nic_bandwidth * node.nics;
  node.nics = static_cast<int>(r.integer("nics", 1, node.accelerators, node.nics));
  // Without an explicit per-NIC figure, the node's total network bandwidth is kept.
  node.nic_bandwidth = r.quantity("nic_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, total_nic / node.nics);
  node.nic_latency_s = r.quantity("nic_latency", Dimension::duration, 0, kMaxLatency, node.nic_latency_s);
  node.nic_tech = *network::link_tech_from_string(r.choice("nic_tech", network::link_tech_names(), network::to_string(node.nic_tech)));
  node.pcie_bandwidth = r.quantity("pcie_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, node.pcie_bandwidth);
  node.pcie_tech = network::pcie_of(node.pcie_bandwidth);
  const bool capable = nvls_capable(node, cc);
  const bool nvls = r.boolean("nvls", capable);
  if (nvls && !capable) {
    r.fail("nvls", "NVLink SHARP needs an nvswitch node of Hopper-class or newer GPUs (NVSwitch-3 and -4: H100, H200, "
                   "H800, H20, B200, GB200); this "
                   "node is " + node_kind_name(node.kind) + (cc > 0 ? " with compute capability " + std::to_string(cc) : ""));
  }
  node.nvls_bandwidth = nvls ? nvls_bandwidth_of(node) : 0.0;
  r.finish();
}

// network.fabric.dims, .wrap: lists of 2 or 3 entries.
std::vector<int> read_dims(MapReader& r) {
  const YAML::Node dims = r.node("dims");
  std::vector<int> out;
  if (!dims.IsSequence() || dims.size() < 2 || dims.size() > 3) r.fail("dims", "expected 2 or 3 torus sizes, e.g. [16, 16]");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    out.push_back(static_cast<int>(parse_integer(dims[i], r.path_of("dims") + "[" + std::to_string(i) + "]", r.source(), 1, 4096)));
  }
  return out;
}

std::vector<bool> read_wrap(MapReader& r) {
  const YAML::Node wrap = r.node("wrap");
  std::vector<bool> out;
  if (!wrap.IsSequence() || wrap.size() < 2 || wrap.size() > 3) {
    r.fail("wrap", "expected one flag per torus axis, e.g. [true, true, false]");
  }
  for (std::size_t i = 0; i < wrap.size(); ++i) {
    bool v = false;
    if (!wrap[i].IsScalar() || !YAML::convert<bool>::decode(wrap[i], v)) {
      const std::string path = r.path_of("wrap") + "[" + std::to_string(i) + "]";
      throw ConfigError(r.source().locate(wrap[i], path), path, "expected true or false (whether the axis wraps around)");
    }
    out.push_back(v);
  }
  return out;
}

void read_fabric(MapReader& r, NetworkConfig& net) {
  network::FabricSpec& f = net.fabric;
  // InfiniBand SHARP: the switches reduce at their ports' achievable bandwidth.
  if (r.boolean("sharp", false)) {
    const bool infiniband = net.node.nic_tech == network::LinkTech::ib_edr || net.node.nic_tech == network::LinkTech::ib_hdr ||
                            net.node.nic_tech == network::LinkTech::ib_ndr;
    if (!infiniband || net.node.transport == network::Transport::tcp) {
      r.fail("sharp", "SHARP reduces in InfiniBand switches: it needs network.node.nic_tech ib-edr, ib-hdr or ib-ndr and "
                      "transport rdma (the NICs are " + network::to_string(net.node.nic_tech) + ", " +
                      network::to_string(net.node.transport) + ")");
    }
    f.sharp_bandwidth = net.node.nic_bandwidth * network::achievable_fraction(net.node.nic_tech);
  }
  // A TPU slice of several hosts is one ICI torus: TPU instances default to it.
  const bool tpu = net.ici != network::IciGeneration::none;
  f.kind = fabric_kind(r.choice("kind", kFabricKinds, tpu ? "torus" : "single-switch"));
  const bool torus = f.kind == network::FabricKind::torus;
  // Unset: the kind's default (network::default_routing: d-mod-k on fat-tree and rail-optimized,
  // ecmp elsewhere).
  if (r.has("routing")) {
    f.routing = r.choice("routing", kRouting) == "ecmp" ? network::RoutingScheme::ecmp : network::RoutingScheme::d_mod_k;
    if (f.routing == network::RoutingScheme::d_mod_k &&
        (f.kind == network::FabricKind::torus || f.kind == network::FabricKind::wan)) {
      r.fail("routing", "d-mod-k needs a tree of switches (fat-tree, rail-optimized, leaf-spine, single-switch); a " +
                            kFabricKinds[static_cast<std::size_t>(f.kind)] + " routes by ecmp");
    }
  }
  // A torus's links are the chips' ICI (one link of the node's design); switch links run at the
  // NICs' figure.
  f.link_bandwidth = r.quantity("link_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth,
                                torus ? net.node.link_bandwidth : net.node.nic_bandwidth);
  f.link_latency_s = r.quantity("link_latency", Dimension::duration, 0, kMaxLatency,
                                torus ? net.node.link_latency_s : kSwitchLinkLatency);
  f.oversubscription = r.number("oversubscription", 1, 1000, 1);
  f.nodes_per_leaf = static_cast<int>(r.integer("nodes_per_leaf", 1, 100000, 16));
  f.spines = static_cast<int>(r.integer("spines", 0, 100000, 0));
  f.fat_tree_k = static_cast<int>(r.integer("k", 0, 1024, 0));
  if (f.fat_tree_k % 2 != 0) r.fail("k", "a fat-tree's k must be even (or 0 to size it to the cluster)");
  if (r.has("dims")) {
    f.dims = read_dims(r);
    net.torus_dims_given = true;
  }
  if (r.has("wrap")) {
    f.wrap = read_wrap(r);
    if (f.dims.size() != f.wrap.size() && net.torus_dims_given) {
      r.fail("wrap", "one flag per axis of fabric.dims (" + std::to_string(f.dims.size()) + ")");
    }
  }
  // Unset on a TPU slice: 0, "as many as its size needs" (shape_torus: the fewest equal pods
  // of at most the generation's pod size); any other torus is one pod.
  f.pods = static_cast<int>(r.integer("pods", 1, 1024, tpu && torus ? 0 : 1));
  for (const char* key : {"dims", "wrap", "pods"}) {
    if (r.has(key) && !torus) r.fail(key, std::string(key) + " applies to fabric kind torus only");
  }
  f.regions = static_cast<int>(r.integer("regions", 1, 1000, 1));
  f.wan_bandwidth = r.quantity("wan_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, f.wan_bandwidth);
  f.wan_latency_s = r.quantity("wan_latency", Dimension::duration, 0, kMaxLatency, f.wan_latency_s);
  r.finish();
}

}  // namespace

network::NodeSpec node_spec_for(const models::InstanceType& t, const models::DeviceSpec& device) {
  network::NodeSpec n;
  n.kind = t.node_kind;
  n.accelerators = t.accelerators_per_node;
  // The instance's intra-node figure is per accelerator in total, spread over the link units.
  n.link_bandwidth = t.intra_node_bandwidth / link_units(t.node_kind, t.ici);
  n.link_latency_s = t.intra_node_latency_s;
  n.nics = std::max(1, std::min(t.nics, t.accelerators_per_node));
  n.nic_bandwidth = t.network_bandwidth / n.nics;
  n.pcie_latency_s = kPcieHopLatency;
  n.pcie_bandwidth = device.pcie_bandwidth;
  // Split the instance's node-to-node latency so that a path through one switch adds up to it:
  // accelerator -> NIC (PCIe) -> switch -> NIC -> accelerator.
  n.nic_latency_s = std::max(0.0, (t.network_latency_s - 2 * kPcieHopLatency) / 2);
  n.nccl_compute_capability = compute_capability(device.generation);
  n.link_tech = link_tech_of(n.kind, n.nccl_compute_capability, n.link_bandwidth);
  n.pcie_tech = network::pcie_of(n.pcie_bandwidth);
  n.nic_tech = t.nic_tech;
  n.transport = t.transport;
  n.nvls_bandwidth = nvls_capable(n, n.nccl_compute_capability) ? nvls_bandwidth_of(n) : 0.0;
  return n;
}

double nvls_bandwidth_of(const network::NodeSpec& node) {
  return kNvlsFraction * node.link_bandwidth * network::achievable_fraction(node.link_tech);
}

std::vector<int> default_torus_dims(int chips) {
  int a = static_cast<int>(std::sqrt(static_cast<double>(chips)));
  while (a > 1 && chips % a != 0) --a;
  return {a, chips / a};
}

int ici_pods_for(network::IciGeneration ici, int nodes, int per_node) {
  const std::int64_t pod = network::ici_spec(ici).pod_chips();
  const std::int64_t chips = std::int64_t{nodes} * per_node;
  int pods = static_cast<int>((chips + pod - 1) / pod);
  while (nodes % pods != 0) ++pods;
  return pods;
}

void shape_torus(network::FabricSpec& f, const NetworkConfig& net, int nodes, int per_node) {
  const bool tpu = net.ici != network::IciGeneration::none;
  if (f.pods == 0) f.pods = net.torus_dims_given ? 1 : ici_pods_for(net.ici, nodes, per_node);
  const int chips = nodes * per_node / std::max(1, f.pods);
  if (!net.torus_dims_given) f.dims = tpu ? network::ici_slice_dims(net.ici, chips) : default_torus_dims(chips);
  if (!tpu) return;
  if (f.wrap.empty()) f.wrap = network::ici_wrap(net.ici, f.dims);
  // Hosts are the generation's block of chips when that block tiles the torus.
  const network::IciSpec& spec = network::ici_spec(net.ici);
  bool tiles = spec.chips_per_host() == per_node && spec.host_shape.size() == f.dims.size();
  for (std::size_t d = 0; tiles && d < f.dims.size(); ++d) tiles = f.dims[d] % spec.host_shape[d] == 0;
  f.host_shape = tiles ? spec.host_shape : std::vector<int>{};
}

void read_custom(MapReader& r, NetworkConfig& net) {
  net.custom = true;
  const YAML::Node vertices = r.node("vertices");
  const YAML::Node links = r.node("links");
  if (!vertices.IsSequence() || vertices.size() == 0) r.fail("vertices", "expected a list of vertices: {name, kind, node}");
  if (!links.IsSequence() || links.size() == 0) r.fail("links", "expected a list of links: {a, b, bandwidth, latency}");
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    MapReader v(vertices[i], r.path_of("vertices") + "[" + std::to_string(i) + "]", r.source());
    network::CustomVertex cv;
    cv.name = v.text("name");
    const std::string kind = v.choice("kind", {"accelerator", "nic", "switch"});
    cv.kind = kind == "accelerator" ? network::VertexKind::accelerator
              : kind == "nic"       ? network::VertexKind::nic
                                    : network::VertexKind::switch_;
    cv.node = static_cast<int>(v.integer("node", -1, 1'000'000, -1));
    if (cv.kind != network::VertexKind::switch_ && cv.node < 0) v.fail_missing("node", "the node (host) index of an accelerator or NIC");
    v.finish();
    net.custom_vertices.push_back(cv);
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    MapReader l(links[i], r.path_of("links") + "[" + std::to_string(i) + "]", r.source());
    network::CustomLink cl;
    cl.a = l.text("a");
    cl.b = l.text("b");
    cl.bandwidth = l.quantity("bandwidth", Dimension::bandwidth, 1, kMaxBandwidth);
    cl.latency_s = l.quantity("latency", Dimension::duration, 0, kMaxLatency, 1e-6);
    l.finish();
    net.custom_links.push_back(cl);
  }
  r.finish();
  try {
    network::build_custom(net.custom_vertices, net.custom_links);
  } catch (const std::invalid_argument& e) {
    r.fail("links", e.what());
  }
}

NetworkConfig read_network(MapReader& r, const ClusterConfig& cluster) {
  NetworkConfig net;
  if (r.has("custom")) {
    if (r.has("node") || r.has("fabric")) r.fail("custom", "a custom topology replaces network.node and network.fabric: give one or the other");
    MapReader custom(r.node("custom"), r.path_of("custom"), r.source());
    read_custom(custom, net);
  }
  net.node = node_spec_for(cluster.instance, cluster.device);
  net.ici = cluster.instance.ici;
  net.fabric.link_bandwidth = net.node.nic_bandwidth;
  net.fabric.link_latency_s = kSwitchLinkLatency;
  r.allow({"custom"});
  // How the NICs carry collectives (read first: the node's defaults do not depend on it).
  net.node.transport = r.choice("transport", {"rdma", "tcp"}, network::to_string(net.node.transport)) == "tcp"
                           ? network::Transport::tcp
                           : network::Transport::rdma;
  net.node.socket_bandwidth = r.quantity("socket_bandwidth", Dimension::bandwidth, 1, kMaxBandwidth, network::kTcpStreamBandwidth);
  if (r.has("socket_bandwidth") && net.node.transport != network::Transport::tcp) {
    r.fail("socket_bandwidth", "a TCP stream's rate applies with network.transport: tcp only");
  }
  // NCCL 2.0-2.3 (before 2018-12): one ring per NIC across nodes (network/topology_builders.hpp).
  net.node.nccl_rings_per_nic = static_cast<int>(r.integer("nccl_rings_per_nic", 1, 64, 0));
  const int cc = net.node.nccl_compute_capability;
  MapReader node(r.node("node"), r.path_of("node"), r.source(), true);
  read_node(node, net.node, cc, net.ici);
  MapReader fabric(r.node("fabric"), r.path_of("fabric"), r.source(), true);
  read_fabric(fabric, net);
  MapReader collectives(r.node("collectives"), r.path_of("collectives"), r.source(), true);
  net.all_reduce = algorithm(collectives.choice("all_reduce", kAllReduce, "auto"));
  // nccl: GPUs run NCCL's cost model (protocols, tuner, latencies); ideal: collectives are
  // ideal phases of flows at the links' achievable bandwidth (dlsim before NCCL's model).
  if (collectives.choice("library", {"nccl", "ideal"}, "nccl") == "ideal") net.node.nccl_compute_capability = 0;
  collectives.finish();
  r.finish();
  return net;
}

NetworkConfig default_network(const ClusterConfig& cluster) {
  const YAML::Node empty(YAML::NodeType::Map);
  const Source source{"<defaults>", {}};  // outlives the reader, which holds a reference
  MapReader r(empty, "network", source, true);
  return read_network(r, cluster);
}

network::Topology default_topology(const ClusterConfig& cluster, int nodes) {
  const NetworkConfig net = default_network(cluster);
  network::FabricSpec fabric = net.fabric;
  fabric.nodes = nodes;
  if (fabric.kind == network::FabricKind::torus) shape_torus(fabric, net, nodes, cluster.instance.accelerators_per_node);
  return network::build_cluster(net.node, fabric);
}

}  // namespace dlsim::experiment
