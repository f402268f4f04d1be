// Building the per-stage pass programs (see iteration_program.hpp).
#include "models/iteration_program.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "models/conv_model.hpp"
#include "models/fp8_recipe.hpp"
#include "models/layer_kernels.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/power_limit.hpp"
#include "models/roofline.hpp"

namespace dlsim::models {

namespace {

// The kernel dims of one rank's share (layer_kernels.hpp): Megatron's column-parallel linears
// split the output features, row-parallel ones the input features, attention splits heads;
// sequence parallelism splits the positions of replicated layers; expert parallelism leaves
// experts / e experts on a rank, each fed by the tokens routed to it from the whole group.
// Context parallelism leaves each rank 1/c of every sequence's tokens (rows), and its attention
// queries meet the c key/value blocks one ring step at a time.
void split_kernel_dims(Layer& share, const Layer& layer, const ParallelPlan& plan) {
  const double t = plan.tensor, c = plan.context;
  const bool split = layer.tensor == TensorSplit::split;
  if (layer.kind == LayerKind::attention) {
    if (split) {
      share.attention.heads = std::max(1.0, layer.attention.heads / t);
      share.attention.kv_heads = std::max(1.0, layer.attention.kv_heads / t);
    }
    if (plan.context > 1) {
      share.attention.query_length = layer.attention.query_length / c;
      share.attention.key_length = layer.attention.key_length / c;
      share.attention.ring_steps = plan.context;
    }
    return;
  }
  const bool matrix = layer.kind == LayerKind::linear || layer.kind == LayerKind::matmul || layer.kind == LayerKind::conv;
  if (!matrix || layer.conv.channels > 0) return;
  MatmulDims d = derive_matmul(layer);
  if (split && layer.kind == LayerKind::matmul) {
    d.count = std::max(1.0, d.count / t);
  } else if (split && layer.tp_all_reduce) {
    d.depth /= t;
  } else if (split) {
    d.cols /= t;
  } else if (plan.sequence_parallel) {
    d.rows /= t;
  }
  if (!d.batch_in_count) d.rows /= c;
  if (layer.experts > 0) {
    d.count = std::max(1.0, d.count / plan.expert);
    d.rows *= plan.expert;
  }
  share.matmul = d;
}

}  // namespace

Layer rank_share(const Layer& layer, const ParallelPlan& plan) {
  Layer share = layer;
  const double t = plan.tensor;
  const bool split = layer.tensor == TensorSplit::split;
  // Work and activations: split layers do 1/t; replicated ones repeat the work on every tensor
  // rank, unless sequence parallelism splits them along the sequence. Context parallelism splits
  // every layer's tokens (attention's too: the balanced causal split gives each rank 1/c of it).
  const double work = (split || plan.sequence_parallel ? 1.0 / t : 1.0) / plan.context;
  share.forward_flops *= work;
  share.backward_flops = backward_flops(layer) * work;
  share.input_elements *= work;
  share.activation_elements *= work;
  // A column-parallel linear keeps its whole input (every tensor rank reads the full activation,
  // Korthikanti et al. 2022 sec. 4.2.1); sequence parallelism keeps only its 1/t sequence shard.
  const bool column_parallel = split && layer.kind == LayerKind::linear && !layer.tp_all_reduce;
  share.saved_elements = saved_elements(layer) * (column_parallel && !plan.sequence_parallel ? 1.0 / plan.context : work);
  double params = layer.parameters;
  if (split) params /= t;
  if (layer.experts > 0) params /= plan.expert;
  share.parameters = params;
  split_kernel_dims(share, layer, plan);
  return share;
}

namespace {

struct Builder {
  const ModelGraph& model;
  const ParallelPlan& plan;
  const DeviceSpec& device;
  const DeviceProfile& profile;
  double element;
  double gradient_element;
  long long* out_of_range;

