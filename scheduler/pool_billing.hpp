// What a node of a pool costs, by capacity: on-demand at its price; spot at its price or, with a
// market (spot_market.hpp), at the recorded price over the time held; reserved nodes within the
// commitment at nothing more (the commitment is billed for the whole run, committed_cost), those
// beyond it at the on-demand price. Used by the cluster simulation. Units: seconds, USD.
#pragma once
#include "scheduler/billing.hpp"
#include "scheduler/cluster_simulation.hpp"
#include "scheduler/cluster_spec.hpp"

namespace dlsim::scheduler {

// The bill of one node held `held_s` from simulated time `t0_s` (rounded by the rule).
double node_bill(const PoolSpec& pool, bool committed, double t0_s, double held_s, const BillingRule& rule);

// The value of one node's time over [t0_s, t1_s], not rounded: what a job's GPU share is charged
// (committed reserved nodes at the reserved price).
double node_value(const PoolSpec& pool, bool committed, double t0_s, double t1_s);

// The category of `costs` a node's time goes to.
double& node_category(CostBreakdown& costs, const PoolSpec& pool, bool committed);

}  // namespace dlsim::scheduler
