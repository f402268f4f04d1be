// Cloud billing of node time, reservations and data transfer. AWS, GCP and Azure bill Linux GPU
// instances per second with a one-minute minimum per instance start (AWS EC2 per-second
// billing, 2017; GCP per-second billing, 2017; Azure per-second billing). Units: seconds, USD
// per node-hour, bytes, USD; a GB is 1e9 bytes (as the checkpoint storage price).
#pragma once
#include <string>

#include "scheduler/spot_trace.hpp"

namespace dlsim::scheduler {

// Data transfer prices, AWS EC2 on-demand pricing page, "Data Transfer" (2024): between
// availability zones of one region 0.01 USD/GB "in each direction" (out of the sending zone and
// into the receiving one: 0.02 USD per GB moved); to another region 0.02 USD/GB, charged once at
// the source (US and EU regions). Within a zone, and between a zone and a regional service of its
// own region (Amazon S3 in the same region), transfer is free.
struct EgressPrices {
  double inter_zone_usd_per_gb = 0.01;    // each way
  double inter_region_usd_per_gb = 0.02;  // at the source
};

struct BillingRule {
  double granularity_s = 1.0;  // usage is rounded up to a multiple of this
  double minimum_s = 60.0;     // each instance start is billed at least this long
};

// Where a node or a store is. "" is the one default region (zone).
struct Location {
  std::string region;
  std::string zone;
  bool regional = false;  // a regional service (object storage): no zone, free from its region's zones
};

// Cost of `nodes` nodes held for `seconds`, started once. Throws std::invalid_argument for
// negative or non-finite inputs.
double billed_cost(double price_per_node_hour, int nodes, double seconds, const BillingRule& rule = {});

// Cost of one node held `seconds` from series time `t0_s` of a spot price history: the billed
// time (rounded up by the rule, at least its minimum) from t0_s, priced by the step function (its
// integral, not the price at the start). Throws like billed_cost, and std::out_of_range for t0_s < 0.
double billed_cost(const SpotPriceSeries& prices, double t0_s, double seconds, const BillingRule& rule = {});

// A reservation of `nodes` (AWS Reserved Instances, GCP committed use discounts: 1 or 3 years)
// bills every hour of its term whether the nodes are used or not: nodes x price x the period
// in whole hours (rounded up). Throws std::invalid_argument for negative or non-finite inputs.
double committed_cost(double price_per_node_hour, int nodes, double period_s);

// Cost of moving `bytes` from `from` to `to` (see EgressPrices): inter-region at the source's
// price once; inter-zone in one region twice (out and in); free within a zone or to or from a
// regional service of the same region. Throws std::invalid_argument for negative bytes or prices.
double egress_cost(double bytes, const Location& from, const Location& to, const EgressPrices& prices = {});

}  // namespace dlsim::scheduler