  bool cut = false;  // the next compute starts a new segment (a gradient bucket just filled)
  // plan.tp_comm_overlap: tensor segments (indices into the pass) waiting for the next tensor-
  // split GEMM to run with.
  std::vector<std::size_t> waiting_overlap{};
  bool backward_pass = false;   // building a backward pass (its collectives wait for the GEMM after them)
  double parameters_so_far = 0; // forward: parameter bytes of the layers built so far (Segment::parameters_through)
  double next_gather_cut = 0;   // forward: where the next gather bucket ends (plan.overlap_param_gather)
  double last_compute_s = 0;    // forward: the time of the tensor-split GEMM just added, 0 otherwise
  double pending_gradients = 0;
  bool bucket_gradients = true;      // false under ZeRO-3: its schedule reduce-scatters them
  std::size_t last_compute = 0;      // index of the compute segment the last layer ran in
  // ZB-H1: the stage's W pass being built beside its B pass, with its own host lead and cut.
  PassProgram* weight_pass = nullptr;
  double weight_slack = 0;
  bool weight_cut = false;

  Segment& open_compute(PassProgram& pass, bool recompute = false) {
    const Segment* last = pass.segments.empty() ? nullptr : &pass.segments.back();
    if (cut || last == nullptr || last->kind != SegmentKind::compute || last->offload || last->recompute != recompute) {
      pass.segments.push_back(Segment{});
      cut = false;
    }
    return pass.segments.back();
  }

  // A tensor-split GEMM (a Megatron linear) that a waiting collective runs with: its time goes
  // into that segment instead of a compute one (the pass's compute totals still count it).
  bool overlapped(PassProgram& pass, const Layer& layer, const KernelTimes& k, bool recompute) {
    if (waiting_overlap.empty() || layer.kind != LayerKind::linear || layer.tensor != TensorSplit::split) return false;
    pass.segments[waiting_overlap.front()].overlap_s += k.seconds;
    if (recompute) pass.segments[waiting_overlap.front()].recompute = true;
    waiting_overlap.erase(waiting_overlap.begin());
    account(pass, k, recompute);
    return true;
  }

  // Context parallelism: attention runs with its ring exchange (a context segment). The blocks
  // are the rank's keys and values (kv heads on this tensor rank, s/c tokens), forward; backward
  // passes the gradients of the keys and values around too (Transformer Engine's
  // AttnFuncWithCPAndKVP2P sends dK and dV along with K and V).
  bool ring_attention(PassProgram& pass, const Layer& share, const KernelTimes& k, bool recompute, bool backward) {
    if (plan.context <= 1 || share.kind != LayerKind::attention) return false;
    const AttentionDims& a = share.attention;
    const double block = 2.0 * a.kv_heads * a.head_dim * a.key_length * plan.micro_batch_size * element;
    Segment s;
    s.kind = SegmentKind::context;
    s.collective = network::CollectiveKind::all_gather;
    s.bytes = block * plan.context * (backward ? 2.0 : 1.0);
    s.overlap_s = k.seconds;
    s.recompute = recompute;
    s.parameters_through = parameters_so_far;
    pass.segments.push_back(s);
    account(pass, k, recompute);
    return true;
  }

  void add_compute(PassProgram& pass, const KernelTimes& k, bool recompute) {
    Segment& s = open_compute(pass, recompute);
    last_compute = pass.segments.size() - 1;
    s.seconds += k.seconds;
    s.recompute = recompute;
    account(pass, k, recompute);
  }

  // A pass's totals count every kernel, whichever segment runs it.
  static void account(PassProgram& pass, const KernelTimes& k, bool recompute) {
    pass.compute_s += k.seconds;
    pass.kernels += k.kernels;
    for (std::size_t f = 0; f < k.by_family.size(); ++f) pass.family_s[f] += k.by_family[f];
    if (recompute) pass.recompute_s += k.seconds;
  }

  // The host issues kernels one after another, each costing it `launch` seconds (framework
  // dispatch and the CUDA launch, kernel_profile.hpp's HostOverhead); the device runs them in
  // order as they arrive. `slack` is how
  // far the host is ahead; a kernel issued later than the device could start it stalls the
  // device (small kernels make a pass launch-bound). Kernels of one layer are taken as equal.
  double slack = 0;
  double with_host(const KernelTimes& k, bool backward) {
    if (k.kernels == 0) {
      slack += k.seconds;
      return k.seconds;
    }
    const HostOverhead& host = profile.kernels.host;
    const double launch = backward ? host.backward_kernel_s : host.forward_kernel_s, each = k.seconds / k.kernels;
    double device = 0;
    for (int i = 0; i < k.kernels; ++i) {
      const double wait = std::max(0.0, launch - slack);
      device += wait + each;
      slack = std::max(0.0, slack - launch) + each;
    }
    return device;
  }

