// Cloud billing of node time. AWS, GCP and Azure bill Linux GPU instances per second with a
// one-minute minimum per instance start (AWS EC2 per-second billing, 2017; GCP per-second
// billing, 2017; Azure per-second billing). Units: seconds, USD per node-hour, USD.
#pragma once

namespace dlsim::scheduler {

struct BillingRule {
  double granularity_s = 1.0;  // usage is rounded up to a multiple of this
  double minimum_s = 60.0;     // each instance start is billed at least this long
};

// Cost of `nodes` nodes held for `seconds`, started once. Throws std::invalid_argument for
// negative or non-finite inputs.
double billed_cost(double price_per_node_hour, int nodes, double seconds, const BillingRule& rule = {});

}  // namespace dlsim::scheduler
