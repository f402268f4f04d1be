// NCCL's cost model: the three protocols (Simple, LL, LL128) with their bandwidth fraction and
// per-hop latency, and the algorithm/protocol choice NCCL's tuner makes per message size.
//
// The numbers are those of NCCL 2.20.3 (NVIDIA/nccl src/graph/tuning.cc, commit b6475625,
// ncclTopoTuneModel and ncclTopoGetAlgoTime), used as facts; the code is ours. NCCL predicts
// each (algorithm, protocol) pair's time as latency + bytes / algorithm bandwidth, from the
// bandwidth its topology search found (nChannels x per-channel bandwidth) refined by protocol
// factors, and runs the fastest. dlsim makes the same prediction to make the same choice, then
// runs the choice as flows (collectives.hpp) whose bytes on the wire are the payload over the
// protocol's fraction and whose start-up latency is the pair's latency.
//
// Units: bytes, bytes/s, seconds (NCCL's tables are in microseconds and GB/s: converted here).
#pragma once
#include <string>
#include <vector>

#include "network/collectives.hpp"

namespace dlsim::network {

// What NCCL's tuner knows of a communicator (its "graphs"), as dlsim derives it from the
// topology (collectives_group.cpp).
struct NcclGroup {
  int ranks = 1;
  int nodes = 1;
  int compute_capability = 80;  // 70 Volta, 80 Ampere, 90 Hopper (NCCL's table rows)
  bool intra_nvlink = true;     // every intra-node ring hop is NVLink (NCCL's NVLINK vs PCI latencies)
  double intra_bw = 0;          // bytes/s per rank inside a node: nChannels x bwIntra
  double inter_bw = 0;          // bytes/s per node through its NICs: nChannels x bwInter (0: one node)
  int channels = 1;             // NCCL's nChannels (per-channel caps)
  bool nvls = false;            // every node's NVSwitch reduces (NVLink SHARP)
  bool collnet = false;         // the fabric's switches reduce (InfiniBand SHARP, NCCL's CollNet)
  bool gpudirect = true;        // NICs read GPU memory (RDMA); false over TCP sockets
  int ranks_per_node() const { return nodes > 0 ? ranks / nodes : ranks; }
};

// One (algorithm, protocol) pair as NCCL's tuner sees it.
struct NcclCost {
  bool available = false;
  double latency_s = 0;   // NCCL's latency of the pair, including the launch overhead below
  double algbw = 0;       // payload bytes/s NCCL predicts
  double fraction = 1;    // the protocol's share of the raw bandwidth: wire bytes = payload / fraction
};

// Chosen pair, with NCCL's own predicted time (the flows give the simulated one).
struct NcclChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  double predicted_s = 0;
  NcclCost cost;
};

// The algorithms NCCL's tuner weighs for a collective: ring, tree (double_binary_tree), nvls,
// collnet for all-reduce; ring for the others it tunes (reduce-scatter, all-gather, broadcast,
// reduce). Empty for the point-to-point ones (all-to-all, send/recv, push/pull).
std::vector<Algorithm> nccl_algorithms(CollectiveKind kind);
bool nccl_tunes(CollectiveKind kind);

NcclCost nccl_cost(CollectiveKind kind, Algorithm algorithm, Protocol protocol, const NcclGroup& group);
// latency + bytes / algbw, with NCCL's tree correction for medium sizes and its ring "plateau"
// latency across nodes; infinity when the pair is not available.
double nccl_time(CollectiveKind kind, Algorithm algorithm, Protocol protocol, double bytes, const NcclGroup& group);

// NCCL's choice: the fastest available pair, over the algorithms and protocols not forced
// (automatic = free). Throws std::invalid_argument when the forced pair is not available, with
// the reason (e.g. "nvls needs an NVSwitch that reduces (NVLink SHARP)").
NcclChoice nccl_choose(CollectiveKind kind, double bytes, const NcclGroup& group, Algorithm algorithm,
                       Protocol protocol);

// Time every NCCL collective costs before its first byte moves, as measured by kernel timers
// (launch and the wait for the slowest rank to arrive), by GPU generation: not in NCCL's
// tuner. Fit, see nccl_tuning.cpp.
double nccl_launch_overhead_s(int compute_capability);
// The same for a send/recv pair (NCCL's point-to-point kernels), which waits for its two ranks
// only: lower than a collective's; across nodes plus one step through NCCL's network proxy.
// Fit, see nccl_tuning.cpp.
double nccl_p2p_overhead_s(int compute_capability, bool across_nodes);

// What the pair achieves of the bandwidth NCCL's tuner credits it with, and of the latency it
// charges beyond the launch (1 and 1 where nothing was measured): NCCL chooses by its tuner, the
// collective runs at what the protocol really does. Not in NCCL's source; fit, see nccl_tuning.cpp
// (LL128 and Simple rings inside an Ampere NVLink node; NVLS inside a Hopper node, whose
// bandwidth depends on the collective's size through NCCL's chunk size).
struct NcclAchieved {
  double bandwidth = 1;
  double latency = 1;
};
NcclAchieved nccl_achieved(CollectiveKind kind, Algorithm algorithm, Protocol protocol, const NcclGroup& group,
                           double bytes);

// NVLS inside a node: NCCL's channels (NCCL_NVLS_NCHANNELS, NCCL 2.17-2.20; one CTA each) and its
// largest chunk (NCCL_NVLS_CHUNKSIZE).
constexpr int kNcclNvlsChannels = 16;
constexpr double kNvlsMaxChunkBytes = 131072;
// The channels (CTAs, one SM each) NCCL runs `algorithm` on for this communicator: NVLS inside one
// node holds its own count; every other algorithm the communicator's rings (group.channels).
int nccl_channels(Algorithm algorithm, const NcclGroup& group);
// The chunk NCCL cuts an NVLS all-reduce of `bytes` into on a node of that many GPUs (src/enqueue.cc:
// 128 KiB, then 64, 32 and 16 KiB below 64, 8 and 2 chunks per channel and head).
int nvls_chunk_bytes(double bytes, int ranks_per_node);
// The share of the 128 KiB chunk's bandwidth that the chunk of nvls_chunk_bytes reaches (fit on
// H100, nccl_tuning.cpp): 1 at 128 KiB and below it for smaller collectives.
double nvls_chunk_efficiency(double bytes, int ranks_per_node);

}  // namespace dlsim::network
