// IterationProgram: what one representative rank of each virtual pipeline stage does in one
// forward or backward pass of one micro-batch, as a list of segments, built once per
// configuration from the model, the plan and the device (the "iteration graph" of a rank; the
// dependencies between passes, stages and gradient buckets are added by the replay).
//
// A pass runs its segments in order on the rank's compute stream:
// - compute: layers between two blocking collectives, timed by the roofline (roofline.hpp) on
//   the rank's share of each layer (1/t of tensor-split layers, 1/t of replicated layers under
//   sequence parallelism, experts/e experts); carries the gradient bytes its layers produce.
// - tensor: a tensor-parallel collective inside the layer stack (Megatron's all-reduce after row-
//   parallel layers in forward and before column-parallel ones in backward; a reduce-scatter and
//   an all-gather under sequence parallelism). It blocks the stream.
// - expert: the all-to-all of a mixture-of-experts layer (dispatch, combine) over the expert-
//   parallel group. It blocks the stream.
// - gather: ZeRO-3/FSDP: the parameters of `unit` must have been all-gathered (prefetching the
//   next unit); blocks until they have.
// Backward passes with recomputation start each block by re-running its forward (full) or its
// attention core (selective).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "models/device.hpp"
#include "models/model_graph.hpp"
#include "models/parallel_plan.hpp"
#include "network/collectives.hpp"

namespace dlsim::models {

enum class SegmentKind { compute, tensor, expert, gather };

struct Segment {
  SegmentKind kind = SegmentKind::compute;
  double seconds = 0;                  // compute: duration
  double gradient_bytes = 0;           // compute (backward): gradients its layers finish
  double expert_gradient_bytes = 0;    // of which expert parameters
  bool recompute = false;              // compute: re-running forward inside backward
  network::CollectiveKind collective = network::CollectiveKind::all_reduce;  // tensor, expert
  double bytes = 0;                    // tensor, expert: per-rank buffer (nccl-tests sizes)
  int unit = -1;                       // gather: unit needed; prefetch: the one after
  int prefetch_unit = -1;
};

struct PassProgram {
  std::vector<Segment> segments;
  double compute_s = 0;                // sum of compute segments
  double recompute_s = 0;              // of which recomputation
  int kernels = 0;                     // kernels launched
  std::array<double, kKernelFamilies> family_s{};  // compute_s by kernel family (host stalls in the layer's main family)
};

// One virtual stage (a chunk of layers on one pipeline rank).
struct StageProgram {
  LayerRange layers;
  PassProgram forward;
  PassProgram backward;
  double output_bytes = 0;             // activation sent to the next stage (whole tensor, one micro-batch)
  double parameters = 0;               // held by one rank (after tensor and expert splitting)
  double expert_parameters = 0;        // of which experts
  double forward_flops = 0;            // one rank, one micro-batch (model FLOPs)
  double backward_flops = 0;
  double recompute_flops = 0;
};

// ZeRO-3 units: consecutive layers gathered together (one per block; outside blocks, runs of
// layers up to the bucket size).
struct GatherUnit {
  LayerRange layers;
  double bytes = 0;                    // all-gathered parameters of the unit (one rank's tensor share), in compute precision
};

struct IterationProgram {
  std::vector<StageProgram> stages;    // by virtual stage
  std::vector<GatherUnit> units;       // ZeRO-3 only
  long long profile_out_of_range = 0;  // kernel lookups outside a calibrated profile's measured sizes
};

// The plan must be valid for the model (validate_plan).
IterationProgram build_iteration_program(const ModelGraph& model, const ParallelPlan& plan, const DeviceSpec& device,
                                         const DeviceProfile& profile);

// The layer as one rank sees it: work, parameters and activations divided by the plan's splits.
Layer rank_share(const Layer& layer, const ParallelPlan& plan);

// Bytes the optimizer reads and writes per parameter it updates (FP32 master weights and
// states): SGD with momentum reads w, g, m and writes w, m (5 x 4 B); Adam reads w, g, m, v and
// writes w, m, v (7 x 4 B); plus writing the low-precision copy under mixed precision.
double optimizer_bytes_per_parameter(Optimizer optimizer, Precision precision);

}  // namespace dlsim::models
