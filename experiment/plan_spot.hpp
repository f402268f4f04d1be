// Spot-aware costing of a plan candidate (`dlsim plan` with plan.capacity: spot; issue 20). A
// candidate on spot capacity is not costed at list price: its training run, at the iteration time
// the replay gave, is simulated in the cluster model (scheduler/cluster_simulation.hpp) as one job
// on a pool of spot nodes, `replications` times with seeds seed, seed + 1, ...: each node is
// reclaimed at plan.spot.reclaim (after the notice), replaced after plan.spot.provisioning, and the
// job checkpoints at Young/Daly's interval (or the policy given) and restarts from its last
// checkpoint. Time and cost to train are the means over the runs; p10 and p90 their spread.
//
// Assumptions, stated: the whole job runs on one spot pool of the candidate's instance type and
// node count (no fallback to on-demand); reclamations of different nodes are independent; a
// replacement node costs its provisioning time; the checkpoint holds the model's weights and
// optimizer state (checkpoint_bytes) unless plan.spot.checkpoint.size says otherwise. On-demand
// candidates are failure-free and write no checkpoints.
#pragma once
#include <cstdint>

#include "experiment/scenario.hpp"
#include "scheduler/cluster_spec.hpp"

namespace dlsim::experiment {

// The spot price of a node: the on-demand price less plan.spot.discount when given, else the
// catalog's spot price (the plan section was checked to have one).
double spot_price_per_hour(const models::InstanceType& instance, const PlanSpotConfig& spot);

// plan.spot.notice, or the provider's: AWS 120 s (record aws-spot-notice), GCP 30 s
// (gcp-spot-notice), Azure 30 s (azure-spot-notice); 120 s for other providers.
double spot_notice_s(const models::InstanceType& instance, const PlanSpotConfig& spot);

// What a checkpoint of the model holds: every parameter's weight in the training precision (2
// bytes under mixed precision, 4 in FP32), the FP32 master copy under mixed precision, and the
// optimizer's state (models/optimizer.hpp).
double checkpoint_bytes(const WorkloadConfig& workload);

// The cluster of one spot run: one spot pool of `nodes` nodes of the scenario's instance type and
// one job of `iterations` iterations of `iteration_s` on all of them.
scheduler::ClusterSpec spot_cluster(const Scenario& scenario, int nodes, std::int64_t iterations, double iteration_s,
                                    const PlanSpotConfig& spot);

struct SpotOutcome {
  int runs = 0;
  int unfinished = 0;                   // runs not done by the horizon (their figures are left out)
  double time_mean_s = 0, time_p10_s = 0, time_p90_s = 0;   // time to train (submission to finish)
  double cost_mean = 0, cost_p10 = 0, cost_p90 = 0;          // USD billed: node time, checkpoint storage
  double reclaims_mean = 0;             // times the job lost a node, per run
  double checkpoint_interval_s = 0;     // running time between checkpoints (first run)
  double checkpoint_bytes = 0;
  double horizon_s = 0;
  double failure_free_s = 0;            // iterations x iteration_s: no reclamation, no checkpoint
};

// Runs spot_cluster `spot.replications` times (seeds seed, seed + 1, ...) up to `horizon_s`.
// Deterministic: the same arguments give the same outcome, bit for bit.
SpotOutcome simulate_spot(const Scenario& scenario, int nodes, std::int64_t iterations, double iteration_s,
                          const PlanSpotConfig& spot, std::uint64_t seed, double horizon_s);

}  // namespace dlsim::experiment