  // One layer's forward or backward on this rank: kernel-level where the device has a kernel
  // profile (layer_kernels.hpp), else the roofline (roofline.hpp, one time per pass, no host
  // model: its launch cost is inside).
  // With `weight` (ZB-H1's backward), the weight-gradient kernels are left out of the returned
  // B part and given there, before the host model (the W pass runs them later).
  KernelTimes layer_compute(int i, const Layer& share, bool backward, KernelTimes* weight = nullptr) {
    KernelTimes k;
    const Precision precision = layer_precision(share);
    if (!profile.kernels.present()) {
      const LayerTime t = layer_time(share, plan.micro_batch_size, precision, device, profile, out_of_range);
      k.seconds = backward ? t.backward_s : t.forward_s;
      k.kernels = 1;
      const auto family = is_matrix_layer(share.kind) ? KernelFamilyKind::gemm : KernelFamilyKind::memory;
      // roofline.cpp times a backward with weights as two equal kernels, one of them dB.
      if (weight != nullptr && has_weight_gradient(share)) {
        k.seconds /= 2;
        weight->add(family, k.seconds);
      }
      k.by_family[static_cast<std::size_t>(family)] = k.seconds;
      return k;
    }
    LayerKernelTimes t = stage_kernel_times(i, share);
    if (tensor_slowdown != 1 && is_tensor_core_work(precision)) {
      for (KernelTimes* part : {&t.forward, &t.backward, &t.weight}) slow_tensor_core_kernels(*part);
    }
    KernelTimes pass = backward ? t.backward : t.forward;
    if (weight != nullptr) {
      *weight = t.weight;
      pass.seconds -= t.weight.seconds;
      pass.kernels -= t.weight.kernels;
      for (std::size_t f = 0; f < pass.by_family.size(); ++f) pass.by_family[f] -= t.weight.by_family[f];
    }
    return on_host(pass, backward);
  }

  // precision fp8: the linear layers' GEMMs in FP8, everything else in bf16 (fp8_recipe.hpp).
  Precision layer_precision(const Layer& share) const {
    return runs_in_fp8(share, plan.precision) ? Precision::fp8 : storage_precision(plan.precision);
  }

  // One layer's kernels on this rank at the kernel model's (cool-GPU) rates, on `on` (the
  // device, or the device with SMs held by communication kernels).
  LayerKernelTimes kernel_times(int i, const Layer& share) const { return kernel_times(i, share, device); }
  LayerKernelTimes kernel_times(int i, const Layer& share, const DeviceSpec& on) const {
    double chained = 0;
    if (share.fused && i > 0) chained = rank_share(model.layers[static_cast<std::size_t>(i - 1)], plan).activation_elements;
    const bool after_norm = i > 0 && model.layers[static_cast<std::size_t>(i - 1)].kind == LayerKind::norm;
    const Fp8Casts cast{plan.zero_stage != 3, static_cast<double>(plan.micro_batches), after_norm};
    return runs_in_fp8(share, plan.precision)
               ? fp8_linear_kernel_times(share, plan.micro_batch_size, cast, on, profile)
               : layer_kernel_times(share, plan.micro_batch_size, layer_precision(share), on, profile, chained);
  }

  // The stage's layers' kernel times, computed once (prepare_stage) and reused by every pass and
  // recomputation that runs a layer: index i - stage_first. `share` is rank_share of layer i.
  std::vector<LayerKernelTimes> stage_kernels{};
  int stage_first = 0;
  LayerKernelTimes stage_kernel_times(int i, const Layer& share) const {
    const int at = i - stage_first;
    if (at >= 0 && at < static_cast<int>(stage_kernels.size())) return stage_kernels[static_cast<std::size_t>(at)];
    return kernel_times(i, share);
  }

  // The power limit (power_limit.hpp): the tensor-core kernels of this stage, slowed by
  // `tensor_slowdown`. GEMM and convolution kernels count when their math runs on tensor cores
  // (the measured load); attention (FlashAttention) always does.
  static constexpr std::array<KernelFamilyKind, 3> kTensorCoreFamilies{KernelFamilyKind::gemm, KernelFamilyKind::conv,
                                                                       KernelFamilyKind::attention};
  double tensor_slowdown = 1;
  bool is_tensor_core_work(Precision precision) const { return tensor_core_math(precision, device); }
  void slow_tensor_core_kernels(KernelTimes& k) const {
    for (const KernelFamilyKind f : kTensorCoreFamilies) {
      double& s = k.by_family[static_cast<std::size_t>(f)];
      const double extra = s * (tensor_slowdown - 1);
      s += extra;
      k.seconds += extra;
    }
  }

