// The input pipeline's overlap with compute (input_pipeline.hpp).
#include "models/input_pipeline.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dlsim::models {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}  // namespace

double loader_samples_per_worker_s(Loader loader) {
  switch (loader) {
    case Loader::pytorch: return 117;    // milabench PR 110 (input_pipeline.hpp)
    case Loader::dali_cpu: return 171;   // Mohan et al. VLDB 2021 (input_pipeline.hpp)
    case Loader::none:
    case Loader::custom: return 0;
  }
  return 0;
}

std::string_view to_string(Loader loader) {
  switch (loader) {
    case Loader::none: return "none";
    case Loader::pytorch: return "pytorch";
    case Loader::dali_cpu: return "dali-cpu";
    case Loader::custom: return "custom";
  }
  return "none";
}

InputStep with_input(double compute_iteration_s, double samples_per_node, const InputPipeline& input) {
  InputStep s;
  s.iteration_s = compute_iteration_s;
  if (input.loader == Loader::none) return s;
  if (!(input.samples_per_worker_s > 0) || input.workers < 1 || input.prefetch < 0 || !(samples_per_node >= 0)) {
    throw std::invalid_argument("input pipeline: needs a rate > 0, workers >= 1 and prefetch >= 0");
  }
  // A worker reads a sample, then decodes it; the storage caps the node's reads.
  const double worker_rate = input.read_s_per_sample > 0 ? 1.0 / (1.0 / input.samples_per_worker_s + input.read_s_per_sample)
                                                         : input.samples_per_worker_s;
  // Decoding shares the node's vCPUs: beyond them, more workers only overlap their reads.
  const double cpu_rate = input.vcpus > 0 ? input.samples_per_worker_s * input.vcpus : kInfinity;
  const bool cpu_bound = cpu_rate < worker_rate * input.workers;
  const double workers_s = samples_per_node / std::min(worker_rate * input.workers, cpu_rate);
  const double storage_cap_s = samples_per_node / input.node_read_samples_per_s;  // 0 without a cap
  s.input_s = std::max(workers_s, storage_cap_s);
  // Prefetching overlaps the two stages: the slower one sets the pace. Without it they alternate.
  s.iteration_s = input.prefetch >= 1 ? std::max(compute_iteration_s, s.input_s) : compute_iteration_s + s.input_s;
  s.stall_s = s.iteration_s - compute_iteration_s;
  s.input_bound = s.input_s > compute_iteration_s;
  // Reading is the slower part: the storage's cap binds, or a worker waits longer for a sample
  // than it decodes one while the vCPUs have room (neither holds without a storage).
  s.storage_bound = s.input_bound && (storage_cap_s >= workers_s ||
                                      (!cpu_bound && input.read_s_per_sample > 1.0 / input.samples_per_worker_s));
  return s;
}

}  // namespace dlsim::models
