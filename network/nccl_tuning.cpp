// NCCL's tuner, after NVIDIA/nccl src/graph/tuning.cc at NCCL 2.20.3 (commit b6475625). Every
// table below is that file's, in its units (microseconds, GB/s); only the arithmetic that
// combines them is restated. Simplifications, all on the side of what dlsim can know:
// - one latency table per link class: NVLink, PCI, network (NCCL's hwLat);
// - CPU-dependent constants take the Intel x86 values (network post overhead 1 us, the
//   multi-node LL cap of the "Intel" row);
// - CollNet is NCCL's CollNet Chain for all-reduce (Direct needs per-GPU NICs and adds a
//   ppn-dependent factor); reduce-scatter and all-gather use rings only (no NVLS/CollNet);
// - numPipeOps = 1 (one collective per launch), network latency of the NIC property 0.
#include "network/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dlsim::network {
namespace {

enum { kLL = 0, kLL128 = 1, kSimple = 2 };
enum { kTree = 0, kRing = 1, kCollNet = 2, kNvls = 3, kAlgos = 4 };
enum { kHwNvlink = 0, kHwPci = 1, kHwNet = 2 };

// baseLat[algorithm][protocol], us (CollNet, NVLS, NVLS tree: 0).
constexpr double kBaseLat[kAlgos][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}};
// hwLat[hw][algorithm][protocol], us. CollNet: NCCL's CollNetChain row; NVLS: the NVLS row on
// one node and the NVLS-tree row across nodes (they differ only on the network: 18 and 14).
constexpr double kHwLat[3][kAlgos][3] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 2.8}, {0, 0, 23}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 2.8}, {0, 0, 0}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 30}, {0, 0, 18}},
};
constexpr double kNvlsTreeNetLat = 14;

