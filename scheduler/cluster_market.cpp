// Spot markets replayed from price histories, fallback pools, reserved commitments and
// checkpoint egress.
#include "scheduler/cluster_simulation_impl.hpp"

namespace dlsim::scheduler::detail {

void Simulation::init_markets() {
  const std::size_t n = spec_.pools.size();
  fallback_.assign(n, -1);
  served_names_.assign(n, {});
  market_open_.assign(n, 1);
  closed_since_.assign(n, 0.0);
  waiting_.assign(n, 0);
  committed_live_.assign(n, 0);
  committed_busy_usd_.assign(n, 0.0);
  committed_provisioning_usd_.assign(n, 0.0);
  for (std::size_t p = 0; p < n; ++p) {
    for (std::size_t q = 0; q < n; ++q) {
      if (!spec_.pools[p].fallback.empty() && spec_.pools[q].name == spec_.pools[p].fallback) fallback_[p] = static_cast<int>(q);
    }
    if (spec_.pools[p].market.enabled()) market_open_[p] = spec_.pools[p].market.open_at(0) ? 1 : 0;
  }
  // A pool serves jobs that name it, or a pool whose fallbacks lead to it.
  for (std::size_t p = 0; p < n; ++p) {
    for (int q = static_cast<int>(p); q >= 0; q = fallback_[static_cast<std::size_t>(q)]) {
      served_names_[static_cast<std::size_t>(q)].push_back(spec_.pools[p].name);
    }
  }
}

bool Simulation::serves(int pool, const std::string& name) const {
  const auto& names = served_names_[static_cast<std::size_t>(pool)];
  return std::find(names.begin(), names.end(), name) != names.end();
}

void Simulation::arm_market(int pool) {
  const double at = spec_.pools[static_cast<std::size_t>(pool)].market.next_crossing(engine_.now().seconds());
  if (!(at < options_.horizon_s)) return;
  engine_.schedule_at(sim::Time::from_seconds(at), [this, pool] { market_crossing(pool); });
}

void Simulation::market_crossing(int pool) {
  const std::size_t p = static_cast<std::size_t>(pool);
  const PoolSpec& ps = spec_.pools[p];
  const bool open = ps.market.open_at(engine_.now().seconds());
  if (open != static_cast<bool>(market_open_[p])) {
    market_open_[p] = open ? 1 : 0;
    if (!open) {
      closed_since_[p] = engine_.now().seconds();
      for (std::size_t id = 0; id < nodes_.size(); ++id) {
        const Node& n = nodes_[id];
        if (n.pool != pool || (n.state != NodeState::ready && n.state != NodeState::busy)) continue;
        const int node = static_cast<int>(id), gen = n.generation;
        spot_notice(node, gen);
        engine_.schedule_in(sim::Time::from_seconds(ps.notice_s), [this, node, gen] { node_lost(node, gen, true); });
      }
    } else {
      pool_results_[p].unavailable_s += engine_.now().seconds() - closed_since_[p];
      const int waiting = waiting_[p];
      waiting_[p] = 0;
      if (!all_jobs_finished()) {
        for (int i = 0; i < waiting; ++i) add_node(pool, false);
      }
      request_pass();
    }
  }
  arm_market(pool);
}

void Simulation::request_node(int pool) {
  for (int p = pool; p >= 0; p = fallback_[static_cast<std::size_t>(p)]) {
    const PoolSpec& ps = spec_.pools[static_cast<std::size_t>(p)];
    if (!market_open_[static_cast<std::size_t>(p)]) continue;
    if (p != pool && ps.autoscaled() && live_nodes(p) >= ps.max_nodes) continue;
    if (p != pool) ++pool_results_[static_cast<std::size_t>(p)].fallback_nodes;
    add_node(p, false);
    return;
  }
  ++waiting_[static_cast<std::size_t>(pool)];
}

void Simulation::charge_checkpoint_transfer(Job& j, bool write) {
  const CheckpointSpec& c = j.spec->checkpoint;
  if (!(c.size_bytes > 0) || j.alloc.empty()) return;
  const int gpus = held_gpus(j);
  for (const Allocation& a : j.alloc) {
    const int pool = nodes_[static_cast<std::size_t>(a.node)].pool;
    const Location node = spec_.pools[static_cast<std::size_t>(pool)].location();
    const double bytes = c.size_bytes * a.gpus / gpus;
    const double usd = write ? egress_cost(bytes, node, c.storage(), spec_.egress)
                             : egress_cost(bytes, c.storage(), node, spec_.egress);
    j.result.costs.egress += usd;
    j.result.cost_usd += usd;
    pool_results_[static_cast<std::size_t>(pool)].costs.egress += usd;
  }
}

void Simulation::settle_pools() {
  const double end_s = engine_.now().seconds();
  for (std::size_t p = 0; p < spec_.pools.size(); ++p) {
    const PoolSpec& ps = spec_.pools[p];
    PoolResult& pr = pool_results_[p];
    if (!market_open_[p]) pr.unavailable_s += end_s - closed_since_[p];
    if (ps.capacity != Capacity::reserved || ps.nodes == 0) continue;
    const double commitment = committed_cost(ps.price_per_node_hour, ps.nodes, end_s);
    pr.cost_usd += commitment;
    pr.costs.reserved += commitment;
    pr.costs.idle += commitment - std::min(commitment, committed_busy_usd_[p]);
    pr.costs.provisioning += std::min(commitment, committed_provisioning_usd_[p]);
    billed_ += commitment;
    busy_billed_ += std::min(commitment, committed_busy_usd_[p]);
  }
}

}  // namespace dlsim::scheduler::detail