  // Before a stage's passes are built: its layers' kernel times, and from them the duty that sets
  // how far the clock drops, the share of the stage's kernel time (one micro-batch, forward and
  // backward, at the model's rates) in tensor-core kernels.
  void prepare_stage(LayerRange range) {
    stage_kernels.clear();
    stage_first = range.first;
    tensor_slowdown = 1;
    if (!profile.kernels.present()) return;
    double tensor = 0, all = 0;
    for (int i = range.first; i < range.last; ++i) {
      const Layer share = rank_share(model.layers[static_cast<std::size_t>(i)], plan);
      const LayerKernelTimes& t = stage_kernels.emplace_back(kernel_times(i, share));
      all += t.forward.seconds + t.backward.seconds;
      if (!is_tensor_core_work(layer_precision(share))) continue;
      for (const KernelFamilyKind f : kTensorCoreFamilies) {
        tensor += t.forward.by_family[static_cast<std::size_t>(f)] + t.backward.by_family[static_cast<std::size_t>(f)];
      }
    }
    tensor_slowdown = power_limited_slowdown(profile.kernels.sustained_tensor_rate, all > 0 ? tensor / all : 0);
  }

  // How much slower the stage's kernels run while communication kernels hold `busy_units` SMs
  // (DeviceSpec::busy_units): the ratio of its layers' kernel times, forward and backward, on
  // the device with those SMs held to those on the whole device. 1 without a kernel profile.
  void busy_slowdowns(LayerRange range, int busy_units, StageProgram& stage) const {
    if (busy_units <= 0 || !profile.kernels.present()) return;
    DeviceSpec held = device;
    held.busy_units = busy_units;
    double forward = 0, backward = 0, forward_held = 0, backward_held = 0;
    for (int i = range.first; i < range.last; ++i) {
      const Layer share = rank_share(model.layers[static_cast<std::size_t>(i)], plan);
      const LayerKernelTimes& whole = stage_kernel_times(i, share);
      const LayerKernelTimes slowed = kernel_times(i, share, held);
      forward += whole.forward.seconds;
      backward += whole.backward.seconds;
      forward_held += slowed.forward.seconds;
      backward_held += slowed.backward.seconds;
    }
    if (forward > 0) stage.forward_busy_slowdown = forward_held / forward;
    if (backward > 0) stage.backward_busy_slowdown = backward_held / backward;
  }

  // The kernels' device time once the host's launches are accounted (with_host); host stalls go
  // to the dominant family.
  KernelTimes on_host(KernelTimes pass, bool backward) {
    const double device_s = with_host(pass, backward);
    pass.by_family[static_cast<std::size_t>(dominant_family(pass))] += device_s - pass.seconds;
    pass.seconds = device_s;
    return pass;
  }

  static KernelFamilyKind dominant_family(const KernelTimes& k) {
    std::size_t best = 0;
    for (std::size_t f = 1; f < k.by_family.size(); ++f) if (k.by_family[f] > k.by_family[best]) best = f;
    return static_cast<KernelFamilyKind>(best);
  }

