// The plan: section (plan_search_yaml.hpp).
#include "experiment/plan_search_yaml.hpp"

#include <set>

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

}  // namespace

PlanSearchConfig read_plan_search(MapReader& p, const models::Catalog& catalog, const ClusterConfig& cluster) {
  PlanSearchConfig c;
  c.objective = p.choice("objective", {"cheapest", "fastest"}, "cheapest") == "fastest" ? PlanObjective::fastest : PlanObjective::cheapest;
  c.deadline_s = p.quantity("deadline", Dimension::duration, 1, 1e10, 0.0);
  c.budget_usd = p.number("budget", 1e-6, 1e15, 0.0);
  c.max_accelerators = static_cast<int>(p.integer("max_accelerators", 1, 100'000'000, 0));
  c.instances = read_instances(p, catalog, cluster);
  c.nodes = read_nodes(p, cluster);
  p.finish();
  return c;
}

}  // namespace dlsim::experiment
