// ParallelPlan: how one training job splits its model and batch over accelerators, and the
// numerics it trains with. Plain data; validate_plan() checks it against a model and a device
// count, stage_partition() cuts the model into pipeline stages.
//
// Ranks: data x pipeline x context x tensor accelerators. By default tensor parallelism is
// innermost (the t ranks of a tensor group are consecutive, so inside one node when t <= GPUs per
// node), then context parallelism (as Megatron-Core's default rank order, tp-cp-ep-dp-pp, puts it
// next to tp), then pipeline stages, then data-parallel replicas outermost: `order` lists the
// axes from innermost to outermost and may state any other mapping.
//
// Context parallelism (Megatron-Core --context-parallel-size, Transformer Engine's ring
// attention; Liu et al. 2023 "Ring Attention"): the c ranks of a context group split every
// sequence into 2c chunks, rank i keeping chunks i and 2c-1-i (so causal attention is balanced);
// every token-wise layer runs on the rank's 1/c of the tokens, and attention passes the keys and
// values around the ring in c steps, each step's send/recv overlapped with the attention of the
// block received before. The c ranks hold the same parameters: gradients are reduced, and ZeRO
// shards, over data x context ranks. Expert parallelism (mixture of experts) splits
// each data-parallel group into groups of e consecutive replicas that share their experts
// (DeepSpeed-MoE / Megatron-LM style: e divides d).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "models/gradient_compression.hpp"
#include "models/model_graph.hpp"
#include "models/optimizer.hpp"
#include "models/parameter_server.hpp"
#include "models/precision.hpp"

namespace dlsim::models {

// zb_h1: the zero-bubble schedule ZB-H1 (Qi et al., ICLR 2024), backward split into B and W
// (pipeline_schedule.hpp).
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved, zb_h1 };
enum class Recompute { none, selective, full };
enum class Axis { tensor, pipeline, data, context };

// ZeRO-3 / FSDP as a framework runs it (zero3_schedule.hpp has the mechanisms; only read when
// zero_stage == 3). Element counts are parameters, as the frameworks count them.
enum class ZeroImplementation { deepspeed, fsdp };
// DeepSpeed's parameter fetch: `per_parameter` as DeepSpeed 0.3 ran it (spring 2021: one list
// all-gather per parameter, a device-wide torch.cuda.synchronize() at every fetch);
// `coalesced` as DeepSpeed runs it since PR #1453 (January 2022): one flat all-gather per fetch,
// CUDA-event waits on the compute stream only.
enum class DeepSpeedFetch { per_parameter, coalesced };
enum class BackwardPrefetch { none, pre, post };  // FSDP's BackwardPrefetch (BACKWARD_PRE/POST)

struct ZeroConfig {
  ZeroImplementation implementation = ZeroImplementation::deepspeed;
  // DeepSpeed defaults: deepspeed/runtime/zero/config.py (the same values in stage3.py's
  // constructor of DeepSpeed 0.3.13, March 2021).
  DeepSpeedFetch fetch = DeepSpeedFetch::coalesced;
  double prefetch_bucket_size = 5e7;          // stage3_prefetch_bucket_size: elements prefetched ahead
  double max_live_parameters = 1e9;           // stage3_max_live_parameters: gathered elements held at once
  double max_reuse_distance = 1e9;            // stage3_max_reuse_distance: keep a module if reused sooner
  double param_persistence_threshold = 1e5;   // stage3_param_persistence_threshold: smaller stay gathered
  double reduce_bucket_size = 5e8;            // reduce_bucket_size: gradient elements per reduce-scatter
  bool overlap_comm = true;                   // overlap_comm (true by default for stage 3)
  // PyTorch FSDP (torch.distributed.fsdp.FullyShardedDataParallel, PyTorch 2.x docs):
  // backward_prefetch=BACKWARD_PRE by default. forward_prefetch and limit_all_gathers are not
  // settings here: with the host ahead of the device, FSDP's implicit forward prefetching issues
  // the next unit's all-gather as forward_prefetch would, and the limiter (two units in flight)
  // is what zero3_schedule.cpp assumes.
  BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;
  bool operator==(const ZeroConfig&) const = default;
};