  // The blocking collectives after layer i in forward (and, mirrored, in backward).
  void add_collectives(PassProgram& pass, int i, const Layer& layer) {
    const double mb = plan.micro_batch_size;
    // Per sample on this rank: context parallelism leaves it 1/c of the tokens.
    const double tokens_share = 1.0 / plan.context;
    if (layer.tp_all_reduce && plan.tensor > 1) {
      const double bytes = layer.activation_elements * tokens_share * mb * element;  // the full (unsplit) output
      Segment s;
      s.kind = SegmentKind::tensor;
      s.bytes = bytes;
      if (plan.sequence_parallel) {
        s.collective = network::CollectiveKind::reduce_scatter;
        // Forward: the reduce-scatter runs with the row-parallel GEMM just computed (layer i).
        if (plan.tp_comm_overlap && !backward_pass && last_compute_s > 0 && pass.segments.size() == last_compute + 1) {
          pass.segments[last_compute].seconds -= last_compute_s;
          s.overlap_s = last_compute_s;
          last_compute_s = 0;
        }
        pass.segments.push_back(s);
        if (plan.tp_comm_overlap && s.overlap_s == 0) waiting_overlap.push_back(pass.segments.size() - 1);
        s.overlap_s = 0;
        s.collective = network::CollectiveKind::all_gather;
        // fp8: the norm after writes FP8 and the forward all-gathers that (fp8_recipe.hpp).
        if (plan.precision == Precision::fp8 && !backward_pass) s.bytes *= kFp8Bytes / element;
      }
      pass.segments.push_back(s);
      if (plan.tp_comm_overlap && plan.sequence_parallel) waiting_overlap.push_back(pass.segments.size() - 1);
    }
    if (layer.all_to_all_after && plan.expert > 1) {
      // Dispatch (after the router) moves what the next (expert) layer reads; combine (after an
      // expert layer) moves what the experts wrote.
      double elements = layer.activation_elements;
      if (layer.experts == 0 && i + 1 < static_cast<int>(model.layers.size())) {
        elements = model.layers[static_cast<std::size_t>(i + 1)].input_elements;
      }
      const bool seq_split = plan.sequence_parallel || plan.tensor == 1;
      Segment s;
      s.kind = SegmentKind::expert;
      s.collective = network::CollectiveKind::all_to_all;
      s.bytes = elements * tokens_share * mb * element / (seq_split ? plan.tensor : 1.0);
      pass.segments.push_back(s);
    }
  }

  bool block_start(int i) const {
    const Layer& layer = model.layers[static_cast<std::size_t>(i)];
    return layer.block >= 0 && (i == 0 || model.layers[static_cast<std::size_t>(i - 1)].block != layer.block);
  }

  // DeepSpeed's activation-checkpointing options around a block's kept input (full
  // recomputation): in forward the copy to the host (cpu_checkpointing); before recomputation
  // the copy back and the all-gather of the tensor-parallel partitions (partition_activations).
  void checkpoint_transfers(PassProgram& pass, int i, bool recompute) {
    const ActivationCheckpointing& a = plan.checkpointing;
    if (plan.recompute != Recompute::full || !block_start(i) || (!a.cpu_checkpointing && !a.partition_activations)) return;
    const double whole = rank_share(model.layers[static_cast<std::size_t>(i)], plan).input_elements * plan.micro_batch_size * element;
    const bool partitioned = a.partition_activations && plan.tensor > 1 && !plan.sequence_parallel;
    const double kept = partitioned ? whole / plan.tensor : whole;
    if (a.cpu_checkpointing) {
      Segment copy;
      copy.offload = true;
      copy.seconds = kept / device.pcie_bandwidth;
      pass.segments.push_back(copy);
      cut = true;
    }
    if (recompute && partitioned) {
      Segment g;
      g.kind = SegmentKind::tensor;
      g.collective = network::CollectiveKind::all_gather;
      g.bytes = whole;
      pass.segments.push_back(g);
    }
  }

  void forward_layers(PassProgram& pass, int first, int last, bool recompute, bool only_attention_core) {
    for (int i = first; i < last; ++i) {
      const Layer& layer = model.layers[static_cast<std::size_t>(i)];
      if (!only_attention_core) checkpoint_transfers(pass, i, recompute);
      if (only_attention_core && !layer.attention_core) continue;
      const Layer share = rank_share(layer, plan);
      const KernelTimes k = layer_compute(i, share, false);
      backward_pass = false;
      last_compute_s = 0;
      const std::size_t waiting = waiting_overlap.empty() ? 0 : waiting_overlap.front();
      parameters_so_far += recompute ? 0.0 : share.parameters * element;
      if (overlapped(pass, layer, k, recompute)) {
        pass.segments[waiting].parameters_through = parameters_so_far;
      } else if (ring_attention(pass, share, k, recompute, false)) {
        cut = true;
      } else {
        add_compute(pass, k, recompute);
        pass.segments[last_compute].parameters_through = parameters_so_far;
        if (layer.kind == LayerKind::linear && layer.tensor == TensorSplit::split) last_compute_s = k.seconds;
      }
      // plan.overlap_param_gather: end the segment where a gather bucket fills, so that the
      // layers after it wait only for their own bucket.
      if (plan.overlap_param_gather && !recompute && parameters_so_far >= next_gather_cut) {
        cut = true;
        while (next_gather_cut <= parameters_so_far) next_gather_cut += plan.bucket_bytes;
      }
      if (!only_attention_core) add_collectives(pass, i, layer);
    }
  }

