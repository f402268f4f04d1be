// Zero3Schedule: what ZeRO-3 (DeepSpeed) or FSDP (PyTorch) does around every module of one
// forward and one backward pass of a data-parallel rank: which parameters it all-gathers and
// when (fetch, prefetch), where the compute stream or the host waits for them, what it releases,
// where gradients are reduce-scattered, and what the host spends on it. A policy built once per
// configuration, without an engine; the replay (training_replay.cpp) runs its collectives in
// issue order on one stream per rank and obeys its waits. Units: seconds, bytes of one rank's
// tensor share; element counts where the frameworks count elements.
//
// Mechanisms (each with its source; constants in ZeroHostCosts and ZeroConfig):
// - Modules. A model layer with parameters is a module (a Linear, LayerNorm, Embedding); its
//   tensors are a Linear's weight and bias, a LayerNorm's scale and shift (parameter_tensors).
//   A layer tied to another (Layer::tied_to) also needs that layer's tensors. DeepSpeed holds
//   them as external parameters of the model's top module, as its Megatron-LM tutorial registers
//   the tied word embedding: gathered when forward starts, kept until backward ends.
// - DeepSpeed (deepspeed/runtime/zero/stage3.py, partition_parameters.py). The module trace is
//   the order of module uses: forward; in backward, each recomputed block's forward again, then
//   its backward in reverse. At a module's pre-forward/pre-backward hook the coordinator fetches
//   its tensors that are not gathered, then prefetches the next ones in trace order until
//   `prefetch_bucket_size` elements are under way (at least one tensor) if fewer than
//   `max_live_parameters` are gathered; after the module it releases each tensor unless the
//   trace uses it again within `max_reuse_distance` elements. Tensors smaller than
//   `param_persistence_threshold` elements stay gathered (and are all-gathered once after each
//   optimizer step). Gradients collect in a bucket of `reduce_bucket_size` elements that is
//   reduce-scattered when the next gradient would overflow it, and at the end of backward, which
//   waits for it.
//   - per-parameter fetch (DeepSpeed 0.3, spring 2021): one all-gather per tensor through
//     torch.distributed's list API, each after a device-wide torch.cuda.synchronize(); a fetch
//     that gathered or found tensors in flight synchronizes the device again
//     (_synchronize_communication), so the host and the device meet at every such module: the
//     device idles while the host runs the hook and issues the next gathers. The list API costs
//     the host per rank of the group: DeepSpeed's Python loop of narrow() views, and PyTorch's
//     copy of each rank's piece out of (all-gather) or into (reduce-scatter) a flat buffer
//     (ProcessGroupNCCL::allgather/reduce_scatter for tensor lists, PyTorch < 1.13). Gradients
//     are reduce-scattered one tensor at a time; the host waits for the previous bucket first
//     (reduction_stream.synchronize()). After the step, the persistent tensors are gathered by
//     one flat all-gather whose pieces Python copies out per tensor and rank (_allgather_params).
//   - coalesced fetch (DeepSpeed since PR #1453, January 2022): the tensors a fetch needs, and
//     the prefetched ones, travel in one flat all-gather each (all_gather_into_tensor); the
//     compute stream waits on CUDA events, the host runs ahead; a bucket is one coalesced
//     reduce-scatter, and the compute stream waits for the previous bucket before refilling it.
// - FSDP (torch.distributed.fsdp; Zhao et al. 2023, "PyTorch FSDP", VLDB): each transformer
//   block is a wrapped unit whose parameters are one flat tensor; layers outside blocks form the
//   root unit, gathered at the start of forward and kept until the end of backward. A unit is
//   all-gathered before its forward (the host runs ahead, so the next unit's all-gather is issued
//   while the current one computes: FSDP's implicit prefetching, held to two all-gathers in flight
//   by limit_all_gathers), resharded after it, all-gathered again before its backward (prefetched
//   one unit ahead with BACKWARD_PRE, after the current unit's gradients with BACKWARD_POST),
//   and its gradients reduce-scattered when its backward ends. Recomputation runs inside the
//   unit's backward on the parameters already gathered. Waits are CUDA-event waits.
// - One stream per process group: PyTorch's ProcessGroupNCCL runs every collective of a process
//   group on one NCCL stream per device, so parameter all-gathers and gradient reduce-scatters of
//   the data-parallel group run one after another, in issue order (the replay's queue).
#pragma once
#include <vector>

#include "models/device.hpp"
#include "models/model_graph.hpp"
#include "models/parallel_plan.hpp"
#include "network/collectives.hpp"