// DeepSpeed's activation-checkpointing options (deepspeed/runtime/activation_checkpointing/
// config.py: all false by default). They act on what full recomputation keeps, each layer's
// input: partition_activations splits it over the model-parallel (tensor) group and
// all-gathers it before the layer is recomputed; cpu_checkpointing keeps it in host memory
// (copied out in forward, back before recomputation); contiguous_memory_optimization copies the
// partitions into one preallocated buffer (against fragmentation; needs partition_activations).
struct ActivationCheckpointing {
  bool partition_activations = false;
  bool cpu_checkpointing = false;
  bool contiguous_memory_optimization = false;
  bool operator==(const ActivationCheckpointing&) const = default;
};

struct ParallelPlan {
  int data = 1;
  int tensor = 1;
  int pipeline = 1;
  int expert = 1;                 // expert-parallel group size (divides data)
  int context = 1;                // context-parallel group size (ranks splitting each sequence)
  bool sequence_parallel = false; // Megatron sequence parallelism (needs tensor > 1)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;         // model chunks per pipeline rank (interleaved schedule)
  int micro_batches = 1;          // per iteration and replica (gradient accumulation steps)
  int micro_batch_size = 1;       // samples per micro-batch
  int zero_stage = 0;             // 0: none; 1: optimizer state; 2: + gradients; 3: + parameters (FSDP)
  Recompute recompute = Recompute::none;
  // Full recomputation of only the first N transformer blocks of each pipeline stage (model
  // chunk), the others keeping their activations: Megatron's --recompute-method block
  // --recompute-num-layers N. 0: every block (recompute full as it is).
  int recompute_layers = 0;
  Precision precision = Precision::fp32;           // compute, weights and activations
  Precision gradient_precision = Precision::fp32;  // gradients as reduced and accumulated
  Optimizer optimizer = Optimizer::sgd_momentum;
  bool overlap_grad_reduce = true;  // reduce gradient buckets while backward runs
  double bucket_bytes = 25.0 * 1024 * 1024;  // PyTorch DDP's bucket_cap_mb default (25 MB)
  bool scatter_gather = true;     // Megatron: pipeline sends 1/t per tensor rank, all-gather after
  // Megatron-Core's --overlap-p2p-communication: a stage's pipeline sends run beside its next
  // pass. Off (Megatron's default, and all Megatron-LM before it): the exchange blocks, because
  // p2p_communication waits on its isend/irecv requests (wait_on_reqs) and then synchronizes the
  // device (batch_p2p_sync), so the stage starts its next pass only when its send has arrived.
  bool overlap_p2p = false;
  // Megatron-Core's --tp-comm-overlap (Transformer Engine userbuffers): sequence parallelism's
  // all-gathers and reduce-scatters pipelined with the GEMMs next to them (iteration_program.hpp).
  bool tp_comm_overlap = false;
  // Megatron-Core's --overlap-param-gather with its distributed optimizer (zero_stage 1; 2
  // alike): the parameters updated by the step are all-gathered in buckets while the next
  // iteration's forward runs, each layer waiting only for its own bucket, instead of all at once
  // after the step.
  bool overlap_param_gather = false;
  std::array<Axis, 4> order{Axis::tensor, Axis::context, Axis::pipeline, Axis::data};  // innermost first
  ZeroConfig zero;                // how ZeRO-3 runs (zero_stage 3 only)
  ActivationCheckpointing checkpointing;
  // How the model's blocks (transformer layers) are split over the virtual pipeline stages
  // (stage_blocks() has the rules). At most one of: stage_layers (blocks per virtual stage,
  // pipeline x virtual_stages entries); first/last_stage_layers (Megatron-Core's
  // --decoder-first/last-pipeline-num-layers, 0: not given); account_for_embedding/loss
  // (Megatron-LM's --account-for-embedding/loss-in-pipeline-split).
  std::vector<int> stage_layers;
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  bool account_for_embedding = false;
  bool account_for_loss = false;
  GradientCompression compression;          // of the data-parallel gradient reduction
  ParameterServerConfig parameter_server;   // enabled: parameter servers instead of all-reduce