  void backward_layers(PassProgram& pass, int first, int last) {
    for (int i = last - 1; i >= first; --i) {
      const Layer& layer = model.layers[static_cast<std::size_t>(i)];
      backward_pass = true;
      add_collectives(pass, i, layer);
      const Layer share = rank_share(layer, plan);
      KernelTimes weight;
      const KernelTimes k = layer_compute(i, share, true, weight_pass != nullptr ? &weight : nullptr);
      if (ring_attention(pass, share, k, false, true)) {
        cut = true;
      } else if (!overlapped(pass, layer, k, false)) {
        add_compute(pass, k, false);
      }
      if (weight_pass != nullptr) {
        weight_layer(weight, layer, share);
        continue;
      }
      if (bucket_gradients) add_gradients(pass, layer, share);
    }
  }

  // ZB-H1: layer `layer`'s weight-gradient kernels and its gradients, appended to the W pass.
  void weight_layer(const KernelTimes& weight, const Layer& layer, const Layer& share) {
    std::swap(slack, weight_slack);
    std::swap(cut, weight_cut);
    const std::size_t b_last_compute = last_compute;
    const KernelTimes k = profile.kernels.present() ? on_host(weight, true) : weight;
    if (k.seconds > 0) add_compute(*weight_pass, k, false);
    if (bucket_gradients) add_gradients(*weight_pass, layer, share);
    last_compute = b_last_compute;
    std::swap(slack, weight_slack);
    std::swap(cut, weight_cut);
  }

