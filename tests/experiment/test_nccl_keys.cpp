// The scenario keys of NCCL's model: link technologies and transport from the instance,
// network.transport, network.node.nvls, network.fabric.sharp, collective.protocol and
// collective.algorithm nvls/collnet; errors located at file, line and key path with the reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "network/link_tech.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

using test::error_loading;
using test::position_of;

std::string collective_on(const std::string& instance, const std::string& network = "", const std::string& collective = "",
                          int nodes = 1) {
  return "cluster:\n  instance: " + instance + "\n  nodes: " + std::to_string(nodes) + "\n" + network +
         "collective:\n  sizes: [1KiB, 1GiB]\n" + collective;
}

Scenario load(const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_scenario_text(text, "nccl.yaml", sets);
}

void expect_at(const ConfigError& e, const std::string& text, const std::string& needle, const std::string& key,
               const std::string& says) {
  const auto [line, column] = position_of(text, needle);
  EXPECT_EQ(e.where().line, line) << e.what();
  EXPECT_EQ(e.where().column, column) << e.what();
  EXPECT_EQ(e.key_path(), key) << e.what();
  EXPECT_NE(e.message().find(says), std::string::npos) << e.what();
}

TEST(NcclKeys, InstancesSayWhatTheirLinksAre) {
  const Scenario h = load(collective_on("azure/Standard_ND96isr_H100_v5"));
  EXPECT_EQ(h.network.node.link_tech, network::LinkTech::nvlink4);
  EXPECT_EQ(h.network.node.nic_tech, network::LinkTech::ib_ndr);
  EXPECT_EQ(h.network.node.transport, network::Transport::rdma);
  EXPECT_EQ(h.network.node.nccl_compute_capability, 90);
  EXPECT_GT(h.network.node.nvls_bandwidth, 0);  // NVSwitch-3: NVLink SHARP
  const Scenario a = load(collective_on("aws/p4d.24xlarge"));
  EXPECT_EQ(a.network.node.link_tech, network::LinkTech::nvlink3);
  EXPECT_EQ(a.network.node.nic_tech, network::LinkTech::efa);
  EXPECT_DOUBLE_EQ(a.network.node.nvls_bandwidth, 0);  // NVSwitch-2 does not reduce
  const Scenario g = load(collective_on("aws/g5.12xlarge"));
  EXPECT_EQ(g.network.node.link_tech, network::LinkTech::pcie4);
  EXPECT_EQ(g.network.node.transport, network::Transport::tcp);
}

// Trainium chips run Neuron's collectives, not NCCL: ideal phases over their NeuronLinks (the
// chip's per-direction figure; trn1n's doubled), across nodes over EFA, and the results say so.
TEST(NcclKeys, TrainiumNodesRunIdealCollectivesAndSaySo) {
  const Scenario t = load(collective_on("aws/trn1.32xlarge", "", "", 2));
  EXPECT_EQ(t.network.node.nccl_compute_capability, 0);
  EXPECT_DOUBLE_EQ(t.network.node.nvls_bandwidth, 0);
  EXPECT_DOUBLE_EQ(t.network.node.link_bandwidth, 192.0 * (1 << 30));
  EXPECT_EQ(t.network.node.accelerators, 16);
  EXPECT_EQ(t.network.node.nics, 8);
  EXPECT_EQ(t.network.node.nic_tech, network::LinkTech::efa);
  EXPECT_NE(t.cluster.accuracy_note.find("Neuron's collectives are not modelled"), std::string::npos) << t.cluster.accuracy_note;
  const Scenario n = load(collective_on("aws/trn1n.32xlarge"));
  EXPECT_DOUBLE_EQ(n.network.node.link_bandwidth, 2 * t.network.node.link_bandwidth);
  // A whole-node 1 GiB all-reduce: 2 x 15/16 GiB through each chip's 192 GiB/s, ideal.
  const Results one = run(load(collective_on("aws/trn1.32xlarge")));
  ASSERT_EQ(one.collective_rows.size(), 2u);
  EXPECT_EQ(one.collective_rows[1].ranks, 16);
  EXPECT_GT(one.collective_rows[1].time_s, 2 * 15.0 / 16 / 192);
  EXPECT_LT(one.collective_rows[1].time_s, 1.2 * 2 * 15.0 / 16 / 192);
}