  int devices() const { return data * context * tensor * pipeline; }
  // Ranks holding the same parameters of one tensor and pipeline rank: gradients are reduced,
  // and ZeRO shards, over them.
  int gradient_replicas() const { return data * context; }
  int virtual_pipeline() const { return pipeline * virtual_stages; }
  int global_batch() const { return data * micro_batches * micro_batch_size; }
};

std::string to_string(PipelineSchedule s);   // "gpipe", "1f1b", "interleaved-1f1b", "zb-h1"
std::string to_string(Recompute r);          // "none", "selective", "full"

// Whether full recomputation re-runs the block that is the `ordinal`-th (from 0) transformer block
// of its pipeline stage (plan.recompute_layers).
inline bool recomputes_block(const ParallelPlan& plan, int ordinal) {
  return plan.recompute == Recompute::full && (plan.recompute_layers <= 0 || ordinal < plan.recompute_layers);
}
std::string to_string(Axis a);               // "tensor", "pipeline", "data", "context"
std::string to_string(ZeroImplementation z); // "deepspeed", "fsdp"
std::string to_string(DeepSpeedFetch f);     // "per-parameter", "coalesced"
std::string to_string(BackwardPrefetch b);   // "none", "pre", "post"

// Throws std::invalid_argument, naming the plan field and why, when the plan cannot run `model`
// on `devices` accelerators: sizes that do not multiply to the device count, a pipeline that does
// not divide the model's blocks, tensor parallelism on a model without a tensor layout, expert
// parallelism without experts, an interleaved schedule without chunks, ...
void validate_plan(const ParallelPlan& plan, const ModelGraph& model, int devices);

// Blocks of each virtual stage, for a model with blocks (pipeline x virtual_stages entries):
// - stage_layers as given (the first and last stage may hold none: only the embedding, or only
//   the output layer and loss; every other stage at least one);
// - first/last_stage_layers given: those, and the other blocks evenly over the other stages
//   (which they must divide, as in Megatron-Core);
// - account_for_embedding/loss: the embedding and the loss each count as one layer of the
//   first/last stage in an even split (blocks + 1 or 2 must divide, as in Megatron-LM);
// - otherwise an even split; when the blocks do not divide, the remainder goes one block each
//   to the middle stages from the second on (the first stage also runs the embedding, the last
//   the output layer and loss), then to the last and the first.
// Throws std::invalid_argument ("plan.<field>: why") when the settings cannot split the blocks.
std::vector<int> stage_blocks(const ParallelPlan& plan, const ModelGraph& model);

// The layers of each virtual pipeline stage, as [first, last) index ranges into model.layers,
// in virtual-stage order: chunk c of pipeline rank r is virtual stage c * pipeline + r.
// Models with blocks are cut at block boundaries by stage_blocks() (layers outside blocks stay
// with the block before them; those before the first block join the first stage, those after
// the last block the last stage); models without blocks are cut between layers so that forward
// FLOPs are as even as a greedy cut allows.
struct LayerRange {
  int first = 0;
  int last = 0;
};
std::vector<LayerRange> stage_partition(const ParallelPlan& plan, const ModelGraph& model);

// Global rank (index into the job's accelerators) of (data replica, pipeline rank, tensor rank,
// context rank).
int global_rank(const ParallelPlan& plan, int data_index, int pipeline_index, int tensor_index, int context_index = 0);

}  // namespace dlsim::models