  // The gradients layer `layer` finishes, on the pass's current compute segment.
  void add_gradients(PassProgram& pass, const Layer& layer, const Layer& share) {
    Segment& s = open_compute(pass);
    const double gradients = share.parameters * gradient_element;
    s.gradient_bytes += gradients;
    if (layer.experts > 0) s.expert_gradient_bytes += gradients;
    if (plan.compression.method == CompressionMethod::powersgd) {
      for (const WeightMatrix& m : weight_matrices(share, model.tokens_per_sample)) s.gradient_matrices.push_back(m);
    }
    // End the segment where a gradient bucket fills, so that the replay can start reducing
    // it there (DDP launches a bucket's all-reduce as soon as its last gradient is ready).
    pending_gradients += gradients;
    if (pending_gradients >= plan.bucket_bytes) {
      cut = true;
      pending_gradients = 0;
    }
  }
};

// Runs of consecutive layers: a block each; outside blocks, each run between blocks.
std::vector<LayerRange> blocks_of(const ModelGraph& model, LayerRange range) {
  std::vector<LayerRange> runs;
  for (int i = range.first; i < range.last; ++i) {
    const int block = model.layers[static_cast<std::size_t>(i)].block;
    if (runs.empty() || block != model.layers[static_cast<std::size_t>(i - 1)].block) runs.push_back({i, i});
    runs.back().last = i + 1;
  }
  return runs;
}

// A ZeRO-3 point as a segment (none when it does nothing).
void add_zero_point(PassProgram& pass, const ZeroPoint& p, Builder& b) {
  if (p.empty()) return;
  Segment s;
  s.kind = SegmentKind::zero;
  s.drain = p.drain;
  s.wait_through = p.wait_through;
  s.host_s = p.host_s;
  s.issue = p.issue;
  s.host_after_s = p.host_after_s;
  pass.segments.push_back(std::move(s));
  b.cut = true;
}

// The passes of a ZeRO-3 stage: its schedule's steps, each layer's compute between its points.
void zero3_pass(Builder& b, PassProgram& pass, const ZeroPass& z, bool backward) {
  const bool selective = b.plan.recompute == Recompute::selective;
  b.slack = 0;
  for (const ZeroStep& step : z.steps) {
    for (const ZeroPoint& p : step.before) add_zero_point(pass, p, b);
    if (step.layer >= 0) {
      const std::size_t before = pass.segments.size();
      if (!backward || step.recompute) {
        b.forward_layers(pass, step.layer, step.layer + 1, step.recompute, step.recompute && selective);
      } else {
        b.backward_layers(pass, step.layer, step.layer + 1);
      }
      if (step.overlapped_host_s > 0 && pass.segments.size() > before) pass.segments[b.last_compute].host_floor_s += step.overlapped_host_s;
    }
    for (const ZeroPoint& p : step.after) add_zero_point(pass, p, b);
  }
  pass.collectives = z.collectives;
}

void zero3_passes(Builder& b, StageProgram& stage, const ModelGraph& model, const ParallelPlan& plan, LayerRange range,
                  const ZeroHostCosts& host, IterationProgram& program) {
  const Zero3Schedule z = build_zero3_schedule(model, plan, range, host);
  b.bucket_gradients = false;
  zero3_pass(b, stage.forward, z.forward, false);
  b.cut = false;
  zero3_pass(b, stage.backward, z.backward, true);
  program.after_step = z.after_step;
  program.after_step_host_s = z.after_step_host_s;
}

}  // namespace

IterationProgram build_iteration_program(const ModelGraph& model, const ParallelPlan& plan, const DeviceSpec& device,
                                         const DeviceProfile& profile, int busy_units) {
  IterationProgram program;
  Builder b{model, plan, device, profile, bytes_per_element(storage_precision(plan.precision)), bytes_per_element(plan.gradient_precision),
            &program.profile_out_of_range};
  const auto ranges = stage_partition(plan, model);
  for (const LayerRange& range : ranges) {
    StageProgram stage;
    stage.layers = range;
    int ordinal = -1, previous_block = -1;  // the stage's transformer blocks, counted from 0
    for (int i = range.first; i < range.last; ++i) {
      const Layer& layer = model.layers[static_cast<std::size_t>(i)];
      if (layer.block >= 0 && layer.block != previous_block) ++ordinal;
      if (layer.block >= 0) previous_block = layer.block;
      const Layer share = rank_share(layer, plan);
      stage.parameters += share.parameters;
      if (layer.experts > 0) stage.expert_parameters += share.parameters;
      stage.forward_flops += share.forward_flops * plan.micro_batch_size;
      stage.backward_flops += share.backward_flops * plan.micro_batch_size;
      const bool recomputed = plan.recompute == Recompute::full ? layer.block >= 0 && recomputes_block(plan, ordinal)
                              : plan.recompute == Recompute::selective ? layer.attention_core
                                                                         : false;
      if (recomputed) stage.recompute_flops += share.forward_flops * plan.micro_batch_size;
    }
    const Layer& last = model.layers[static_cast<std::size_t>(range.last - 1)];
    stage.output_bytes = last.activation_elements / plan.context * plan.micro_batch_size * b.element;

    b.slack = 0;
    b.prepare_stage(range);
    b.busy_slowdowns(range, busy_units, stage);
    if (plan.zero_stage == 3) {
      zero3_passes(b, stage, model, plan, range, zero_host_costs(profile), program);
    } else {
      b.waiting_overlap.clear();
      b.parameters_so_far = 0;
      b.next_gather_cut = plan.bucket_bytes;
      b.forward_layers(stage.forward, range.first, range.last, false, false);
      b.pending_gradients = 0;
      b.cut = false;
      b.slack = 0;
      b.waiting_overlap.clear();
      b.weight_pass = splits_weight_gradients(plan) ? &stage.weight : nullptr;
      b.weight_slack = 0;
      b.weight_cut = false;
      // Backward block by block from the last (recomputation re-runs each block first).
      const auto blocks = blocks_of(model, range);
      std::vector<int> ordinals(blocks.size(), -1);
      for (std::size_t k = 0, n = 0; k < blocks.size(); ++k) {
        if (model.layers[static_cast<std::size_t>(blocks[k].first)].block >= 0) ordinals[k] = static_cast<int>(n++);
      }
      for (std::size_t k = blocks.size(); k-- > 0;) {
        const LayerRange r = blocks[k];
        const bool in_block = model.layers[static_cast<std::size_t>(r.first)].block >= 0;
        if (in_block && recomputes_block(plan, ordinals[k])) b.forward_layers(stage.backward, r.first, r.last, true, false);
        if (in_block && plan.recompute == Recompute::selective) b.forward_layers(stage.backward, r.first, r.last, true, true);
        b.backward_layers(stage.backward, r.first, r.last);
      }
      b.weight_pass = nullptr;
    }
    program.stages.push_back(std::move(stage));
  }
  return program;
}

}  // namespace dlsim::models
