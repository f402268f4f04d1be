// The plan: section (plan_search_yaml.hpp).
#include "experiment/plan_search_yaml.hpp"

#include <algorithm>
#include <set>

#include "experiment/cluster_yaml.hpp"
#include "experiment/market_yaml.hpp"
#include "experiment/nearest_name.hpp"

namespace dlsim::experiment {
namespace {

constexpr std::int64_t kMaxPlanNodes = 100'000;

std::vector<std::string> read_instances(MapReader& p, const models::Catalog& catalog, const ClusterConfig& cluster) {
  const YAML::Node list = p.node("instances");
  if (!list.IsDefined() || list.IsNull()) return {cluster.instance_name};
  if (!list.IsSequence() || list.size() == 0) {
    p.fail("instances", "expected a non-empty list of catalog instance types, e.g. [aws/p5.48xlarge, gcp/a3-highgpu-8g]");
  }
  std::vector<std::string> known;
  for (const auto& [name, type] : catalog.instances()) known.push_back(name);
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = p.path_of("instances") + "[" + std::to_string(i) + "]";
    const auto fail = [&](const std::string& why) { throw ConfigError(p.source().locate(list[i], path), path, why); };
    if (!list[i].IsScalar()) fail("expected an instance type name");
    const std::string name = list[i].Scalar();
    if (catalog.find_instance(name) == nullptr) fail("unknown instance type '" + name + "'" + did_you_mean(name, known));
    if (!seen.insert(name).second) fail("instance type " + name + " appears twice");
    names.push_back(name);
  }
  return names;
}

// A list of node counts, or {from, to}: from, 2 from, 4 from, ... up to `to`.
std::vector<int> read_nodes(MapReader& p, const ClusterConfig& cluster) {
  const YAML::Node nodes = p.node("nodes");
  if (!nodes.IsDefined() || nodes.IsNull()) return {cluster.nodes};
  std::vector<int> out;
  if (nodes.IsMap()) {
    MapReader range(nodes, p.path_of("nodes"), p.source());
    const int from = static_cast<int>(range.integer("from", 1, kMaxPlanNodes));
    const int to = static_cast<int>(range.integer("to", 1, kMaxPlanNodes));
    range.finish();
    if (to < from) range.fail("to", "must be at least from (" + std::to_string(from) + ")");
    for (std::int64_t n = from; n <= to; n *= 2) out.push_back(static_cast<int>(n));
    return out;
  }
  if (!nodes.IsSequence() || nodes.size() == 0) {
    p.fail("nodes", "expected a non-empty list of node counts, e.g. [8, 16, 32], or a range {from: 8, to: 512} (doubling)");
  }
  std::set<int> seen;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string path = p.path_of("nodes") + "[" + std::to_string(i) + "]";
    const int n = static_cast<int>(parse_integer(nodes[i], path, p.source(), 1, kMaxPlanNodes));
    if (!seen.insert(n).second) throw ConfigError(p.source().locate(nodes[i], path), path, "node count " + std::to_string(n) + " appears twice");
    out.push_back(n);
  }
  return out;
}

// plan.capacity: a list of on-demand and spot (each once), or one of them.
std::vector<scheduler::Capacity> read_capacities(MapReader& p) {
  const YAML::Node list = p.node("capacity");
  if (!list.IsDefined() || list.IsNull()) return {scheduler::Capacity::on_demand};
  const auto one = [&](const YAML::Node& n, const std::string& path) {
    const auto fail = [&](const std::string& why) { throw ConfigError(p.source().locate(n, path), path, why); };
    if (!n.IsScalar()) fail("expected on-demand or spot");
    const std::string v = n.Scalar();
    if (v == "on-demand") return scheduler::Capacity::on_demand;
    if (v == "spot") return scheduler::Capacity::spot;
    fail("unknown capacity '" + v + "': expected on-demand or spot" + did_you_mean(v, {"on-demand", "spot"}));
    return scheduler::Capacity::on_demand;
  };
  if (list.IsScalar()) return {one(list, p.path_of("capacity"))};
  if (!list.IsSequence() || list.size() == 0) p.fail("capacity", "expected a non-empty list: [on-demand], [spot] or [on-demand, spot]");
  std::vector<scheduler::Capacity> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = p.path_of("capacity") + "[" + std::to_string(i) + "]";
    const scheduler::Capacity c = one(list[i], path);
    if (std::find(out.begin(), out.end(), c) != out.end()) {
      throw ConfigError(p.source().locate(list[i], path), path, "capacity " + scheduler::to_string(c) + " appears twice");
    }
    out.push_back(c);
  }
  return out;
}

