// The result columns of the pools table of cluster scenarios: one row per pool of each variant.
#include "experiment/columns.hpp"

namespace dlsim::experiment {
namespace {
constexpr auto kReal = TableColumn::Type::real;
constexpr auto kInteger = TableColumn::Type::integer;
constexpr auto kText = TableColumn::Type::text;
}  // namespace

const std::vector<Column<PoolRow>>& pool_columns() {
  using R = PoolRow;
  static const std::vector<Column<R>> columns{
      {"variant", "", "index of the variant (row of the results table)", kInteger, [](const R& r) { return double(r.variant); }},
      {"pool", "", "pool name", kText, nullptr, [](const R& r) { return r.pool.name; }},
      {"capacity", "", "on-demand, spot or reserved", kText, nullptr, [](const R& r) { return r.capacity; }},
      {"nodes_requested", "", "nodes requested, initial ones included", kInteger, [](const R& r) { return double(r.pool.nodes_requested); }},
      {"reclaimed", "", "spot nodes reclaimed", kInteger, [](const R& r) { return double(r.pool.reclaimed); }},
      {"failed", "", "nodes failed", kInteger, [](const R& r) { return double(r.pool.failed); }},
      {"fallback_nodes", "", "nodes it gave in place of a pool that could not", kInteger, [](const R& r) { return double(r.pool.fallback_nodes); }},
      {"unavailable_time", "s", "spot market: time the price was above the maximum", kReal, [](const R& r) { return r.pool.unavailable_s; }},
      {"node_hours", "h", "node time held", kReal, [](const R& r) { return r.pool.node_hours; }},
      {"busy_node_hours", "h", "node time with at least one job", kReal, [](const R& r) { return r.pool.busy_node_hours; }},
      {"cost", "USD", "billed node time (reserved: the commitment and on-demand nodes beyond it)", kReal,
       [](const R& r) { return r.pool.cost_usd; }},
      {"on_demand_cost", "USD", "of cost: at on-demand prices", kReal, [](const R& r) { return r.pool.costs.on_demand; }},
      {"spot_cost", "USD", "of cost: spot", kReal, [](const R& r) { return r.pool.costs.spot; }},
      {"reserved_cost", "USD", "of cost: the commitment", kReal, [](const R& r) { return r.pool.costs.reserved; }},
      {"idle_cost", "USD", "of cost: node time without jobs (provisioning included)", kReal, [](const R& r) { return r.pool.costs.idle; }},
      {"provisioning_cost", "USD", "of idle_cost: nodes not ready yet", kReal, [](const R& r) { return r.pool.costs.provisioning; }},
      {"egress_cost", "USD", "checkpoint transfer of its nodes across zones or regions (not in cost)", kReal,
       [](const R& r) { return r.pool.costs.egress; }},
  };
  return columns;
}

}  // namespace dlsim::experiment
