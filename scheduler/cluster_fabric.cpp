// Jobs that share a fabric (fabric_share.hpp): their traffic on NICs, leaf uplinks and WAN
// links, new iteration times when the jobs on their links change, and the egress they pay.
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

int Simulation::wan_link(const std::string& a, const std::string& b) {
  const std::pair<std::string, std::string> key = a < b ? std::make_pair(a, b) : std::make_pair(b, a);
  auto it = wan_links_.find(key);
  if (it != wan_links_.end()) return it->second;
  const int link = fabric_.add_link(spec_.wan_bandwidth);
  wan_links_.emplace(key, link);
  return link;
}

Simulation::JobTraffic Simulation::traffic_of(const Job& j) {
  JobTraffic t;
  const int k = static_cast<int>(j.alloc.size());
  if (k <= 1 || j.spec->gradient_bytes <= 0) return t;
  const double bytes = ring_bytes_per_node(j.spec->gradient_bytes, k);
  const auto location = [this](int node) { return spec_.pools[static_cast<std::size_t>(nodes_[static_cast<std::size_t>(node)].pool)].location(); };
  std::vector<int> ring;
  for (const Allocation& a : j.alloc) ring.push_back(a.node);
  std::sort(ring.begin(), ring.end(), [&](int a, int b) {
    const Location la = location(a), lb = location(b);
    const Node& na = nodes_[static_cast<std::size_t>(a)];
    const Node& nb = nodes_[static_cast<std::size_t>(b)];
    return std::tie(la.region, la.zone, na.pool, na.leaf, a) < std::tie(lb.region, lb.zone, nb.pool, nb.leaf, b);
  });
  bool modelled = true;
  std::vector<std::pair<int, int>> leaves;
  std::vector<std::pair<std::string, std::string>> regions;  // crossed pairs
  for (int i = 0; i < k; ++i) {
    const int a = ring[static_cast<std::size_t>(i)], b = ring[static_cast<std::size_t>((i + 1) % k)];
    const Node& n = nodes_[static_cast<std::size_t>(a)];
    modelled = modelled && n.nic_link >= 0;
    if (n.nic_link >= 0) t.loads.push_back({n.nic_link, bytes});
    if (std::find(leaves.begin(), leaves.end(), std::make_pair(n.pool, n.leaf)) == leaves.end()) leaves.emplace_back(n.pool, n.leaf);
    const Location from = location(a), to = location(b);
    if (from.region == to.region && from.zone == to.zone) continue;
    const double usd = egress_cost(bytes, from, to, spec_.egress);
    if (usd > 0) t.egress_usd.emplace_back(n.pool, usd);
    const auto pair = from.region < to.region ? std::make_pair(from.region, to.region) : std::make_pair(to.region, from.region);
    if (from.region != to.region && std::find(regions.begin(), regions.end(), pair) == regions.end()) regions.push_back(pair);
  }
  if (!modelled) {
    t.loads.clear();
    return t;
  }
  if (leaves.size() > 1) {
    for (const auto& [pool, leaf] : leaves) t.loads.push_back({uplink(pool, leaf), bytes});
  }
  for (const auto& [a, b] : regions) t.loads.push_back({wan_link(a, b), bytes});
  return t;
}

double Simulation::phase_of(int id) const {
  const Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.state != JobState::running || j.t_iter.count_ns() <= 0) return 0.0;
  return sim::Time::ns((engine_.now() - j.run_start).count_ns() % j.t_iter.count_ns()).seconds();
}

void Simulation::charge_traffic_egress(Job& j, std::int64_t iterations) {
  for (const auto& [pool, usd] : j.egress_per_iteration) {
    const double cost = usd * static_cast<double>(iterations);
    j.result.costs.egress += cost;
    j.result.cost_usd += cost;
    pool_results_[static_cast<std::size_t>(pool)].costs.egress += cost;
  }
}

void Simulation::update_fabric(int id) {
  Job& j = jobs_[static_cast<std::size_t>(id)];
  if (j.spec->gradient_bytes <= 0) return;
  std::vector<int> links = fabric_.links_of(id);
  JobTraffic traffic = j.gpus > 0 ? traffic_of(j) : JobTraffic{};
  j.egress_per_iteration = std::move(traffic.egress_usd);
  std::vector<LinkLoad> loads = std::move(traffic.loads);
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
