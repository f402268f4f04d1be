// The alpha-beta closed forms of the collective algorithms, and the rule behind
// Algorithm::automatic.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "network/collectives.hpp"
#include "network/collectives_detail.hpp"

namespace dlsim::network {
namespace {

// Below this many bytes per extra node, trees beat rings (see choose_algorithm).
constexpr double kTreeBytesPerExtraNode = 256.0 * 1024;

// Group shape for the closed forms: g ranks per node, N nodes, inter-node alpha/beta (the
// intra-node ones when beta_inter is not given).
struct Shape {
  int g = 1;
  int nodes = 1;
  double alpha_inter = 0;
  double beta_inter = 0;
};

Shape shape_of(int ranks, int ranks_per_node, double alpha, double beta, double alpha_inter, double beta_inter) {
  Shape s;
  s.g = std::max(ranks_per_node, 1);
  if (ranks % s.g != 0) {
    throw std::invalid_argument("closed_form_time: ranks_per_node " + std::to_string(s.g) + " does not divide " +
                                std::to_string(ranks) + " ranks");
  }
  s.nodes = ranks / s.g;
  const bool inter_given = beta_inter > 0;
  s.alpha_inter = inter_given ? alpha_inter : alpha;
  s.beta_inter = inter_given ? beta_inter : beta;
  return s;
}

// All-reduce. Ring: 2(p-1) pipelined steps of latency; every edge streams 2(p-1)/p n.
// NVLS (in-switch reduction, one node): each GPU port carries n (p+1)/p each way. CollNet
// (in-network reduction across nodes): the intra-node ring and each rank's n/g shard through
// the NIC, pipelined, so the slower of the two.
// Double binary tree: the pipeline fills up and back down the trees, 2 ceil(log2 p) hops;
// the busiest rank link carries min(p, 4) flows of n/2 (a rank is an inner node with a parent
// and two children in one tree and a leaf in the other: 3 + 1), so n min(p,4) / (2 beta).
// Hierarchical: intra-node reduce-scatter and all-gather rings of g, then a rail ring over N
// nodes on n/g. Halving-doubling: 2 log2 p steps moving 2(p-1)/p n in all; on a non-power of
// two p, MPICH's fold (collectives_plans.cpp, halving_doubling_all_reduce): with p' the largest
// power of two <= p, a step of the whole n into the p' survivors and one back out around their
// halving-doubling, 2 (alpha + n/beta) + 2 log2(p') alpha + 2 (p'-1)/p' n/beta.
double all_reduce_time(Algorithm a, double n, int p, double alpha, double beta, const Shape& s) {
  const double P = p;
  switch (a) {
    case Algorithm::ring:
      return 2 * (P - 1) * alpha + 2 * (P - 1) / P * n / beta;
    case Algorithm::double_binary_tree:
      return 2 * detail::ceil_log2(p) * alpha + std::min(p, 4) * n / (2 * beta);
    case Algorithm::hierarchical: {
      const double g = s.g, N = s.nodes;
      const double intra = 2 * ((g - 1) * alpha + (g - 1) / g * n / beta);
      const double inter = 2 * (N - 1) * s.alpha_inter + 2 * (N - 1) / N * (n / g) / s.beta_inter;
      return intra + inter;
    }
    case Algorithm::halving_doubling: {
      if (detail::is_power_of_two(p)) return 2 * detail::ceil_log2(p) * alpha + 2 * (P - 1) / P * n / beta;
      const int levels = detail::floor_log2(p);
      const double survivors = 1 << levels;
      return 2 * (alpha + n / beta) + 2 * levels * alpha + 2 * (survivors - 1) / survivors * n / beta;
    }
    case Algorithm::nvls:  // one pipelined phase: n (p+1)/p through each GPU's switch port
      return alpha + (P + 1) / P * n / beta;
    case Algorithm::collnet: {  // pipelined: the intra-node ring or the shard through the NIC
      const double g = s.g;
      return alpha + s.alpha_inter + std::max(2 * (g - 1) / g * n / beta, n / g / s.beta_inter);
    }
    default:
      break;
  }
  throw std::logic_error("unreachable");
}

// Everything but all-reduce. Ring reduce-scatter / all-gather: p-1 pipelined steps, (p-1)/p n
// per edge; halving-doubling: log2 p steps, same bytes. Ring broadcast / reduce: a chain of p-1
// hops streaming n. Two-tree broadcast / reduce: 1 + ceil(log2(p-1)) hops (root edge, then a
// tree over p-1 ranks); every rank sends and receives at most two halves, n in all.
// All-to-all direct: one step, (p-1)/p n out of every rank; hierarchical: an intra-node step
// of (g-1)/g n, then a rail step of (N-1)/N n. Parameter server: push then pull; a server
// link carries W n/S, a worker link n, whichever is larger.
double other_time(CollectiveKind kind, Algorithm a, double n, int p, double alpha, double beta, const Shape& s,
                  int shards) {
  const double P = p;
  switch (kind) {
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      return (a == Algorithm::ring ? (P - 1) : detail::ceil_log2(p)) * alpha + (P - 1) / P * n / beta;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      if (a == Algorithm::ring) return (P - 1) * alpha + n / beta;
      return (1 + detail::ceil_log2(p - 1)) * alpha + n / beta;
    case CollectiveKind::all_to_all: {
      if (a == Algorithm::direct) return alpha + (P - 1) / P * n / beta;
      const double g = s.g, N = s.nodes;
      const double intra = s.g > 1 ? alpha + (g - 1) / g * n / beta : 0.0;
      const double inter = s.nodes > 1 ? s.alpha_inter + (N - 1) / N * n / s.beta_inter : 0.0;
      return intra + inter;
    }
    case CollectiveKind::send_recv:
      return alpha + n / beta;
    case CollectiveKind::push_pull: {
      if (shards < 1 || shards >= p) {
        throw std::invalid_argument("closed_form_time: server_shards must be in [1, ranks)");
      }
      const double workers = p - shards;
      return 2 * (alpha + std::max(workers, double(shards)) / shards * n / beta);
    }
    case CollectiveKind::all_reduce:
      break;
  }
  throw std::logic_error("unreachable");
}

}  // namespace

// The rule, in the spirit of NCCL's tuner (which predicts latency + bytes / bandwidth for every
// algorithm and takes the fastest; NCCL src/graph/tuning.cc):
// - all-reduce: with 2 ranks or fewer every algorithm moves the same bytes: ring. Below
//   T(N) = 256 KiB x max(1, N-1) bytes (N nodes): double binary tree, whose 2 log2(p) hops of
//   latency beat the ring's 2(p-1). Above it: hierarchical when the group spans several nodes
//   with several ranks on each (the inter-node rings move only n/g each and run on every rail
//   at once), else ring.
//   Why T grows with N: on a fabric with one NIC per node the flat tree crosses every NIC with
//   about one n more than the ring or the hierarchical inter-node phase do (about 3n against
//   2n per direction), while saving about 2(N-1) network hops of latency; the crossover is
//   n ~ 2 (N-1) alpha_net beta_net. With alpha_net ~ 5 us per network hop (an assumed
//   representative NIC-to-NIC latency) and beta_net ~ 24 GB/s (one HDR NIC, measured.yaml
//   nccl-per-nic-hdr) that is ~ 240 kB, rounded to 256 KiB, per extra node. Checked on our own
//   model (build_cluster: nvswitch nodes of 8 GPUs, one 12.5 GB/s NIC each, single switch):
//   the tree moves 3.0 n through each NIC against 1.9-2.3 n, and it stops beating hierarchical
//   between 0.25 and 1 MB at 2-4 nodes, near 1 MB at 8, 1-4 MB at 16, 4-16 MB at 64, which
//   T(N) = 0.25, 0.75, 1.75, 3.75, 15.75 MiB follows. In a single node
//   the same 256 KiB is kept: NCCL runs rings inside a node (its intra-node "tree" is a
//   chain), so trees are used only where latency dominates.
// - broadcast, reduce: two-tree below the same T(N) with more than 2 ranks, ring (a pipelined
//   chain, NCCL's only algorithm for them) above.
// - reduce-scatter, all-gather: ring (as NCCL: it has no tree for them).
// - all-to-all: hierarchical (rail-aligned, two phases, NCCL 2.12's PXN) when the group spans
//   several nodes with several ranks on each: it keeps network traffic on rails and needs
//   p(g+N-2) flows rather than p(p-1); direct otherwise.
// - send/recv: direct; push/pull: parameter server.
// Halving-doubling is never chosen: NCCL has no such algorithm; ask for it by name.
Algorithm choose_algorithm(CollectiveKind kind, double bytes, int ranks, int nodes) {
  nodes = std::clamp(nodes, 1, std::max(ranks, 1));
  const bool several_per_node = nodes > 1 && ranks > nodes;
  const bool small = bytes < kTreeBytesPerExtraNode * std::max(1, nodes - 1);
  switch (kind) {
    case CollectiveKind::all_reduce:
      if (ranks <= 2) return Algorithm::ring;
      if (small) return Algorithm::double_binary_tree;
      return several_per_node ? Algorithm::hierarchical : Algorithm::ring;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      return ranks > 2 && small ? Algorithm::double_binary_tree : Algorithm::ring;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather:
      return Algorithm::ring;
    case CollectiveKind::all_to_all:
      return several_per_node ? Algorithm::hierarchical : Algorithm::direct;
    case CollectiveKind::send_recv:
      return Algorithm::direct;
    case CollectiveKind::push_pull:
      return Algorithm::parameter_server;
  }
  return Algorithm::ring;
}

double closed_form_time(CollectiveKind kind, Algorithm algorithm, double bytes, int ranks, double alpha, double beta,
                        int ranks_per_node, double alpha_inter, double beta_inter, int server_shards) {
  if (ranks < 1 || !(beta > 0) || !(alpha >= 0) || !(bytes >= 0)) {
    throw std::invalid_argument("closed_form_time: needs ranks >= 1, beta > 0, alpha >= 0, bytes >= 0");
  }
  const Shape shape = shape_of(ranks, ranks_per_node, alpha, beta, alpha_inter, beta_inter);
  if (algorithm == Algorithm::automatic) {
    algorithm = choose_algorithm(kind, bytes, ranks, shape.nodes);
  }
  if (!detail::applies(kind, algorithm)) {
    throw std::invalid_argument("closed_form_time: " + to_string(algorithm) + " does not implement " + to_string(kind));
  }
  if (algorithm == Algorithm::torus) {
    throw std::invalid_argument("closed_form_time: torus has no closed form here (it depends on the torus's axes)");
  }
  if (algorithm == Algorithm::halving_doubling && kind != CollectiveKind::all_reduce && !detail::is_power_of_two(ranks)) {
    throw std::invalid_argument("closed_form_time: halving_doubling " + to_string(kind) +
                                " needs a power-of-two number of ranks (only all-reduce folds the rest)");
  }
  const bool pairwise = kind == CollectiveKind::send_recv || kind == CollectiveKind::push_pull;
  if (ranks == 1 && !pairwise) return 0.0;  // nothing moves
  if (kind == CollectiveKind::all_reduce) return all_reduce_time(algorithm, bytes, ranks, alpha, beta, shape);
  return other_time(kind, algorithm, bytes, ranks, alpha, beta, shape, server_shards);
}

}  // namespace dlsim::network