// plan.spot (scenario.hpp, PlanSpotConfig). Every instance searched needs a spot price: the
// catalog's, or the on-demand price less `discount`.
PlanSpotConfig read_spot(MapReader& s, const models::Catalog& catalog, const std::vector<std::string>& instances,
                         const std::string& base_dir) {
  PlanSpotConfig c;
  s.allow({"discount", "notice"});
  c.discount = s.has("discount") ? s.number("discount", 0, 0.99) : -1;
  if (!s.has("reclaim")) {
    s.fail("reclaim", "spot capacity needs its reclamation rate per node, e.g. reclaim: {mean: 24h} (exponential) or "
                      "{weibull_shape: 0.7, weibull_scale: 20h}; the catalog has none for GPU instances");
  }
  // Given, or fitted to a probe log of spot instances' lifetimes (as a cluster pool's).
  TraceFiles files;
  const std::optional<scheduler::Hazard> fitted = read_fitted_hazard(s, "reclaim", base_dir, files);
  c.reclaim = fitted ? *fitted : read_hazard(s, "reclaim");
  c.notice_s = s.has("notice") ? s.quantity("notice", Dimension::duration, 0, 3600) : -1;
  c.provisioning_s = s.quantity("provisioning", Dimension::duration, 0, 7 * 86400, c.provisioning_s);
  c.replications = static_cast<int>(s.integer("replications", 1, 1000, c.replications));
  const YAML::Node checkpoint = s.node("checkpoint");
  const bool policy_given = checkpoint.IsMap() && static_cast<const YAML::Node&>(checkpoint)["policy"].IsDefined();
  c.checkpoint = read_checkpoint(s);
  if (!policy_given) c.checkpoint.policy = scheduler::CheckpointPolicy::young_daly;
  if (c.discount < 0) {
    for (const std::string& name : instances) {
      if (catalog.find_instance(name)->spot_price_per_hour <= 0) {
        s.fail("discount", "instance type " + name + " has no spot price in the catalog: give plan.spot.discount (the "
                           "fraction off its on-demand price, e.g. 0.6) or the instance's spot_price in a catalog file");
      }
    }
  }
  s.finish();
  return c;
}

}  // namespace

PlanSearchConfig read_plan_search(MapReader& p, const models::Catalog& catalog, const ClusterConfig& cluster,
                                  const std::string& base_dir) {
  PlanSearchConfig c;
  c.objective = p.choice("objective", {"cheapest", "fastest"}, "cheapest") == "fastest" ? PlanObjective::fastest : PlanObjective::cheapest;
  c.deadline_s = p.quantity("deadline", Dimension::duration, 1, 1e10, 0.0);
  c.budget_usd = p.number("budget", 1e-6, 1e15, 0.0);
  c.max_accelerators = static_cast<int>(p.integer("max_accelerators", 1, 100'000'000, 0));
  c.instances = read_instances(p, catalog, cluster);
  c.nodes = read_nodes(p, cluster);
  c.capacities = read_capacities(p);
  const bool spot = std::find(c.capacities.begin(), c.capacities.end(), scheduler::Capacity::spot) != c.capacities.end();
  // plan.spot is checked whenever given (so that --set plan.capacity=[on-demand] compares the
  // same scenario without spot), and used only when spot capacity is searched.
  p.allow({"spot"});
  if (spot && !p.has("spot")) p.fail("capacity", "spot capacity needs a plan.spot section: {reclaim: {mean: 24h}} at least");
  if (p.has("spot")) {
    MapReader s(p.node("spot"), p.path_of("spot"), p.source());
    PlanSpotConfig config = read_spot(s, catalog, spot ? c.instances : std::vector<std::string>{}, base_dir);
    if (spot) c.spot = std::move(config);
  }
  p.finish();
  return c;
}

}  // namespace dlsim::experiment
