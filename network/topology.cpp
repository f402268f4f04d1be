#include "network/topology.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

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
  LinkSpec spec;
  spec.bandwidth = bandwidth;
  spec.latency_s = latency_s;
  spec.kind = std::move(kind);
  return add_duplex_link(a, b, spec);
}

LinkId Topology::add_duplex_link(VertexId a, VertexId b, const LinkSpec& spec) {
  if (a >= vertices_.size() || b >= vertices_.size() || a == b) {
    throw std::invalid_argument("Topology: a link needs two distinct existing vertices");
  }
  if (!(spec.bandwidth > 0) || !std::isfinite(spec.bandwidth) || !(spec.latency_s >= 0) || !std::isfinite(spec.latency_s)) {
    throw std::invalid_argument("Topology: link bandwidth must be > 0 and latency >= 0");
  }
  if (!(spec.efficiency > 0 && spec.efficiency <= 1) || !(spec.flow_cap > 0)) {
    throw std::invalid_argument("Topology: link efficiency must be in (0, 1] and its per-flow cap > 0");
  }
  LinkInfo info{a, b, spec.bandwidth, spec.latency_s, spec.kind, spec.tech, spec.bandwidth * spec.efficiency, spec.flow_cap};
  const auto forward = static_cast<LinkId>(links_.size());
  links_.push_back(info);
  std::swap(info.from, info.to);
  links_.push_back(std::move(info));
  out_[a].push_back(forward);
  out_[b].push_back(forward + 1);
  boost::add_edge(a, b, forward, graph_);
  boost::add_edge(b, a, forward + 1, graph_);
  return forward;
}

void Topology::set_reduction_bandwidth(VertexId v, double bandwidth) {
  if (v >= vertices_.size() || vertices_[v].kind != VertexKind::switch_) {
    throw std::invalid_argument("Topology: only a switch reduces in the network");
  }
  if (!(bandwidth >= 0) || !std::isfinite(bandwidth)) {
    throw std::invalid_argument("Topology: a reduction bandwidth must be finite and >= 0");
  }
  vertices_[v].reduction_bandwidth = bandwidth;
}

int TorusLayout::pod_size() const {
  int n = 1;
  for (int d : dims) n *= d;
  return n;
}

int TorusLayout::coordinate(int cell, std::size_t d) const {
  for (std::size_t i = 0; i < d; ++i) cell /= dims[i];
  return cell % dims[d];
}

void Topology::set_torus(TorusLayout layout) {
  const bool shaped = layout.wrap.size() == layout.dims.size() && layout.pods >= 1 &&
                      std::all_of(layout.dims.begin(), layout.dims.end(), [](int d) { return d >= 1; });
  if (!shaped || layout.cells.size() != accelerators_.size() ||
      static_cast<std::size_t>(layout.pod_size()) * static_cast<std::size_t>(layout.pods) != accelerators_.size()) {
    throw std::invalid_argument("Topology: a torus layout needs one cell per accelerator, pods x dims of them");
  }
  for (int c : layout.cells) {
    if (c < 0 || c >= layout.pod_size()) throw std::invalid_argument("Topology: a torus cell is outside its pod");
  }
  torus_ = std::move(layout);
}

int Topology::rank_of(VertexId v) const {
  // Accelerators are added in increasing vertex order, so their ids are sorted.
  const auto it = std::lower_bound(accelerators_.begin(), accelerators_.end(), v);
  return it != accelerators_.end() && *it == v ? static_cast<int>(it - accelerators_.begin()) : -1;
}

std::vector<VertexId> Topology::vertices_of_kind(VertexKind kind) const {
  std::vector<VertexId> out;
  for (VertexId v = 0; v < vertices_.size(); ++v) {
    if (vertices_[v].kind == kind) out.push_back(v);
  }
  return out;
}

}  // namespace dlsim::network
