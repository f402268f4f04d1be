// Small builders of cluster specs shared by the scheduler tests: a pool ready at once and a job
// without warm-up, everything else at its default.
#pragma once
#include <cstdint>
#include <string>

#include "scheduler/cluster_spec.hpp"

namespace dlsim::scheduler::builders {

inline PoolSpec pool(const std::string& name, int nodes, int gpus_per_node = 8, double price = 32) {
  PoolSpec p;
  p.name = name;
  p.nodes = nodes;
  p.gpus_per_node = gpus_per_node;
  p.price_per_node_hour = price;
  p.provisioning_s = 0;
  return p;
}

inline JobSpec job(const std::string& name, double submit, int gpus, std::int64_t iterations, double iteration_s = 1.0) {
  JobSpec j;
  j.name = name;
  j.submit_s = submit;
  j.gpus = gpus;
  j.iterations = iterations;
  j.iteration_s = iteration_s;
  j.checkpoint.warmup_s = 0;
  return j;
}

}  // namespace dlsim::scheduler::builders
