// The rate and the amount of work of cluster jobs, from YAML (used by cluster_yaml.cpp):
//   either  model: <zoo name>, batch_per_gpu: N [, sequence_length: L] [, precision: bf16]
//           (the iteration time and gradient bytes come from the models layer, cluster_job_model.hpp)
//   or      iteration_time: 1.2s [, gradient_bytes: 1.4GB, overlap: 0.4s]
// and the work as exactly one of
//   iterations: N | duration: 6h (at the job's uncontended speed on the fewest nodes)
//   | data: {samples: S, epochs: E} | tokens: T   (the last two for model jobs).
// A trace may give a model mix, `models: [{model, batch_per_gpu, weight, ...}, ...]`: each trace
// job draws one (stream "trace-models" of the scenario seed) and its recorded duration becomes
// iterations at that model's uncontended speed.
#pragma once
#include <cstdint>
#include <vector>

#include "experiment/cluster_job_model.hpp"
#include "experiment/yaml_reader.hpp"
#include "scheduler/cluster_spec.hpp"

namespace dlsim::experiment {

// Reads the rate and work keys of job `j` (its gpus already read); `pool` is the pool its rate is
// computed for (its own, or the first).
void read_job_rate_and_work(MapReader& r, scheduler::JobSpec& j, const scheduler::PoolSpec& pool,
                            const models::Catalog& catalog, ModelJobRates& rates);

struct TraceModel {
  ModelJob job;
  double weight = 1;
};

// The `models` key of a trace section (empty when absent).
std::vector<TraceModel> read_trace_models(MapReader& trace);

// Gives each job of `jobs` (from a trace: iterations x iteration_s is its recorded duration) a
// model of the mix. Errors name the mix entry's path in the trace section (`trace`).
void assign_trace_models(std::vector<scheduler::JobSpec>& jobs, const std::vector<TraceModel>& mix,
                         const scheduler::PoolSpec& pool, const models::Catalog& catalog, ModelJobRates& rates,
                         std::uint64_t seed, const MapReader& trace);

}  // namespace dlsim::experiment
