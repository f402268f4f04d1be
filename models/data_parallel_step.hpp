// Replay of one data-parallel training iteration on the event engine (DDP / Horovod style):
// every accelerator holds the whole model and a per-device batch; forward, then backward layer
// by layer from the last; gradients are grouped into buckets in backward order, and each full
// bucket is all-reduced with the ring algorithm on a communication stream, overlapping the rest
// of the backward pass (or after it, when overlap is off); then the optimizer step.
// Compute is identical on every rank, so one compute timeline serves all; the all-reduces run
// as flows of all ranks on the fabric (network::Collectives), so the fabric's shape, its
// oversubscription and the algorithm decide what communication costs.
#pragma once

#include "models/device.hpp"
#include "models/model_graph.hpp"
#include "models/precision.hpp"
#include "network/collectives.hpp"
#include "network/topology.hpp"

namespace dlsim::models {

enum class Optimizer { sgd_momentum, adam };

struct DataParallelConfig {
  const ModelGraph* model = nullptr;
  DeviceSpec device;
  DeviceProfile profile;
  Precision precision = Precision::fp32;            // compute and activation precision
  Precision gradient_precision = Precision::fp32;   // precision of the all-reduced gradients
  Optimizer optimizer = Optimizer::sgd_momentum;
  int per_device_batch = 1;
  int nodes = 1;
  int accelerators_per_node = 1;
  const network::Topology* topology = nullptr;  // the cluster fabric; its first nodes x per-node
                                                // accelerators are the job's ranks
  network::Algorithm all_reduce = network::Algorithm::automatic;
  bool overlap = true;        // all-reduce buckets while backward runs
  double bucket_bytes = 25.0 * 1024 * 1024;  // PyTorch DDP's default bucket_cap_mb = 25
};

struct StepBreakdown {
  double iteration_s = 0;
  double forward_s = 0;
  double backward_s = 0;
  double optimizer_s = 0;
  double allreduce_busy_s = 0;   // time the communication stream was busy
  double exposed_comm_s = 0;     // iteration time not covered by compute or optimizer
  int buckets = 0;
  int ranks = 1;
  network::Algorithm all_reduce = network::Algorithm::ring;  // the algorithm used (last bucket)
  double samples_per_s = 0;      // whole job: per_device_batch * ranks / iteration_s
};

// Throws std::invalid_argument on an inconsistent configuration.
StepBreakdown simulate_data_parallel_step(const DataParallelConfig& config);

// Bytes the optimizer reads and writes per parameter (FP32 master weights and states):
// SGD with momentum reads w, g, m and writes w, m (5 x 4 B); Adam reads w, g, m, v and writes
// w, m, v (7 x 4 B).
double optimizer_bytes_per_parameter(Optimizer optimizer);

}  // namespace dlsim::models
