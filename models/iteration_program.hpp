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
//   an all-gather under sequence parallelism). It blocks the stream. With plan.tp_comm_overlap
//   (Megatron-Core's --tp-comm-overlap, Transformer Engine's userbuffers) each reduce-scatter and
//   all-gather runs in tensor-size chunks pipelined with the tensor-split GEMM next to it: the
//   GEMM's time moves from its compute segment into the collective's (overlap_s), and the pair
//   takes max(collective, GEMM) plus one chunk of the shorter (the pipeline's fill).
// - context: context parallelism's ring attention (plan.context > 1): the keys and values (in
//   backward also their gradients) passed around the context group in c steps, pipelined with
//   the attention kernels of the blocks already received (overlap_s: their time). Its traffic is
//   a ring all-gather's (c - 1 sends of one block per rank), so it runs as one (bytes: c blocks;
//   backward 2c), and the pair takes max(ring, attention) plus one step of the shorter.
// - expert: the all-to-all of a mixture-of-experts layer (dispatch, combine) over the expert-
//   parallel group. It blocks the stream.
// - zero: a ZeRO-3/FSDP point (zero3_schedule.hpp): wait (for the device to drain, or for the
//   pass's collectives up to an index), let the device idle while the host works, then issue
//   all-gathers and reduce-scatters onto the rank's data-parallel stream.
// Backward passes with recomputation start each block by re-running its forward (full) or its
// attention core (selective). With DeepSpeed's activation-checkpointing options the kept block
// inputs are copied to the host in forward and back before recomputation (cpu_checkpointing, at
// the device's PCIe bandwidth, on the compute stream as DeepSpeed's blocking copies are), and
// all-gathered over the tensor group before recomputation (partition_activations).
// Under ZB-H1 (pipeline_schedule.hpp) a stage's backward is its B pass: everything but the
// weight-gradient kernels (layer_kernels.hpp's LayerKernelTimes::weight), recomputation
// included; its W pass runs those kernels, layer by layer in backward order (as the zero-bubble
// implementation queues them), and carries the gradient bytes, so buckets fill when W runs.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "models/device.hpp"
#include "models/gradient_compression.hpp"
#include "models/model_graph.hpp"
#include "models/parallel_plan.hpp"
#include "models/zero3_schedule.hpp"
#include "network/collectives.hpp"

namespace dlsim::models {

enum class SegmentKind { compute, tensor, expert, zero, context };

struct Segment {
  SegmentKind kind = SegmentKind::compute;
  double seconds = 0;                  // compute: duration
  double host_floor_s = 0;             // compute: host work meanwhile (ZeRO-3 hooks); lasts at least this
  bool offload = false;                // compute: a blocking host-device copy of kept activations
  double gradient_bytes = 0;           // compute (backward): gradients its layers finish
  double expert_gradient_bytes = 0;    // of which expert parameters
  std::vector<WeightMatrix> gradient_matrices;  // compute (backward, PowerSGD only): its layers' weight matrices
  bool recompute = false;              // compute (and an overlapped tensor segment's GEMM): re-running forward inside backward
  network::CollectiveKind collective = network::CollectiveKind::all_reduce;  // tensor, expert, context
  double bytes = 0;                    // tensor, expert, context: per-rank buffer (nccl-tests sizes)
  double overlap_s = 0;                // tensor (plan.tp_comm_overlap): the GEMM run with it in chunks;
                                       //   context: the attention kernels run with the ring
  double parameters_through = 0;       // forward: parameter bytes of the stage's layers up to this segment's
                                       //   (plan.overlap_param_gather: what must be gathered before it runs)
  bool drain = false;                  // zero: wait for every ZeRO collective issued
  int wait_through = -1;               // zero: wait for this pass's collectives 0..wait_through
  double host_s = 0;                   // zero: device idle while the host works
  std::vector<int> issue;              // zero: this pass's collectives issued (PassProgram::collectives)
  double host_after_s = 0;             // zero: device idle while the host works after issuing
};

struct PassProgram {
  std::vector<Segment> segments;
  double compute_s = 0;                // sum of compute segments
  double recompute_s = 0;              // of which recomputation
  int kernels = 0;                     // kernels launched
  std::array<double, kKernelFamilies> family_s{};  // compute_s by kernel family (host stalls in the layer's main family)
  std::vector<ZeroCollective> collectives;  // ZeRO-3: issue order
};

// One virtual stage (a chunk of layers on one pipeline rank).
struct StageProgram {
  LayerRange layers;
  PassProgram forward;
  PassProgram backward;
  PassProgram weight;                  // ZB-H1's W pass (splits_weight_gradients); empty otherwise
  double output_bytes = 0;             // activation sent to the next stage (whole tensor, this context rank's tokens, one micro-batch)
  double parameters = 0;               // held by one rank (after tensor and expert splitting)
  double expert_parameters = 0;        // of which experts
  double forward_flops = 0;            // one rank, one micro-batch (model FLOPs)
  double backward_flops = 0;
  double recompute_flops = 0;
  // Kernel time with the data-parallel collectives' SMs held (build_iteration_program's
  // busy_units) over kernel time on the whole GPU, forward and backward: what a compute segment
  // is stretched by while such a collective runs (recomputation is a forward pass and takes the
  // forward slowdown).
  double forward_busy_slowdown = 1;
  double backward_busy_slowdown = 1;
};

struct IterationProgram {
  std::vector<StageProgram> stages;    // by virtual stage
  // ZeRO-3: after the optimizer step (DeepSpeed: the persistent tensors gathered again).
  std::vector<ZeroCollective> after_step;
  double after_step_host_s = 0;
  long long profile_out_of_range = 0;  // kernel lookups outside a calibrated profile's measured sizes
};

// The plan must be valid for the model (validate_plan). busy_units: SMs the data-parallel
// collectives' kernels hold while they run beside compute (NCCL's channels; 0: none), for the
// stages' busy slowdowns.
IterationProgram build_iteration_program(const ModelGraph& model, const ParallelPlan& plan, const DeviceSpec& device,
                                         const DeviceProfile& profile, int busy_units = 0);

// The layer as one rank sees it: work, parameters and activations divided by the plan's splits.
Layer rank_share(const Layer& layer, const ParallelPlan& plan);

// optimizer_bytes_per_parameter: models/optimizer.hpp.

}  // namespace dlsim::models
