// Jobs that share a fabric (fabric_share.hpp): their traffic on NICs and leaf uplinks, and
// new iteration times when the jobs on their links change.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

int Simulation::uplink(int pool, int leaf) {
  const auto key = std::make_pair(pool, leaf);
  auto it = uplinks_.find(key);
  if (it != uplinks_.end()) return it->second;
  const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(pool)];
  const int link = fabric_.add_link(ps.nodes_per_leaf * ps.nic_bandwidth / ps.oversubscription);
  uplinks_.emplace(key, link);
  return link;
}

std::vector<LinkLoad> Simulation::loads_of(const Job& j) {
  std::vector<LinkLoad> loads;
  const int k = static_cast<int>(j.alloc.size());
  if (k <= 1 || j.spec->gradient_bytes <= 0) return loads;
  const double bytes = ring_bytes_per_node(j.spec->gradient_bytes, k);
  std::vector<std::pair<int, int>> leaves;
  for (const Allocation& a : j.alloc) {
    const Node& n = nodes_[static_cast<std::size_t>(a.node)];
    if (n.nic_link < 0) return {};
    loads.push_back({n.nic_link, bytes});
    if (std::find(leaves.begin(), leaves.end(), std::make_pair(n.pool, n.leaf)) == leaves.end()) leaves.emplace_back(n.pool, n.leaf);
  }
  if (leaves.size() > 1) {
    for (const auto& [pool, leaf] : leaves) loads.push_back({uplink(pool, leaf), bytes});
  }
  return loads;
}

void Simulation::update_fabric(int id) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.spec->gradient_bytes <= 0) return;
  std::vector<int> links = fabric_.links_of(id);
  std::vector<LinkLoad> loads = j.gpus > 0 ? loads_of(j) : std::vector<LinkLoad>{};
  if (links.empty() && loads.empty()) return;
  const bool on_fabric = !loads.empty();
  for (const LinkLoad& l : loads) links.push_back(l.link);
  const double own_s = iteration_at(j, std::max(1, j.gpus)).seconds();
  fabric_.set_job(id, own_s, j.spec->overlap_s * own_s / j.base_iter.seconds(), std::move(loads));
  for (int k : fabric_.settle(links)) retime(k, sim::Time::from_seconds(fabric_.iteration_s(k)));
  if (!on_fabric && j.gpus > 0) retime(id, iteration_at(j, j.gpus));
}

void Simulation::retime(int id, sim::Time t_iter) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  t_iter = std::max(t_iter, sim::Time::ns(1));
  if (t_iter == j.t_iter) return;
  // Done at this very instant (its completion event has not run yet): nothing to change.
  if (j.state == JobState::running && progress(j) >= j.spec->iterations) return;
  if (j.state != JobState::running) {
    j.t_iter = t_iter;
    return;
  }
  const sim::Time into = pause_running(j);
  const sim::Time carried = sim::Time::ns(static_cast<std::int64_t>(
      static_cast<double>(into.count_ns()) / static_cast<double>(j.t_iter.count_ns()) * static_cast<double>(t_iter.count_ns())));
  j.t_iter = t_iter;
  resume(id, std::min(carried, t_iter - sim::Time::ns(1)));
}

}  // namespace dlsim::scheduler::detail
