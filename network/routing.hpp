// Routing: the path a flow takes, as the list of directed links from source to destination.
// Paths are shortest in hop count and, among those, widest (largest bottleneck bandwidth): a
// GPU reaches a peer over NVLink rather than through a PCIe NIC two hops away too. Where
// several paths are equally short and wide, ECMP picks one by a hash of (source, destination,
// flow key), the same on every run, so that flows of one pair can spread over parallel spines
// while results stay reproducible.
//
// A query runs a breadth-first search from the source, labelling each vertex with its hop
// distance and the widest bottleneck of a shortest path to it, and stops once the level before
// the destination is complete. It then walks back from the destination choosing, at each
// vertex, one of the links from a vertex one hop nearer that keeps the path's width. Scratch arrays are reused between queries (no allocation per query), and paths are
// cached by (source, destination, flow key), since collectives ask for the same pairs again.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "network/topology.hpp"

namespace dlsim::network {

using Path = std::vector<LinkId>;

class Routing {
 public:
  explicit Routing(const Topology& topology);

  // The links from `from` to `to` (empty when from == to). Throws std::invalid_argument for an
  // unknown vertex or when `to` cannot be reached.
  const Path& path(VertexId from, VertexId to, std::uint64_t flow_key = 0);
  // Hop distance, or -1 when unreachable. Throws std::invalid_argument for an unknown vertex.
  int hops(VertexId from, VertexId to);
  // Sum of link latencies along a path.
  double latency(const Path& p) const;
  // Smallest link bandwidth along a path (infinity for an empty path).
  double bottleneck(const Path& p) const;

 private:
  // Labels distances from `from` until `to` is reached; returns its distance or -1.
  int search(VertexId from, VertexId to);
  void check_vertex(VertexId v) const;

  const Topology& topology_;
  std::vector<int> distance_;           // valid where stamp_ == epoch_
  std::vector<double> width_;           // widest bottleneck of a shortest path from the source
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 0;
  std::vector<VertexId> queue_;
  // Ordered map: looked up only, but no hash-order dependence can creep in.
  std::map<std::tuple<VertexId, VertexId, std::uint64_t>, Path> cache_;
};

}  // namespace dlsim::network