namespace dlsim::models {

// Host (CPU) seconds of the framework code around ZeRO-3, for PyTorch eager mode.
struct ZeroHostCosts {
  // A Python-level tensor call that launches no kernel (narrow, view, bookkeeping calls):
  // pytorch/pytorch issue 41383 (ngimel: about 2 us for an op without autograd, half of it the
  // Python argument parsing).
  double python_call_s = 2e-6;
  // A Python-level call that launches a kernel (torch.zeros, a copy_): kernel_profile.hpp's
  // HostOverhead::forward_kernel_s (8 us).
  double python_kernel_s = 8e-6;
  // A C++ call that launches a kernel (the copies inside ProcessGroupNCCL):
  // HostOverhead::backward_kernel_s (5 us).
  double cpp_kernel_s = 5e-6;
  // Python calls of a module hook's bookkeeping that does not scale with tensors or ranks
  // (trace recording, status checks and counters in fetch_sub_module, prefetch and
  // release_sub_module of DeepSpeed 0.3's stage3.py; FSDP's pre/post hooks): about 20, counted
  // from that code (an estimate, not a measurement).
  int hook_calls = 20;
};

// The host costs for a device's kernel profile (its launch costs where it has a kernel model).
ZeroHostCosts zero_host_costs(const DeviceProfile& profile);

// One collective of a pass, in issue order.
struct ZeroCollective {
  network::CollectiveKind kind = network::CollectiveKind::all_gather;  // all_gather or reduce_scatter
  double bytes = 0;            // nccl-tests size: the gathered output / the unreduced input
  int tensors = 0;             // parameter tensors it carries
};

// A point where the compute stream meets ZeRO-3: first it waits (for the device to drain, or on
// collectives), then the device idles `host_s` while the host works, then `issue` go out, then
// the device idles `host_after_s` more while the host finishes (the collectives already run).
struct ZeroPoint {
  bool drain = false;          // the host waits for the device: all compute and every collective issued
  int wait_through = -1;       // the compute stream waits until this pass's collectives 0..wait_through are done
  double host_s = 0;           // device idle while the host works, after the wait
  std::vector<int> issue;      // this pass's collectives issued, by index
  double host_after_s = 0;     // device idle while the host works after issuing
  bool empty() const { return !drain && wait_through < 0 && host_s <= 0 && issue.empty() && host_after_s <= 0; }
};

// One layer's run within a pass, with the ZeRO-3 points around it. layer < 0: a point at the end
// of the pass (DeepSpeed's gradient epilogue, FSDP's final wait).
struct ZeroStep {
  int layer = -1;
  bool recompute = false;      // a forward run inside backward
  std::vector<ZeroPoint> before;
  double overlapped_host_s = 0;  // host work while the layer runs (the layer lasts at least this)
  std::vector<ZeroPoint> after;
};

struct ZeroPass {
  std::vector<ZeroStep> steps;
  std::vector<ZeroCollective> collectives;  // issue order
};

struct Zero3Schedule {
  ZeroPass forward;            // one micro-batch
  ZeroPass backward;           // one micro-batch (with recomputation)
  std::vector<ZeroCollective> after_step;   // after the optimizer step (DeepSpeed: persistent tensors)
  double after_step_host_s = 0;             // host time of it, device idle
  // Memory, in elements of one rank's tensor share.
  double persistent_elements = 0;  // never released (DeepSpeed: below the persistence threshold)
  double peak_live_elements = 0;   // gathered (or in flight) at once, persistent excluded
  // The most bytes held at once beyond the shards, over forward and backward: gathered
  // parameters, with the per-parameter fetch the flat copy torch.distributed's list API makes of
  // the tensor it gathers or reduces, and in backward the gradient buckets (DeepSpeed: two with
  // overlap_comm, allocated when backward starts) and unreduced gradients (DeepSpeed: those too
  // large for a bucket, and each module's until copied into it; FSDP: the unit's flat gradient).
  double peak_buffer_bytes = 0;
  double bucket_bytes = 0;         // of which gradient buckets
  // Counts, for tests and reports.
  int gathers = 0;                 // all-gathers per forward + backward of one micro-batch
  int reduce_scatters = 0;
};

// A layer's parameter tensors as one rank holds them (rank_share): a linear's weight then bias,
// a LayerNorm's scale and shift, one table for an embedding; experts/e copies of each for a
// mixture-of-experts layer.
std::vector<double> parameter_tensors(const Layer& share, const Layer& layer);

// The schedule of `range` (ZeRO-3 runs without a pipeline: the whole model) on a data-parallel
// group of plan.data ranks. The plan must be valid (validate_plan) with zero_stage 3.
Zero3Schedule build_zero3_schedule(const ModelGraph& model, const ParallelPlan& plan, LayerRange range,
                                   const ZeroHostCosts& host);

}  // namespace dlsim::models
