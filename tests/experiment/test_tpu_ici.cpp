// TPU slices on their inter-chip interconnect (network/ici.hpp): torus links run at each
// generation's ICI rate (not the host NIC's), a v4 slice's all-reduce is bound by ICI and blind
// to the NICs, pods beyond the generation's pod size meet over the hosts' NICs (DCN), and bad
// `ici`, `pods` and `wrap` values are reported at file:line:column with their key path.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/network_yaml.hpp"
#include "experiment/results.hpp"
#include "network/ici.hpp"
#include "network/link_tech.hpp"
#include "network/topology.hpp"

#include "scenario_text.hpp"

namespace dlsim::experiment {
namespace {

using network::IciGeneration;

std::string collective_on(const std::string& instance, int nodes, const std::string& extra = "") {
  return "cluster:\n  instance: " + instance + "\n  nodes: " + std::to_string(nodes) + "\n" + extra +
         "collective:\n  operation: all-reduce\n  sizes: [256MiB]\n";
}

Scenario load(const std::string& text, const std::vector<std::string>& sets = {}) {
  return load_scenario_text(text, "tpu.yaml", sets);
}

CollectiveRow only_row(const Scenario& s) {
  const Results r = run(s);
  EXPECT_EQ(r.collective_rows.size(), 1u);
  return r.collective_rows.at(0);
}

// ---- ICI figures per generation ---------------------------------------------------------------

struct Generation {
  const char* instance;
  IciGeneration ici;
  double link_bandwidth;  // bytes/s per link and direction, from the source named in ici.cpp
  int links;
};

// v2 and v3: CACM 2020 (496 and 656 Gbit/s, 4 links); v4: ISCA 2023 (400 Gbit/s, 6 links); v5e:
// 400 GB/s bidirectional over 4 ports; v5p: 1,200 GB/s bidirectional over 6 links.
const std::vector<Generation> kGenerations{
    {"gcp/tpu-v2-8", IciGeneration::v2, 496e9 / 8, 4},  {"gcp/tpu-v3-8", IciGeneration::v3, 656e9 / 8, 4},
    {"gcp/tpu-v4-8", IciGeneration::v4, 400e9 / 8, 6},  {"gcp/tpu-v5e-8", IciGeneration::v5e, 50e9, 4},
    {"gcp/tpu-v5p-8", IciGeneration::v5p, 100e9, 6},
};

TEST(TpuIci, EveryGenerationsTorusLinksRunAtItsIciRateNotTheNics) {
  for (const Generation& g : kGenerations) {
    SCOPED_TRACE(g.instance);
    const Scenario s = load(collective_on(g.instance, 4));
    EXPECT_EQ(s.network.ici, g.ici);
    EXPECT_EQ(network::ici_spec(g.ici).links_per_chip, g.links);
    EXPECT_EQ(s.network.fabric.kind, network::FabricKind::torus);  // a TPU slice's default
    EXPECT_DOUBLE_EQ(s.network.node.link_bandwidth, g.link_bandwidth);
    EXPECT_DOUBLE_EQ(s.network.fabric.link_bandwidth, g.link_bandwidth);
    EXPECT_GE(s.network.fabric.link_bandwidth, 2 * s.network.node.nic_bandwidth);  // a link, not a NIC
    // Every chip-to-chip link of the built slice is an ICI link at that rate.
    const network::Topology t = s.topology_for(4);
    int ici_links = 0;
    for (network::LinkId l = 0; l < static_cast<network::LinkId>(t.link_count()); ++l) {
      const network::LinkInfo& link = t.link(l);
      if (t.vertex(link.from).kind != network::VertexKind::accelerator ||
          t.vertex(link.to).kind != network::VertexKind::accelerator) {
        continue;
      }
      ++ici_links;
      EXPECT_DOUBLE_EQ(link.bandwidth, g.link_bandwidth);
      EXPECT_EQ(link.tech, network::LinkTech::ici);
    }
    EXPECT_GT(ici_links, 0);
  }
}

TEST(TpuIci, SliceShapesFollowTheGeneration) {
  EXPECT_EQ(network::ici_slice_dims(IciGeneration::v4, 4), (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(network::ici_slice_dims(IciGeneration::v4, 4096), (std::vector<int>{16, 16, 16}));
  EXPECT_EQ(network::ici_slice_dims(IciGeneration::v5e, 256), (std::vector<int>{16, 16}));
  // v4: axes that are multiples of 4 wrap (optical switches); v5e only a full 16-chip side.
  EXPECT_EQ(network::ici_wrap(IciGeneration::v4, {4, 4, 8}), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(network::ici_wrap(IciGeneration::v4, {2, 2, 1}), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(network::ici_wrap(IciGeneration::v5e, {8, 16}), (std::vector<bool>{false, true}));
}

// ---- a v4 slice's all-reduce is ICI-bound -----------------------------------------------------

// 16 v4 hosts = 64 chips, a 4x4x4 torus with every axis wrapped: the torus all-reduce sends a
// stripe of the buffer along each axis at once, bidirectionally, so every chip drives its 6
// links both ways: busbw = 6 x 50 GB/s x the achievable ICI fraction, whatever the NICs.
TEST(TpuIci, V4SliceAllReduceIsIciBoundAndBlindToTheNics) {
  const Scenario s = load(collective_on("gcp/tpu-v4-8", 16));
  const CollectiveRow row = only_row(s);
  EXPECT_EQ(row.algorithm, "torus");
  EXPECT_EQ(row.ranks, 64);
  const double ici = 6 * 50e9 * network::achievable_fraction(network::LinkTech::ici);
  EXPECT_NEAR(row.busbw, ici, 0.05 * ici);
  EXPECT_GT(row.busbw, 5 * s.cluster.instance.network_bandwidth);  // far above a host's NICs
  // A tenth of the NIC bandwidth changes nothing: no byte of a slice leaves through a NIC.
  const CollectiveRow slow_nics = only_row(load(collective_on("gcp/tpu-v4-8", 16), {"network.node.nic_bandwidth=20Gbps"}));
  EXPECT_DOUBLE_EQ(slow_nics.time_s, row.time_s);
  // Half the ICI rate doubles the bandwidth-bound time.
  const CollectiveRow slow_ici = only_row(load(collective_on("gcp/tpu-v4-8", 16), {"network.fabric.link_bandwidth=200Gbps"}));
  EXPECT_NEAR(slow_ici.time_s / row.time_s, 2.0, 0.05);
}

// ---- pods joined by the data-centre network ---------------------------------------------------

TEST(TpuIci, SlicesBeyondAPodSplitIntoEqualPods) {
  EXPECT_EQ(ici_pods_for(IciGeneration::v4, 1024, 4), 1);  // 4,096 chips: one full pod
  EXPECT_EQ(ici_pods_for(IciGeneration::v4, 1536, 4), 2);  // PaLM: 2 x 3,072 chips
  EXPECT_EQ(ici_pods_for(IciGeneration::v5e, 64, 8), 2);   // 512 chips: 2 x 256
  const Scenario s = load(collective_on("gcp/tpu-v4-8", 1536));
  const network::FabricSpec f = s.fabric_for(1536);
  EXPECT_EQ(f.pods, 2);
  EXPECT_EQ(f.dims, (std::vector<int>{16, 16, 12}));
}

// Two pods of 8 v4 hosts (32 chips each): the all-reduce reduce-scatters inside each pod on
// ICI, all-reduces every shard across the pods through the hosts' NICs, and all-gathers inside
// each pod. The cross-pod step moves n/32 per chip, all 4 chips of a host through its one NIC,
// so the NIC rate shows in the time; within one pod it does not.
TEST(TpuIci, AllReduceAcrossPodsCrossesTheDataCentreNetwork) {
  const std::string two_pods = "network:\n  fabric: {kind: torus, pods: 2}\n";
  const Scenario s = load(collective_on("gcp/tpu-v4-8", 16, two_pods));
  EXPECT_EQ(s.fabric_for(16).pods, 2);
  const network::Topology t = s.topology_for(16);
  EXPECT_EQ(t.torus().pods, 2);
  const CollectiveRow row = only_row(s);
  EXPECT_EQ(row.algorithm, "torus");
  const CollectiveRow slow = only_row(load(collective_on("gcp/tpu-v4-8", 16, two_pods), {"network.node.nic_bandwidth=50Gbps"}));
  EXPECT_GT(slow.time_s, 1.5 * row.time_s);
  // One pod of the same 64 chips is faster: nothing crosses the NICs.
  const CollectiveRow one_pod = only_row(load(collective_on("gcp/tpu-v4-8", 16)));
  EXPECT_LT(one_pod.time_s, row.time_s);
}

// ---- errors -------------------------------------------------------------------------------------

struct BadCase {
  std::string name;
  std::string text;
  std::string key_path;
  std::string at;       // the error is located at the first occurrence of this text
  std::string message;  // a substring of the message
};

const std::string kInline =
    "cluster:\n  instance:\n    accelerator: TPU-v4\n    accelerators_per_node: 4\n"
    "    network_bandwidth: 200Gbps\n    price: 12 USD/h\n    ici: v4\n  nodes: 2\n"
    "collective:\n  sizes: [1MiB]\n";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::vector<BadCase> bad_cases() {
  return {
      {"unknown_ici", replaced(kInline, "ici: v4", "ici: v9"), "cluster.instance.ici", "v9", "allowed"},
      {"ici_host_size", replaced(kInline, "accelerators_per_node: 4", "accelerators_per_node: 8"),
       "cluster.instance.accelerators_per_node", "8\n", "a v4 host has 4 chips"},
      {"pods_not_torus", collective_on("aws/p4d.24xlarge", 2, "network:\n  fabric: {kind: leaf-spine, pods: 2}\n"),
       "network.fabric.pods", "2}", "torus only"},
      {"wrap_not_bool", collective_on("gcp/tpu-v4-8", 4, "network:\n  fabric: {kind: torus, dims: [4, 4, 1], wrap: [true, maybe, false]}\n"),
       "network.fabric.wrap[1]", "maybe", "expected true or false"},
  };
}

TEST(TpuIciErrors, ReportFileLineColumnAndKeyPath) {
  for (const BadCase& c : bad_cases()) {
    SCOPED_TRACE(c.name);
    const ConfigError e = test::error_loading(c.text, "bad.yaml");
    EXPECT_EQ(e.key_path(), c.key_path) << e.what();
    const auto [line, column] = test::position_of(c.text, c.at);
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.where().column, column) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": " + c.key_path),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlsim::experiment