// [compute-capability row: Volta, Ampere, Hopper][nodes: 1, 2, >2], GB/s.
constexpr double kLLMaxBw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}};
constexpr double kPerChMaxRingLL128Bw[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
constexpr double kPerChMaxTreeLL128Bw[3][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
constexpr double kPerChMaxTreeBw[3][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};

// treeCorrectionFactor[protocol][log2(bytes / 64)], sizes 64 B to 256 MB.
constexpr int kTreeSizes = 23;
constexpr double kTreeCorrection[3][kTreeSizes] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

constexpr double kNetOverheadUs = 1.0;  // getNetOverhead: Intel x86

// Not in NCCL's source. What a collective costs on the GPU before data moves when it is timed
// by its kernels (vidur's profiler, collectives_vidur.csv): the launch and the wait for the
// last rank to enter the kernel, which differ by platform. FIT, per GPU generation: the median,
// over the single-node all-reduce rows below 1 MiB of the DGX systems (a100_dgx for Ampere,
// h100_dgx for Hopper), of measured time minus NCCL's predicted time without it
// (`dlsim validate --collectives` prints that median for the rows it marks "fit"); the PCIe
// boards of each generation (a100/h100_pairwise_nvlink) are held out. Older GPUs take Ampere's.
constexpr double kLaunchOverheadAmpereUs = 30.0;
constexpr double kLaunchOverheadHopperUs = 21.0;

// Not in NCCL's source either: LL128 inside an Ampere NVLink node as it runs, not as the tuner
// credits it. vidur's DGX A100 all-reduces that NCCL runs as ring/LL128 (1.3-24 MB on 8 GPUs)
// fit a line of 132 GB/s bus bandwidth where the tuner credits 221 (its 92% of the ring's
// bandwidth), starting 12.4 us after the launch where the tuner charges 40.6 (baseLat 14 +
// 14 steps x 1.9). FIT: both ratios, on the a100_dgx 8-GPU rows at >= 1 MiB that run LL128.
// Held out, the 4-GPU rows (1.1-5.8 MB) fit 137 GB/s (0.62 of the tuner's) and 7.4 us (0.29 of
// its 25.4). Only there: no other generation or system runs LL128 at those sizes in the table.
constexpr double kLL128BandwidthAmpereNvlink = 132.0 / 221.0;
constexpr double kLL128LatencyAmpereNvlink = 12.4 / 40.6;

// Not in NCCL's source either: the Simple protocol's ring steps inside an Ampere NVLink node.
// vidur's DGX A100 all-reduces that NCCL runs as ring/Simple on 8 GPUs (26-67 MB) take 87 us
// more than the tuner's prediction at every size: a constant, not a bandwidth shortfall (their
// slope is within 7% of the tuner's bandwidth, and nccl-tests reach it at 4-8 GB). Spread over
// the ring's 14 steps, each step waits 6.2 us beyond the tuner's 3.4 us per NVLink hop (the flag
// handshake and fence of each Simple step). FIT: the median of (measured - predicted) / steps
// over those 12 rows. Held out, the 4-GPU and 2-GPU rows that run ring/Simple (6 and 2 steps).
// Reduce-scatter and all-gather rings run the same steps, so they take the same per-step cost.
constexpr double kSimpleStepExtraAmpereNvlinkUs = 6.2;

// Not in NCCL's source either: NVLS (NVLink SHARP) inside a Hopper NVSwitch node, as it runs.
// NCCL cuts an NVLS all-reduce into chunks, one pipeline per channel and head (16 channels,
// NCCL_NVLS_NCHANNELS; one head per GPU of the node), and shrinks the chunk from 128 KiB to 64,
// 32 and 16 KiB for smaller collectives (src/enqueue.cc, nvls_chunk_bytes below). Each chunk
// costs a fixed time beside its bytes (the multimem load-reduce and store round trips and their
// flags), so the bandwidth a chunk of C bytes reaches is C / (C + C_half) of what the chunk's
// bytes alone would, and smaller collectives run at a lower bandwidth: vidur's 8-GPU H100 rows
// reach a bus bandwidth of 205 GB/s at 8 MB (16 KiB chunks) and 364 at 64 MiB, where the chunk
// doubles to 64 KiB and the time drops (333 us at 63 MB, 322 at 64 MiB). dlsim's NVLS flows
// carry what nccl-tests reach at 4-8 GB (128 KiB chunks; network_yaml.cpp), so the factor is
// relative to the 128 KiB chunk. NVLS also starts sooner than its tuner row charges (23 us
// beyond the launch). FIT, both constants together: the h100_dgx all-reduce on 8 GPUs at
// >= 1 MiB (47 rows, all NVLS): mean error 17.8% -> 5.6%. Held out, the 4-GPU rows (NVLS at
// >= 1 MiB): 26.2% -> 16.2%, still 10-15% slow at 4-30 MB (docs/validation.md).
constexpr double kNvlsChunkHalfBytesHopper = 18432;
constexpr double kNvlsLatencyHopperUs = 4.4;
constexpr double kNvlsTunerLatencyUs = kHwLat[kHwNvlink][kNvls][kSimple];

// Not in NCCL's source either: what a send/recv pair costs before data moves, timed the same way.
// A point-to-point transfer waits for its two ranks only, not for every rank of a collective,
// and runs no reduction pipeline: vidur's send/recv rows inside a node take 13-17 us from 40 KB
// to 1 MB on DGX A100 and 7-9 us on DGX H100, where the all-reduce rows of the same systems need
// the launch overhead above (30 and 21 us) plus NCCL's latency. FIT, per GPU generation as the
// launch overhead: the median over the DGX systems' single-node send/recv rows below 1 MiB of
// measured time minus dlsim's time without it; held out, the same systems' send/recv at >= 1
// MiB and across two nodes, and the PCIe boards. Across nodes the transfer also takes one step
// through NCCL's network proxy (the host thread that posts it to the NIC and flags its arrival):
// NCCL's own latency of a Simple step over the network, the tuner's hwLat (14 us).
constexpr double kP2pOverheadAmpereUs = 11.2;
constexpr double kP2pOverheadHopperUs = 3.7;

double launch_overhead_us(int compute_capability) {
  return compute_capability >= 90 ? kLaunchOverheadHopperUs : kLaunchOverheadAmpereUs;
}

int row_of(int compute_capability) { return compute_capability >= 90 ? 2 : compute_capability >= 80 ? 1 : 0; }
int nodes_column(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

int log2i(long long v) {
  int r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}

int algo_index(Algorithm a) {
  switch (a) {
    case Algorithm::double_binary_tree: return kTree;
    case Algorithm::ring: return kRing;
    case Algorithm::collnet: return kCollNet;
    case Algorithm::nvls: return kNvls;
    default: return -1;
  }
}

int proto_index(Protocol p) { return p == Protocol::ll ? kLL : p == Protocol::ll128 ? kLL128 : kSimple; }

int steps(CollectiveKind kind, int n) {
  if (kind == CollectiveKind::all_reduce) return 2 * (n - 1);
  if (kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_gather) return n - 1;
  return n;
}

// Why a pair cannot run, or "" when it can.
std::string unavailable(CollectiveKind kind, int a, int p, const NcclGroup& g) {
  const bool all_reduce = kind == CollectiveKind::all_reduce;
  if (!all_reduce && a != kRing) return "only all-reduce has NCCL algorithms other than ring";
  if ((a == kNvls || a == kCollNet) && p != kSimple) return "NVLS and CollNet run the Simple protocol only";
  if (a == kNvls && !g.nvls) return "nvls needs an NVSwitch that reduces (NVLink SHARP, NVSwitch-3) on every node";
  if (a == kCollNet && (!g.collnet || g.nodes < 2)) {
    return "collnet needs several nodes on a fabric whose switches reduce (InfiniBand SHARP)";
  }
  if (p == kLL128) {
    const int cc = g.compute_capability;
    if (cc != 70 && cc != 80 && cc != 90) return "NCCL enables LL128 on Volta, Ampere and Hopper only";
    if (!g.intra_nvlink) return "NCCL enables LL128 only where every intra-node hop is NVLink";
    if (g.nodes > 1 && !g.gpudirect) return "NCCL enables LL128 across nodes only with GPUDirect RDMA";
  }
  return "";
}

// NCCL's bus bandwidth for the pair (GB/s), before conversion to algorithm bandwidth, and the
// protocol's fraction of the raw figure.
struct Bus {
  double raw = 0;   // nChannels x bw
  double bus = 0;   // after the protocol and algorithm refinements
};

Bus bus_bandwidth(CollectiveKind kind, int a, int p, const NcclGroup& g) {
  const int row = row_of(g.compute_capability), col = nodes_column(g.nodes);
  const double ch = std::max(1, g.channels);
  const double intra = g.intra_bw / 1e9, inter = g.inter_bw / 1e9;
  // One node: the intra-node graph. Across nodes a ring or tree is limited by the slower of the
  // two (NCCL's search never gives an intra bandwidth below the inter one); NVLS tree uses half
  // the network bandwidth beyond two nodes.
  double raw = g.nodes == 1 ? intra : std::min(intra, inter);
  if (a == kNvls && g.nodes > 2) raw = std::min(intra, inter / 2);
  Bus b{raw, raw};
  const double ll_max = g.nodes == 1 ? kLLMaxBw[row][0] : kLLMaxBw[0][col];  // multi-node: Intel row
  const bool quarter = g.nodes > 1 || kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce;
  if (a == kRing && p == kLL) b.bus = std::min(ll_max, b.bus * (quarter ? 1.0 / 4 : 1.0 / 3));
  if (a == kRing && p == kLL128) {
    b.bus = std::min(b.bus * (g.ranks_per_node() < 2 ? 0.7 : 0.92), ch * kPerChMaxRingLL128Bw[row][col]);
  }
  if (a == kTree) b.bus = std::min(b.bus * .92, ch * kPerChMaxTreeBw[row][col]);
  if (a == kTree && p == kLL) b.bus = std::min(b.bus / 3.8, ll_max);
  if (a == kTree && p == kLL128) {
    b.bus = std::min(b.bus * (g.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * kPerChMaxTreeLL128Bw[row][col]);
  }
  return b;
}

// algbw / busbw: a ring moves 2(p-1)/p n per rank for all-reduce, a tree n/2 per tree, NVLS
// 5/6 (tuning.cc's ratios).
double algorithm_ratio(CollectiveKind kind, int a, const NcclGroup& g) {
  if (a == kRing) return double(g.ranks) / steps(kind, g.ranks);
  if (a == kNvls) return 5.0 / 6.0;
  return 0.5;
}

double latency_us(CollectiveKind kind, int a, int p, const NcclGroup& g) {
  const int hw_intra = g.intra_nvlink ? kHwNvlink : kHwPci;
  const int n = g.ranks, nodes = g.nodes, ppn = g.ranks_per_node();
  double intra = kHwLat[hw_intra][a][p];
  const double inter = a == kNvls && nodes > 1 ? kNvlsTreeNetLat : kHwLat[kHwNet][a][p];
  double lat = kBaseLat[a][p];
  switch (a) {
    case kRing: {
      const bool rooted = kind == CollectiveKind::broadcast || kind == CollectiveKind::reduce;
      if (rooted) {  // NCCL adds a chunk's latency per step (the tree row for Simple)
        const int hw = nodes == 1 ? hw_intra : kHwNet;
        return lat + steps(kind, n) * kHwLat[hw][p == kSimple ? kTree : kRing][p];
      }
      const int inter_steps = kind == CollectiveKind::all_reduce ? (nodes > 1 ? 2 * nodes : 0) : nodes - 1;
      if (nodes > 1) intra = std::max(intra, kNetOverheadUs * (p == kSimple ? 3 : 1));
      return lat + (steps(kind, n) - inter_steps) * intra + inter_steps * inter;
    }
    case kTree: return lat + 2 * ((ppn - 1) * intra + log2i(nodes) * inter);
    case kCollNet: return lat + 2 * (ppn - 1) * intra + inter;
    case kNvls: return nodes > 1 ? lat + intra + 2 * log2i(nodes) * inter : intra;
    default: return lat;
  }
}

}  // namespace

bool nccl_tunes(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce: return true;
    default: return false;
  }
}

std::vector<Algorithm> nccl_algorithms(CollectiveKind kind) {
  if (kind == CollectiveKind::all_reduce) {
    return {Algorithm::double_binary_tree, Algorithm::ring, Algorithm::collnet, Algorithm::nvls};
  }
  if (nccl_tunes(kind)) return {Algorithm::ring};
  return {};
}

NcclCost nccl_cost(CollectiveKind kind, Algorithm algorithm, Protocol protocol, const NcclGroup& group) {
  NcclCost c;
  const int a = algo_index(algorithm), p = proto_index(protocol);
  if (a < 0 || !nccl_tunes(kind) || group.ranks < 2 || !unavailable(kind, a, p, group).empty()) return c;
  const Bus b = bus_bandwidth(kind, a, p, group);
  if (!(b.bus > 0)) return c;
  c.available = true;
  c.algbw = b.bus * algorithm_ratio(kind, a, group) * 1e9;
  c.fraction = b.bus / b.raw;
  c.latency_s = (latency_us(kind, a, p, group) + launch_overhead_us(group.compute_capability)) * 1e-6;
  return c;
}

double nccl_time(CollectiveKind kind, Algorithm algorithm, Protocol protocol, double bytes, const NcclGroup& group) {
  const NcclCost c = nccl_cost(kind, algorithm, protocol, group);
  if (!c.available) return std::numeric_limits<double>::infinity();
  double bw = c.algbw;
  const double launch = launch_overhead_us(group.compute_capability) * 1e-6;
  double lat = c.latency_s - launch;
  const int log_size = log2i(static_cast<long long>(bytes) >> 6);
  if (algorithm == Algorithm::double_binary_tree && log_size < kTreeSizes) bw *= kTreeCorrection[proto_index(protocol)][log_size];
  const bool plateau = algorithm == Algorithm::ring && protocol == Protocol::simple && group.nodes > 1 &&
                       kind == CollectiveKind::all_reduce && bytes / (std::max(1, group.channels) * group.ranks) >= 64;
  if (plateau) lat *= group.compute_capability < 80 ? 1.9 : 1.4;
  return lat + launch + bytes / bw;
}

NcclChoice nccl_choose(CollectiveKind kind, double bytes, const NcclGroup& group, Algorithm algorithm,
                       Protocol protocol) {
  std::vector<Algorithm> algorithms = nccl_algorithms(kind);
  if (algorithm != Algorithm::automatic) {
    if (std::find(algorithms.begin(), algorithms.end(), algorithm) == algorithms.end()) {
      throw std::invalid_argument("NCCL has no " + to_string(algorithm) + " algorithm for " + to_string(kind));
    }
    algorithms = {algorithm};
  }
  const std::vector<Protocol> protocols =
      protocol == Protocol::automatic ? std::vector<Protocol>{Protocol::ll, Protocol::ll128, Protocol::simple}
                                      : std::vector<Protocol>{protocol};
  NcclChoice best;
  best.predicted_s = std::numeric_limits<double>::infinity();
  for (Algorithm a : algorithms) {
    for (Protocol p : protocols) {
      const double t = nccl_time(kind, a, p, bytes, group);
      if (std::isfinite(t) && t < best.predicted_s) best = {a, p, t, nccl_cost(kind, a, p, group)};
    }
  }
  if (!std::isfinite(best.predicted_s)) {
    // The reason of the forced choice: the algorithm's (with Simple, which all run) first.
    std::string why = group.ranks < 2 ? "a collective of one rank has nothing to tune" : "";
    const int a = algo_index(algorithms.front());
    if (why.empty()) why = unavailable(kind, a, kSimple, group);
    if (why.empty()) why = unavailable(kind, a, proto_index(protocols.front()), group);
    throw std::invalid_argument(why.empty() ? "no NCCL algorithm and protocol apply" : why);
  }
  return best;
}

double nccl_launch_overhead_s(int compute_capability) { return launch_overhead_us(compute_capability) * 1e-6; }

double nccl_p2p_overhead_s(int compute_capability, bool across_nodes) {
  const double start_us = compute_capability >= 90 ? kP2pOverheadHopperUs : kP2pOverheadAmpereUs;
  return (start_us + (across_nodes ? kHwLat[kHwNet][kRing][kSimple] : 0.0)) * 1e-6;
}

int nccl_channels(Algorithm algorithm, const NcclGroup& group) {
  return algorithm == Algorithm::nvls && group.nodes == 1 ? kNcclNvlsChannels : group.channels;
}

int nvls_chunk_bytes(double bytes, int ranks_per_node) {
  const double ops = double(kNcclNvlsChannels) * std::max(1, ranks_per_node);  // concurrent chunk pipelines
  double chunk = kNvlsMaxChunkBytes;
  if (bytes < 64 * ops * chunk) chunk = 65536;
  if (bytes < 8 * ops * chunk) chunk = 32768;
  if (bytes < 2 * ops * chunk) chunk = 16384;
  return static_cast<int>(chunk);
}

double nvls_chunk_efficiency(double bytes, int ranks_per_node) {
  const double c = nvls_chunk_bytes(bytes, ranks_per_node), h = kNvlsChunkHalfBytesHopper;
  return (c / (c + h)) / (kNvlsMaxChunkBytes / (kNvlsMaxChunkBytes + h));
}

NcclAchieved nccl_achieved(CollectiveKind kind, Algorithm algorithm, Protocol protocol, const NcclGroup& group,
                           double bytes) {
  const bool hopper_nvls_node = algorithm == Algorithm::nvls && group.compute_capability >= 90 && group.nodes == 1;
  if (hopper_nvls_node && kind == CollectiveKind::all_reduce && group.ranks >= 2) {
    return {nvls_chunk_efficiency(bytes, group.ranks), kNvlsLatencyHopperUs / kNvlsTunerLatencyUs};
  }
  const bool ampere = group.compute_capability >= 80 && group.compute_capability < 90;
  const bool ampere_nvlink_node = ampere && group.nodes == 1 && group.intra_nvlink;
  if (algorithm != Algorithm::ring || !ampere_nvlink_node || !nccl_tunes(kind) || group.ranks < 2) return {};
  if (protocol == Protocol::ll128) return {kLL128BandwidthAmpereNvlink, kLL128LatencyAmpereNvlink};
  if (protocol == Protocol::simple) {
    // As a factor on the tuner's latency (beyond the launch): (its latency + steps x extra) / its latency.
    const double tuner_us = latency_us(kind, kRing, kSimple, group);
    return {1.0, (tuner_us + steps(kind, group.ranks) * kSimpleStepExtraAmpereNvlinkUs) / tuner_us};
  }
  return {};
}

}  // namespace dlsim::network