// The catalog's newer systems: Blackwell nodes run NVLink 5 at NCCL's SM100 per-link figure (40.1
// of 50 GB/s) and reduce in their NVLink switches, the GB200 NVL72 rack is one 72-GPU NVLink node,
// an MI300X platform runs RCCL, which is not modelled (ideal collectives, no NVLS), and g6e's L40S
// talk over PCIe Gen4.
TEST(NcclKeys, NewerSystemsSayWhatTheirLinksAre) {
  const Scenario b = load(collective_on("nvidia/dgx-b200"));
  EXPECT_EQ(b.network.node.link_tech, network::LinkTech::nvlink5);
  EXPECT_DOUBLE_EQ(network::achievable_fraction(network::LinkTech::nvlink5), 40.1 / 50.0);
  EXPECT_EQ(b.network.node.nccl_compute_capability, 100);
  EXPECT_DOUBLE_EQ(b.network.node.link_bandwidth, 900e9);
  EXPECT_GT(b.network.node.nvls_bandwidth, 0);
  const Scenario r = load(collective_on("nvidia/gb200-nvl72"));
  EXPECT_EQ(r.network.node.accelerators, 72);
  EXPECT_EQ(r.network.node.nics, 72);
  EXPECT_GT(r.network.node.nvls_bandwidth, 0);
  const Results rack = run(r);
  ASSERT_EQ(rack.collective_rows.size(), 2u);
  EXPECT_EQ(rack.collective_rows[1].ranks, 72);
  EXPECT_EQ(rack.collective_rows[1].algorithm, "nvls");  // 1 GiB inside one NVLink domain
  const Scenario m = load(collective_on("amd/instinct-mi300x-platform"));
  EXPECT_EQ(m.network.node.nccl_compute_capability, 0);
  EXPECT_DOUBLE_EQ(m.network.node.nvls_bandwidth, 0);
  EXPECT_DOUBLE_EQ(m.network.node.link_bandwidth, 448e9);  // 7 Infinity Fabric links of 64 GB/s each way
  // Its ideal collectives make the prediction a bound, which the results say (HDF5, Python), not
  // only the command line; an NVIDIA device's carry no such note.
  EXPECT_NE(m.cluster.accuracy_note.find("RCCL is not modelled"), std::string::npos);
  const std::string resolved = run(m).resolved_yaml;
  EXPECT_NE(resolved.find("note: \"MI300X collectives run as ideal phases"), std::string::npos) << resolved;
  EXPECT_TRUE(r.cluster.accuracy_note.empty());
  const Scenario l = load(collective_on("aws/g6e.48xlarge"));
  EXPECT_EQ(l.network.node.link_tech, network::LinkTech::pcie4);
  EXPECT_EQ(l.network.node.nic_tech, network::LinkTech::efa);
  // NVLS needs a switch of Hopper-class or newer GPUs: asked for on the MI300X platform, refused.
  const std::string asked = collective_on("amd/instinct-mi300x-platform", "network:\n  node: {nvls: true}\n");
  const ConfigError e = error_loading(asked, "nccl.yaml");
  EXPECT_EQ(e.key_path(), "network.node.nvls") << e.what();
}

TEST(NcclKeys, CollectiveRowsNameTheProtocolAndScenariosForceIt) {
  const Scenario s = load(collective_on("aws/p4d.24xlarge"));
  const Results r = run(s);
  ASSERT_EQ(r.collective_rows.size(), 2u);
  EXPECT_EQ(r.collective_rows[0].protocol, "ll");
  EXPECT_EQ(r.collective_rows[1].protocol, "simple");
  const Scenario forced = load(collective_on("aws/p4d.24xlarge", "", "  protocol: ll128\n  algorithm: ring\n"));
  EXPECT_EQ(forced.collective->protocol, network::Protocol::ll128);
  for (const CollectiveRow& row : run(forced).collective_rows) {
    EXPECT_EQ(row.protocol, "ll128");
    EXPECT_EQ(row.algorithm, "ring");
  }
}

TEST(NcclKeys, NvlsCanBeTurnedOffAndIsRefusedWhereTheSwitchCannotReduce) {
  const Scenario off = load(collective_on("azure/Standard_ND96isr_H100_v5", "network:\n  node: {nvls: false}\n"));
  EXPECT_DOUBLE_EQ(off.network.node.nvls_bandwidth, 0);
  for (const CollectiveRow& row : run(off).collective_rows) EXPECT_NE(row.algorithm, "nvls");
  const Scenario on = load(collective_on("azure/Standard_ND96isr_H100_v5"));
  EXPECT_EQ(run(on).collective_rows[1].algorithm, "nvls");

  const std::string text = collective_on("aws/p4d.24xlarge", "network:\n  node: {nvls: true}\n");
  expect_at(error_loading(text), text, "true", "network.node.nvls", "NVSwitch-3");
}

