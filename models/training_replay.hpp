// TrainingReplay: one training iteration of a job replayed on the event engine and the flow
// network, one representative rank per pipeline rank.
//
// Symmetry: every data-parallel replica does the same work at the same time, and every tensor
// rank of a stage the same as its peers, so only replica 0, tensor rank 0 of each pipeline rank
// is simulated as a timeline. Communication involving the other ranks still runs on the fabric
// with all its participants: a data-parallel gradient all-reduce of stage r runs as t concurrent
// collectives (one per tensor rank) over the d replicas; a pipeline send runs as t flows.
//
// Streams per simulated rank: compute (passes in the schedule's order; blocking tensor- and
// expert-parallel collectives inside passes), pipeline (sends of activations and gradients to the
// neighbour stages, asynchronous), data-parallel (gradient buckets reduced in the order they
// fill, overlapped with the rest of backward when the plan says so; a bucket's reduction is one
// collective, or under gradient compression or parameter servers the phases
// gradient_compression.hpp and parameter_server.hpp give, one after another), ZeRO-3 (its schedule's
// all-gathers and reduce-scatters one at a time in issue order, zero3_stream.hpp; each distinct
// one timed alone on the fabric once, as nothing else of a pipeline-less job crosses the nodes).
// A pass starts when the compute stream is free and its input has arrived.
//
// Collectives whose ranks all sit inside one node (tensor parallelism on NVLink/NVSwitch in the
// default placement) are simulated on the fabric once, alone, per distinct (operation, size,
// group) and then reused: nothing else of the job uses a node's internal links in that placement,
// and there are tens of thousands of them per iteration. Collectives that cross nodes run live as
// flows, sharing NICs and switches with everything else in flight.
#pragma once
#include <array>
#include <string>

#include "models/device.hpp"
#include "models/iteration_trace.hpp"
#include "models/model_graph.hpp"
#include "models/parallel_plan.hpp"
#include "network/collectives.hpp"
#include "network/topology.hpp"

namespace dlsim::models {

struct TrainingConfig {
  const ModelGraph* model = nullptr;
  ParallelPlan plan;
  DeviceSpec device;
  DeviceProfile profile;
  const network::Topology* topology = nullptr;  // its first plan.devices() accelerators are the job's
  network::Algorithm all_reduce = network::Algorithm::automatic;  // data-parallel gradients
};

// Where the time of one iteration goes, on the pipeline rank that finishes its passes last.
// iteration_s = compute_s + tensor_comm_s + expert_comm_s + context_comm_s + gather_wait_s + reduce_wait_s
//               + zero_host_s + activation_offload_s + compression_blocking_s + pipeline_comm_s + pipeline_bubble_s
//               + exposed_dp_comm_s + optimizer_s  (each >= 0).
struct IterationBreakdown {
  double iteration_s = 0;
  double compute_s = 0;           // forward + backward + recompute on the compute stream
  double held_sm_s = 0;           // of compute: what its kernels lost to the SMs of data-parallel and ZeRO
                                  //   collectives running beside them (NCCL's channels; models/iteration_program.hpp)
  double forward_s = 0;
  double backward_s = 0;
  double recompute_s = 0;
  double tensor_comm_s = 0;       // blocking tensor-parallel collectives
  double expert_comm_s = 0;       // blocking expert all-to-alls
  double context_comm_s = 0;      // ring attention's exchange beyond the attention it overlaps
  double gather_wait_s = 0;       // ZeRO-3: compute stream waiting on parameter all-gathers
  double reduce_wait_s = 0;       // ZeRO-3: compute stream waiting on gradient reduce-scatters (queued
                                  //   before a gather on the same stream, a full bucket, the end of backward)
  double zero_host_s = 0;         // ZeRO-3: device idle while the host runs hooks, issues collectives,
                                  //   synchronizes (zero3_schedule.hpp), incl. after the optimizer step
  double activation_offload_s = 0;  // blocking copies of kept activations to and from the host
  double pipeline_comm_s = 0;     // compute stream blocked on its own pipeline sends (!plan.overlap_p2p)
  double pipeline_bubble_s = 0;   // compute stream idle waiting for other stages
  double pipeline_imbalance_s = 0;  // of the bubble: what this rank's stage has less work than the
                                  //   busiest stage's (uneven layers, the embedding or the output layer);
                                  //   the rest is the schedule's fill and drain
  double exposed_dp_comm_s = 0;   // after the last pass, waiting for gradient reduction (and ZeRO gathers)
  double optimizer_s = 0;
  double dp_comm_busy_s = 0;      // time the data-parallel stream was busy (overlapped or not)
  double pipeline_comm_busy_s = 0;
  double compression_s = 0;       // gradient compression kernels (part of dp_comm_busy_s: they delay the reduction)
  double compression_blocking_s = 0;  // of which issued during backward: they delay its next compute segment
                                      //   (the hook's kernels share backward's stream)
  double gradient_wire_bytes = 0; // bytes one data-parallel rank sends for its gradients per iteration
                                  //   (collectives by nccl-tests' bus factors; parameter servers: a worker
                                  //   node's pushes)
  double staleness = 0;           // asynchronous parameter servers: iterations of the worker's own updates
                                  //   missing from the parameters it computes on (<= the bound)
  int gradient_buckets = 0;
  int simulated_ranks = 0;        // timelines simulated (pipeline ranks)
  int critical_rank = 0;          // the pipeline rank reported
  double samples_per_s = 0;       // whole job
  double tokens_per_s = 0;
  double model_flops_per_iteration = 0;     // forward + backward, no recomputation, whole job
  double hardware_flops_per_iteration = 0;  // with recomputation
  double tflops_per_device = 0;   // model FLOP/s per device / 1e12
  double mfu = 0;                 // model FLOP/s over the devices' peak at the plan's precision
  double hfu = 0;                 // the same with recomputation counted
  long long flows = 0;            // flows started on the fabric
  long long events = 0;           // engine events
  long long profile_out_of_range = 0;  // kernel lookups outside a calibrated profile's measured
                                       // sizes (the nearest measured point was used)
  // compute_s by kernel family (KernelFamilyKind: gemm, memory, conv, attention; host stalls go
  // to the family of the layer they delay), and the iteration time's error band: the compute
  // part scaled by each family's held-out p10 and p90 of measured / predicted kernel time
  // (kernel_profile.hpp ErrorBand; families without measurements: no spread). The band says how
  // far the kernel model alone could be off; communication has no band yet.
  std::array<double, kKernelFamilies> compute_by_family_s{};
  double iteration_p10_s = 0;
  double iteration_p90_s = 0;
};

// Throws std::invalid_argument for an invalid plan or configuration. When `trace` is given it
// receives every span of every simulated rank and stream.
IterationBreakdown replay_iteration(const TrainingConfig& config, IterationTrace* trace = nullptr);

}  // namespace dlsim::models
