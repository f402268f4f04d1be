// Collective operations decomposed into flows on the FlowNetwork, so that they share links
// with each other and with any other traffic. Each algorithm is a sequence of phases; a phase
// is a set of concurrent flows that all must end before the next phase starts.
//
// Sizes follow nccl-tests: `bytes` is the per-rank buffer (all-reduce, broadcast, reduce:
// the whole message; reduce-scatter: the full input, each rank keeps bytes/p; all-gather: the
// full output; all-to-all: the total each rank sends). Reported bandwidths follow nccl-tests'
// PERFORMANCE.md: algbw = bytes / time; busbw = algbw x factor, the factor being 2(p-1)/p for
// all-reduce, (p-1)/p for reduce-scatter, all-gather and all-to-all, 1 for broadcast, reduce
// and send/recv.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "network/flow_network.hpp"
#include "network/routing.hpp"
#include "network/topology.hpp"
#include "sim/engine.hpp"

namespace dlsim::network {

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv, push_pull };
// nvls: NVLink SHARP, the NVSwitch reduces (NCCL's NVLS; NVLS tree across nodes); collnet:
// InfiniBand SHARP, the fabric's switches reduce (NCCL's CollNet). Both need the capability in
// the topology (VertexInfo::reduction_bandwidth).
// torus: a TPU slice's multi-axis rings on its ICI, and across pods hierarchical over the
// data-centre network (collectives_torus.cpp); needs a torus fabric (Topology::torus()).
enum class Algorithm { automatic, ring, double_binary_tree, hierarchical, halving_doubling, direct, parameter_server, nvls, collnet, torus };
// NCCL's protocols (nccl_tuning.hpp): Simple (large chunks, full bandwidth, a memory fence per
// chunk), LL (8-byte lines of 4 data and 4 flag bytes: lowest latency, a quarter of the
// bandwidth), LL128 (128-byte lines with 8 flag bytes: 120/128 of it, on NVLink).
enum class Protocol { automatic, simple, ll, ll128 };

// How collectives run: when every rank of a group runs NCCL (Topology accelerators with a
// compute capability), automatic choices are NCCL's tuner's and the chosen protocol's fraction
// and latency shape the flows; otherwise collectives are ideal phases of flows at the links'
// achievable bandwidth with path latencies, and the protocol is reported as simple.
struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::all_reduce;
  Algorithm algorithm = Algorithm::automatic;
  Protocol protocol = Protocol::automatic;
  double bytes = 0;
  std::vector<VertexId> ranks;   // participating accelerators, in rank order (>= 1)
  int root = 0;                  // broadcast / reduce: index into ranks; send_recv: sender 0 -> receiver 1
  int server_shards = 1;         // push_pull: ranks[0..shards) act as parameter servers
};

struct CollectiveResult {
  double time_s = 0;
  Algorithm algorithm = Algorithm::ring;   // the one used (resolved when automatic)
  Protocol protocol = Protocol::simple;    // the one used
  int channels = 0;                        // NCCL's channels (CTAs, one SM each), as CollectiveChoice
  double algbw = 0;                        // bytes/s
  double busbw = 0;                        // bytes/s
  std::size_t flows = 0;                   // flows started
};

class Collectives {
 public:
  Collectives(sim::Engine& engine, FlowNetwork& flows, Routing& routing, const Topology& topology);
  // Starts the collective at engine.now(); `on_done` runs on the engine when it completes.
  // Throws std::invalid_argument for an algorithm that does not apply to the kind or group.
  void start(const CollectiveSpec& spec, std::function<void(const CollectiveResult&)> on_done);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The algorithm and protocol a collective would run with (automatic choices resolved), without
// running it. Throws std::invalid_argument as Collectives::start does, with the reason.
struct CollectiveChoice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  // NCCL's channels for the collectives its tuner picks (one CTA, so one SM, each while the
  // kernel runs: what overlapped compute loses); 0 where none are counted (point-to-point
  // kernels, non-NCCL devices).
  int channels = 0;
};
CollectiveChoice resolve_collective(const Topology& topology, const CollectiveSpec& spec);

// Runs one collective alone on a fresh engine and flow network over `topology`.
CollectiveResult run_collective(const Topology& topology, const CollectiveSpec& spec);

// The documented rule behind Algorithm::automatic (see collectives.cpp): by message size and
// group layout (ranks per node, node count).
Algorithm choose_algorithm(CollectiveKind kind, double bytes, int ranks, int nodes);

// Alpha-beta closed form of an algorithm on a contention-free group where every transfer sees
// latency `alpha` and bandwidth `beta`; for hierarchical, `beta_inter`/`alpha_inter` apply to
// the inter-node phase and `ranks_per_node` splits the group (beta_inter <= 0: use alpha and
// beta there too). `server_shards`: push_pull only.
double closed_form_time(CollectiveKind kind, Algorithm algorithm, double bytes, int ranks, double alpha,
                        double beta, int ranks_per_node = 1, double alpha_inter = 0, double beta_inter = 0,
                        int server_shards = 1);

double bus_bandwidth_factor(CollectiveKind kind, int ranks);
std::string to_string(Algorithm algorithm);
std::string to_string(Protocol protocol);
std::string to_string(CollectiveKind kind);

}  // namespace dlsim::network
