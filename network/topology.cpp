#include "network/topology.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::network {

VertexId Topology::add_vertex(VertexInfo info) {
  const auto id = static_cast<VertexId>(vertices_.size());
  if (info.kind == VertexKind::accelerator) {
    accelerators_.push_back(id);
    nodes_ = std::max(nodes_, info.node + 1);
  }
  vertices_.push_back(std::move(info));
  out_.emplace_back();
  boost::add_vertex(graph_);
  return id;
}

LinkId Topology::add_duplex_link(VertexId a, VertexId b, double bandwidth, double latency_s, std::string kind) {
  if (a >= vertices_.size() || b >= vertices_.size() || a == b) {
    throw std::invalid_argument("Topology: a link needs two distinct existing vertices");
  }
  if (!(bandwidth > 0) || !std::isfinite(bandwidth) || !(latency_s >= 0) || !std::isfinite(latency_s)) {
    throw std::invalid_argument("Topology: link bandwidth must be > 0 and latency >= 0");
  }
  const auto forward = static_cast<LinkId>(links_.size());
  links_.push_back({a, b, bandwidth, latency_s, kind});
  links_.push_back({b, a, bandwidth, latency_s, std::move(kind)});
  out_[a].push_back(forward);
  out_[b].push_back(forward + 1);
  boost::add_edge(a, b, forward, graph_);
  boost::add_edge(b, a, forward + 1, graph_);
  return forward;
}

std::vector<VertexId> Topology::vertices_of_kind(VertexKind kind) const {
  std::vector<VertexId> out;
  for (VertexId v = 0; v < vertices_.size(); ++v) {
    if (vertices_[v].kind == kind) out.push_back(v);
  }
  return out;
}

}  // namespace dlsim::network
