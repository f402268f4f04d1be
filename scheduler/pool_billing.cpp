#include "scheduler/pool_billing.hpp"

namespace dlsim::scheduler {

CostBreakdown& CostBreakdown::operator+=(const CostBreakdown& o) {
  on_demand += o.on_demand;
  spot += o.spot;
  reserved += o.reserved;
  idle += o.idle;
  provisioning += o.provisioning;
  storage += o.storage;
  egress += o.egress;
  return *this;
}

namespace {
double on_demand_price(const PoolSpec& pool) {
  return pool.on_demand_price_per_node_hour >= 0 ? pool.on_demand_price_per_node_hour : pool.price_per_node_hour;
}
}  // namespace

double node_bill(const PoolSpec& pool, bool committed, double t0_s, double held_s, const BillingRule& rule) {
  if (held_s <= 0) return 0.0;
  if (pool.market.enabled()) return billed_cost(pool.market.prices, pool.market.start_s + t0_s, held_s, rule);
  if (pool.capacity == Capacity::reserved) return committed ? 0.0 : billed_cost(on_demand_price(pool), 1, held_s, rule);
  return billed_cost(pool.price_per_node_hour, 1, held_s, rule);
}

double node_value(const PoolSpec& pool, bool committed, double t0_s, double t1_s) {
  if (t1_s <= t0_s) return 0.0;
  const double hours = (t1_s - t0_s) / 3600.0;
  if (pool.market.enabled()) return pool.market.prices.mean_price(pool.market.start_s + t0_s, pool.market.start_s + t1_s) * hours;
  if (pool.capacity == Capacity::reserved && !committed) return on_demand_price(pool) * hours;
  return pool.price_per_node_hour * hours;
}

double& node_category(CostBreakdown& costs, const PoolSpec& pool, bool committed) {
  switch (pool.capacity) {
    case Capacity::spot: return costs.spot;
    case Capacity::reserved: return committed ? costs.reserved : costs.on_demand;
    case Capacity::on_demand: break;
  }
  return costs.on_demand;
}

}  // namespace dlsim::scheduler
