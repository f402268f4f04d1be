// Algorithm::torus on built TPU-like tori (collectives_torus.cpp), against the bandwidth each
// schedule must reach: a stripe per axis on bidirectional rings drives every ICI link of a chip
// both ways; mesh lines (no wraparound) cost a one-way ring; pods meet through the NICs only.
#include <gtest/gtest.h>

#include <vector>

#include "network/collectives.hpp"
#include "network/link_tech.hpp"
#include "network/topology.hpp"
#include "network/topology_builders.hpp"

namespace dlsim::network {
namespace {

constexpr double kLink = 100e9;  // bytes/s per ICI link and direction (line rate)
constexpr double kBytes = 1 << 30;

// Hosts of 4 chips (2x2 blocks) tiling pods of `dims` chips, `pods` of them.
Topology slice(std::vector<int> dims, std::vector<bool> wrap, int pods, double nic_bandwidth = 12.5e9) {
  NodeSpec node;
  node.kind = NodeKind::tpu_board;
  node.accelerators = 4;
  node.link_bandwidth = kLink;
  node.link_latency_s = 1e-6;
  node.link_tech = LinkTech::ici;
  node.nic_bandwidth = nic_bandwidth;
  node.pcie_bandwidth = 1e12;  // not what limits the cross-pod step
  FabricSpec f;
  f.kind = FabricKind::torus;
  int chips = pods;
  for (int d : dims) chips *= d;
  f.nodes = chips / 4;
  f.dims = std::move(dims);
  f.wrap = std::move(wrap);
  f.host_shape = {2, 2};
  f.pods = pods;
  f.link_bandwidth = kLink;
  f.link_latency_s = 1e-6;
  return build_cluster(node, f);
}

CollectiveResult all_reduce(const Topology& t, double bytes = kBytes) {
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.bytes = bytes;
  spec.ranks = t.accelerators();
  return run_collective(t, spec);
}

const double kAchievable = kLink * achievable_fraction(LinkTech::ici);

// 4x4 torus, both axes wrapped: every chip sends on its 4 links at once, busbw = 4 links.
TEST(TorusCollectives, WrappedAxesDriveEveryLinkBothWays) {
  const Topology t = slice({4, 4}, {true, true}, 1);
  const CollectiveResult r = all_reduce(t);
  EXPECT_EQ(r.algorithm, Algorithm::torus);
  EXPECT_NEAR(r.busbw, 4 * kAchievable, 0.03 * 4 * kAchievable);
  // A flat ring over the same chips in rank order drives about one link out of each chip (some
  // of its hops are two links long, which routing spreads over two paths): far less.
  CollectiveSpec ring;
  ring.kind = CollectiveKind::all_reduce;
  ring.algorithm = Algorithm::ring;
  ring.bytes = kBytes;
  ring.ranks = t.accelerators();
  EXPECT_LT(run_collective(t, ring).busbw, 0.6 * r.busbw);
}

// Without wraparound each axis is a mesh line: its busiest link carries what a one-way ring's
// does, so the bus bandwidth halves.
TEST(TorusCollectives, MeshLinesCostAOneWayRing) {
  const double torus = all_reduce(slice({4, 4}, {true, true}, 1)).busbw;
  const double mesh = all_reduce(slice({4, 4}, {false, false}, 1)).busbw;
  EXPECT_NEAR(mesh / torus, 0.5, 0.03);
}

// Two pods of 16 chips: only each chip's reduced shard (n/16) crosses between the pods, through
// its host's NIC (4 chips per NIC): with slow NICs the cross-pod step sets the time,
// 4 x 2(P-1)/P x n/16 = n/4 per NIC and direction.
TEST(TorusCollectives, PodsMeetThroughTheHostNics) {
  const double nic = 1e9;
  const Topology t = slice({4, 4}, {true, true}, 2, nic);
  EXPECT_EQ(t.torus().pods, 2);
  const CollectiveResult r = all_reduce(t);
  EXPECT_EQ(r.algorithm, Algorithm::torus);
  const double cross_pod = kBytes / 4 / nic;
  const double in_pod = all_reduce(slice({4, 4}, {true, true}, 1)).time_s;
  EXPECT_NEAR(r.time_s, cross_pod + in_pod, 0.03 * cross_pod);
}

// A group that is not a box of the torus (three chips of a 2x2 block) cannot run torus.
TEST(TorusCollectives, NonBoxGroupsAreRejected) {
  const Topology t = slice({4, 4}, {true, true}, 1);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_reduce;
  spec.algorithm = Algorithm::torus;
  spec.bytes = 1e6;
  spec.ranks = {t.accelerators()[0], t.accelerators()[1], t.accelerators()[2]};
  EXPECT_THROW(run_collective(t, spec), std::invalid_argument);
  spec.algorithm = Algorithm::automatic;
  EXPECT_NE(run_collective(t, spec).algorithm, Algorithm::torus);
}

}  // namespace
}  // namespace dlsim::network
