// Algorithm::torus: all-reduce, reduce-scatter and all-gather on a TPU slice's torus, and across
// pods joined by the data-centre network (PaLM's two v4 pods).
//
// Inside a pod, as XLA runs collectives on the ICI (Austin et al., "How to Scale Your Model",
// jax-ml/scaling-book sharding.md: a reduce-scatter or all-gather over several axes gets the
// bidirectional bandwidth of each axis, "increases the available bandwidth by a factor of
// n_axes"): the message is cut into one stripe per axis of the group; stripe s reduce-scatters
// along axis s, then s+1, ... (each step on the shard the step before left), so that at every
// step each axis carries one stripe and every link of the chip is busy in both directions. An
// axis that closes into a ring runs a bidirectional ring (half the bytes each way); a mesh line
// runs two pipelined chains, one towards each end (the link from position i to i+1 carries the
// partial sums of the k-1-i shards beyond it: its busiest link moves (k-1)/k of the shard, the
// cost of a one-way ring, as the scaling book states for axes without wraparound). The
// all-gather retraces the steps. A ring or chain step is one pipelined phase (collectives_detail
// .hpp); phases are barriers, so with unequal axes a stripe may wait for a slower one.
//
// Across pods (hierarchical, as PaLM reduces its gradients: Chowdhery et al. 2022, section 4):
// reduce-scatter inside every pod, then for every cell of the group a ring all-reduce of that
// cell's shard over its copies in the other pods, through the hosts' NICs (DCN), then the
// all-gather inside every pod. Only the middle phase leaves the pods.
//
// Sizes follow nccl-tests (collectives.hpp): n is the per-rank buffer.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "network/collectives_detail.hpp"