TEST(NcclKeys, ForcedAlgorithmsTheFabricCannotRunAreLocatedWithTheReason) {
  const std::string nvls = collective_on("aws/p4d.24xlarge", "", "  algorithm: nvls\n");
  expect_at(error_loading(nvls), nvls, "nvls", "collective.algorithm", "NVLink SHARP");
  const std::string collnet = collective_on("azure/Standard_ND96amsr_A100_v4", "", "  algorithm: collnet\n", 2);
  expect_at(error_loading(collnet), collnet, "collnet", "collective.algorithm", "SHARP");
  // With SHARP on the InfiniBand fabric it runs.
  const Scenario sharp = load(collective_on("azure/Standard_ND96amsr_A100_v4", "network:\n  fabric: {sharp: true}\n",
                                            "  algorithm: collnet\n", 2));
  EXPECT_GT(sharp.network.fabric.sharp_bandwidth, 0);
  EXPECT_EQ(run(sharp).collective_rows[1].algorithm, "collnet");
  // LL128 needs NVLink: not on a PCIe instance.
  const std::string ll128 = collective_on("aws/g5.12xlarge", "", "  protocol: ll128\n");
  expect_at(error_loading(ll128), ll128, "ll128", "collective.protocol", "LL128");
  const std::string bad = collective_on("aws/p4d.24xlarge", "", "  protocol: ll64\n");
  expect_at(error_loading(bad), bad, "ll64", "collective.protocol", "ll128");
}

TEST(NcclKeys, SharpNeedsInfinibandAndTransportIsTcpOrRdma) {
  const std::string sharp = collective_on("aws/p4d.24xlarge", "network:\n  fabric: {sharp: true}\n");
  expect_at(error_loading(sharp), sharp, "true", "network.fabric.sharp", "InfiniBand");
  const std::string transport = collective_on("aws/p4d.24xlarge", "network:\n  transport: udp\n");
  expect_at(error_loading(transport), transport, "udp", "network.transport", "tcp");
  const std::string socket = collective_on("aws/p4d.24xlarge", "network:\n  socket_bandwidth: 3GB/s\n");
  expect_at(error_loading(socket), socket, "3GB/s", "network.socket_bandwidth", "tcp");
  const std::string tech = collective_on("aws/p4d.24xlarge", "network:\n  node: {nic_tech: ib-xdr}\n");
  expect_at(error_loading(tech), tech, "ib-xdr", "network.node.nic_tech", "ib-ndr");
}

// TCP against RDMA on the same NICs: over TCP one flow per ring channel is one CPU-copied socket
// stream; with one GPU per node that stream bounds the all-reduce.
TEST(NcclKeys, TcpTransportIsSlowerThanRdmaOnTheSameNics) {
  const std::string base = "cluster:\n  instance: {accelerator: A100-80GB, accelerators_per_node: 1, "
                           "network_bandwidth: 100Gbps, nic_tech: roce, price: 1 USD/h}\n  nodes: 2\n";
  const std::string collective = "collective:\n  sizes: [1GiB]\n";
  const Results rdma = run(load(base + collective));
  const Results tcp = run(load(base + "network:\n  transport: tcp\n" + collective));
  EXPECT_NEAR(rdma.collective_rows[0].busbw, 12.5e9 * network::achievable_fraction(network::LinkTech::roce), 0.02e9);
  EXPECT_NEAR(tcp.collective_rows[0].busbw, network::kTcpStreamBandwidth, 0.02e9);
  const Results wide = run(load(base + "network:\n  transport: tcp\n  socket_bandwidth: 20GB/s\n" + collective));
  EXPECT_NEAR(wide.collective_rows[0].busbw, 12.5e9 * network::achievable_fraction(network::LinkTech::ethernet), 0.02e9);
}

// network.nccl_rings_per_nic (NCCL 2.0-2.3: one ring per NIC): over TCP the node's GPUs share
// that many streams; an integer >= 1, refused where it is not one.
TEST(NcclKeys, RingsPerNicHoldTcpToThatManyStreams) {
  const std::string base = "cluster:\n  instance: {accelerator: A100-80GB, accelerators_per_node: 4, "
                           "network_bandwidth: 100Gbps, nic_tech: roce, price: 1 USD/h}\n  nodes: 2\n";
  const std::string collective = "collective:\n  sizes: [1GiB]\n";
  const Results channels = run(load(base + "network:\n  transport: tcp\n" + collective));
  const Results one = run(load(base + "network:\n  transport: tcp\n  nccl_rings_per_nic: 1\n" + collective));
  const Results two = run(load(base + "network:\n  transport: tcp\n  nccl_rings_per_nic: 2\n" + collective));
  EXPECT_GT(one.collective_rows[0].time_s, 1.5 * channels.collective_rows[0].time_s);
  EXPECT_NEAR(one.collective_rows[0].time_s / two.collective_rows[0].time_s, 2.0, 0.1);
  const std::string zero = collective_on("aws/p4d.24xlarge", "network:\n  nccl_rings_per_nic: 0\n");
  expect_at(error_loading(zero), zero, "0", "network.nccl_rings_per_nic", "1");
}

}  // namespace
}  // namespace dlsim::experiment
