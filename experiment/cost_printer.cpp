// The cost breakdown of cluster scenarios, printed under the variant table: one line per variant,
// USD by category. on-demand + spot + reserved + storage + egress = total; idle (provisioning
// included) is part of the first three.
#include <algorithm>
#include <cstdio>
#include <string>

#include "experiment/writers.hpp"

namespace dlsim::experiment {

void print_cost_breakdown(std::ostream& out, const Results& results) {
  int width = 7;  // "variant"
  for (const ClusterRow& r : results.cluster_rows) width = std::max(width, static_cast<int>(r.variant.size()));
  char line[512];
  out << "\ncost breakdown (USD)\n";
  std::snprintf(line, sizeof line, "%-*s  %10s  %10s  %10s  %10s  %12s  %8s  %8s  %10s  %8s\n", width, "variant", "on-demand",
                "spot", "reserved", "idle", "provisioning", "storage", "egress", "total", "fallback");
  out << line;
  for (const ClusterRow& r : results.cluster_rows) {
    const scheduler::CostBreakdown& c = r.costs;
    std::snprintf(line, sizeof line, "%-*s  %10.2f  %10.2f  %10.2f  %10.2f  %12.2f  %8.2f  %8.2f  %10.2f  %8d\n", width,
                  r.variant.c_str(), c.on_demand, c.spot, c.reserved, c.idle, c.provisioning, c.storage, c.egress, c.total(),
                  r.fallback_nodes);
    out << line;
  }
}

}  // namespace dlsim::experiment