namespace dlsim::network::detail {
namespace {

// The members of a group on one pod's cells, checked to be a box of coordinates.
struct Members {
  std::vector<int> pods;                      // pods spanned, ascending
  std::vector<int> cells;                     // the group's cells in each pod, ascending
  std::map<std::pair<int, int>, VertexId> at;  // (pod, cell) -> vertex
};

std::optional<Members> members_of(const Topology& topology, const std::vector<VertexId>& ranks) {
  const TorusLayout& torus = topology.torus();
  std::map<int, std::vector<int>> cells_by_pod;
  Members m;
  for (VertexId v : ranks) {
    const int r = topology.rank_of(v);
    if (r < 0) return std::nullopt;
    const int pod = r / torus.pod_size();
    const int cell = torus.cells[static_cast<std::size_t>(r)];
    cells_by_pod[pod].push_back(cell);
    m.at[{pod, cell}] = v;
  }
  for (auto& [pod, cells] : cells_by_pod) {
    std::sort(cells.begin(), cells.end());
    if (m.pods.empty()) m.cells = cells;
    if (cells != m.cells) return std::nullopt;  // pods hold different parts of the group
    m.pods.push_back(pod);
  }
  return m;
}

// Whether the coordinates along an axis are evenly spaced around the whole wrapped axis.
bool closes_ring(const std::vector<int>& coords, int size, bool wrap) {
  const int k = static_cast<int>(coords.size());
  if (!wrap || k < 3) return false;
  const int step = coords[1] - coords[0];
  for (int i = 1; i < k; ++i) {
    if (coords[static_cast<std::size_t>(i)] - coords[static_cast<std::size_t>(i - 1)] != step) return false;
  }
  return step * k == size;
}

// Product of the sizes of the axes a stripe has already reduced (order[0..steps) from `first`).
double reduced(const TorusPlan& t, int first, int steps) {
  double f = 1;
  const int axes = static_cast<int>(t.sizes.size());
  for (int j = 0; j < steps; ++j) f *= t.sizes[static_cast<std::size_t>((first + j) % axes)];
  return f;
}

// One reduce-scatter or all-gather step along axis `a` on `bytes` per rank (the larger side:
// the input of a reduce-scatter, the output of an all-gather), every line at once.
void axis_step(const TorusPlan& t, int a, double bytes, PhaseBuilder& b) {
  const auto axis = static_cast<std::size_t>(a);
  for (const std::vector<VertexId>& line : t.lines[axis]) {
    const std::size_t k = line.size();
    const double kd = static_cast<double>(k);
    if (t.ring[axis]) {
      std::vector<VertexId> back(line.rbegin(), line.rend());
      ring_pipeline(line, (kd - 1) / kd * bytes / 2, static_cast<int>(k) - 1, b);
      ring_pipeline(back, (kd - 1) / kd * bytes / 2, static_cast<int>(k) - 1, b);
      continue;
    }
    const std::size_t first = b.size();
    double sum = 0;
    for (std::size_t i = 0; i + 1 < k; ++i) {
      sum += b.add(line[i], line[i + 1], static_cast<double>(k - 1 - i) * bytes / kd);
      sum += b.add(line[i + 1], line[i], static_cast<double>(i + 1) * bytes / kd);
    }
    b.fill(first, sum / 2);  // k-1 hops at the chains' mean hop latency (2(k-1) hops in sum)
  }
}

// In-pod step `step` of the reduce-scatter (gather = false) or of the all-gather, which retraces
// the reduce-scatter's steps backwards.
void pod_step(const Plan& plan, int step, bool gather, PhaseBuilder& b) {
  const TorusPlan& t = *plan.torus;
  const int axes = static_cast<int>(t.sizes.size());
  const int rs_step = gather ? axes - 1 - step : step;
  for (int s = 0; s < axes; ++s) {
    const int a = (s + rs_step) % axes;
    axis_step(t, a, plan.bytes / axes / reduced(t, s, rs_step), b);
  }
}

// Across pods: every cell's shard (n / members per pod) over its copies, by rings on the DCN.
void cross_pod_step(const Plan& plan, PhaseBuilder& b) {
  const TorusPlan& t = *plan.torus;
  const double shard = plan.bytes / t.pod_group;
  const double P = t.pods;
  const bool all_reduce = plan.kind == CollectiveKind::all_reduce;
  for (const std::vector<VertexId>& ring : t.pod_rings) {
    if (all_reduce) {
      ring_pipeline(ring, 2 * (P - 1) / P * shard, 2 * (t.pods - 1), b);
    } else {
      ring_pipeline(ring, (P - 1) / P * shard, t.pods - 1, b);
    }
  }
}

}  // namespace

std::shared_ptr<const TorusPlan> torus_plan_of(const Topology& topology, const std::vector<VertexId>& ranks) {
  const TorusLayout& torus = topology.torus();
  if (torus.empty() || ranks.size() < 2) return nullptr;
  const std::optional<Members> m = members_of(topology, ranks);
  if (!m) return nullptr;
  // The group's coordinates per axis; it must be their product (a box, possibly strided).
  std::vector<std::vector<int>> coords(torus.dims.size());
  for (std::size_t d = 0; d < coords.size(); ++d) {
    for (int c : m->cells) coords[d].push_back(torus.coordinate(c, d));
    std::sort(coords[d].begin(), coords[d].end());
    coords[d].erase(std::unique(coords[d].begin(), coords[d].end()), coords[d].end());
  }
  std::size_t box = 1;
  for (const auto& c : coords) box *= c.size();
  if (box != m->cells.size()) return nullptr;
  auto t = std::make_shared<TorusPlan>();
  t->pods = static_cast<int>(m->pods.size());
  t->pod_group = static_cast<int>(m->cells.size());
  int stride = 1;
  for (std::size_t d = 0; d < coords.size(); stride *= torus.dims[d], ++d) {
    if (coords[d].size() < 2) continue;
    t->sizes.push_back(static_cast<int>(coords[d].size()));
    t->ring.push_back(closes_ring(coords[d], torus.dims[d], torus.wrap[d]));
    auto& lines = t->lines.emplace_back();
    for (int pod : m->pods) {
      for (int cell : m->cells) {
        if (torus.coordinate(cell, d) != coords[d].front()) continue;  // one line per start
        auto& line = lines.emplace_back();
        const int base = cell - coords[d].front() * stride;
        for (int x : coords[d]) line.push_back(m->at.at({pod, base + x * stride}));
      }
    }
  }
  if (t->pods > 1) {
    for (int cell : m->cells) {
      auto& ring = t->pod_rings.emplace_back();
      for (int pod : m->pods) ring.push_back(m->at.at({pod, cell}));
    }
  }
  return t;
}

int torus_phase_count(const Plan& plan) {
  const int axes = static_cast<int>(plan.torus->sizes.size());
  const int cross = plan.torus->pods > 1 ? 1 : 0;
  return (plan.kind == CollectiveKind::all_reduce ? 2 * axes : axes) + cross;
}

void torus_phase(const Plan& plan, int phase, PhaseBuilder& b) {
  const int axes = static_cast<int>(plan.torus->sizes.size());
  const bool cross = plan.torus->pods > 1;
  switch (plan.kind) {
    case CollectiveKind::all_reduce:
      if (phase < axes) return pod_step(plan, phase, false, b);
      if (cross && phase == axes) return cross_pod_step(plan, b);
      return pod_step(plan, phase - axes - (cross ? 1 : 0), true, b);
    case CollectiveKind::reduce_scatter:
      if (phase < axes) return pod_step(plan, phase, false, b);
      return cross_pod_step(plan, b);
    case CollectiveKind::all_gather:
      if (cross && phase == 0) return cross_pod_step(plan, b);
      return pod_step(plan, phase - (cross ? 1 : 0), true, b);
    default:
      throw std::logic_error("collectives: torus applies to all-reduce, reduce-scatter and all-gather only");
  }
}

}  // namespace dlsim::network::detail
