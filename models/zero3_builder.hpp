// The machinery zero3_deepspeed.cpp and zero3_fsdp.cpp share (zero3_schedule.hpp): one rank's
// parameter tensors, the module trace of a forward and a backward pass, and the pass being
// built. Internal to the ZeRO-3 schedule; not for other units.
#pragma once
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "models/iteration_program.hpp"
#include "models/precision.hpp"
#include "models/zero3_schedule.hpp"

namespace dlsim::models::zero3_detail {

using network::CollectiveKind;

// A parameter tensor of one rank: gathered, in flight (its all-gather issued, not waited for), or
// released (only the rank's shard held).
enum class Status { released, in_flight, gathered };

struct Tensor {
  double numel = 0;
  bool persistent = false;
  Status status = Status::released;
};

// One use of a layer in the trace: its forward, its forward again inside backward, or its backward.
struct Use {
  int layer = 0;
  bool backward = false;
  bool recompute = false;
};

// What both frameworks share: the model's tensors and modules, the trace, the passes being built.
struct Builder {
  const ModelGraph& model;
  const ParallelPlan& plan;
  LayerRange range;
  const ZeroHostCosts& host;
  double element, gradient_element, ranks;
  std::vector<Tensor> tensors;
  std::map<int, std::vector<int>> own;      // layer -> its tensors
  std::vector<Use> trace;                   // forward, then backward
  std::size_t backward_start = 0;
  Zero3Schedule out;
  ZeroPass* pass = nullptr;
  int last_reduce = -1;                     // index in *pass of the last reduce-scatter
  double live = 0;                          // non-persistent elements gathered or in flight

  Builder(const ModelGraph& m, const ParallelPlan& p, LayerRange r, const ZeroHostCosts& h)
      : model(m), plan(p), range(r), host(h), element(bytes_per_element(storage_precision(p.precision))),
        gradient_element(bytes_per_element(p.gradient_precision)), ranks(p.data) {
    for (int i = r.first; i < r.last; ++i) {
      const Layer& layer = model.layers[static_cast<std::size_t>(i)];
      for (double n : parameter_tensors(rank_share(layer, plan), layer)) {
        own[i].push_back(static_cast<int>(tensors.size()));
        tensors.push_back({n, false, Status::released});
      }
    }
    build_trace();
  }

  // Tensors a use of `layer` needs: its own and those of the layer it is tied to.
  std::vector<int> needs(int layer) const {
    std::vector<int> t;
    if (auto it = own.find(layer); it != own.end()) t = it->second;
    const int tied = model.layers[static_cast<std::size_t>(layer)].tied_to;
    if (tied >= 0) {
      if (auto it = own.find(tied); it != own.end()) t.insert(t.end(), it->second.begin(), it->second.end());
    }
    return t;
  }
  double numel_of(int layer) const {
    double n = 0;
    for (int t : needs(layer)) n += tensors[static_cast<std::size_t>(t)].numel;
    return n;
  }

  bool recomputed(const Layer& l) const {
    return l.block >= 0 && (plan.recompute == Recompute::full || (plan.recompute == Recompute::selective && l.attention_core));
  }

  // Forward in order; backward block by block from the last, each recomputed block's forward
  // (or attention core) first, then its layers in reverse.
  void build_trace() {
    for (int i = range.first; i < range.last; ++i) trace.push_back({i, false, false});
    backward_start = trace.size();
    for (int i = range.last - 1; i >= range.first;) {
      const int block = model.layers[static_cast<std::size_t>(i)].block;
      int first = i;
      while (block >= 0 && first > range.first && model.layers[static_cast<std::size_t>(first - 1)].block == block) --first;
      if (block >= 0 && plan.recompute != Recompute::none) {
        for (int j = first; j <= i; ++j) {
          if (recomputed(model.layers[static_cast<std::size_t>(j)])) trace.push_back({j, false, true});
        }
      }
      for (int j = i; j >= first; --j) trace.push_back({j, true, false});
      i = first - 1;
    }
  }

  // ---- passes under construction ----------------------------------------------------------
  int add_collective(CollectiveKind kind, double elements, int count) {
    const double bytes = elements * (kind == CollectiveKind::all_gather ? element : gradient_element);
    pass->collectives.push_back({kind, bytes, count});
    (kind == CollectiveKind::all_gather ? out.gathers : out.reduce_scatters) += 1;
    const int index = static_cast<int>(pass->collectives.size()) - 1;
    if (kind == CollectiveKind::reduce_scatter) last_reduce = index;
    return index;
  }
  void begin_pass(ZeroPass& p) {
    pass = &p;
    last_reduce = -1;
  }
  // Bytes held beyond the shards now, with `transient` bytes more (list-API copies, fresh gradients).
  double held_bytes = 0;            // backward extras: gradient buckets, unreduced gradients
  void note(double transient = 0) {
    out.peak_live_elements = std::max(out.peak_live_elements, live);
    out.peak_buffer_bytes = std::max(out.peak_buffer_bytes, live * element + held_bytes + transient);
  }

  // Host seconds per rank of the group to issue one collective through torch.distributed's
  // tensor-list API (DeepSpeed 0.3 with PyTorch < 1.13): DeepSpeed's Python loop makes two
  // calls per rank (narrow() and get_rank() for an all-gather, view() and narrow() for a
  // reduce-scatter), PyTorch one C++ copy per rank.
  double per_rank_python_s() const { return ranks * 2 * host.python_call_s; }
  double per_rank_s() const { return per_rank_python_s() + ranks * host.cpp_kernel_s; }
  double hook_s() const { return host.hook_calls * host.python_call_s; }
};


// Builds a schedule with a policy (a Builder with run()).
template <class Policy>
Zero3Schedule schedule_with(const ModelGraph& model, const ParallelPlan& plan, LayerRange range, const ZeroHostCosts& host) {
  Policy policy(model, plan, range, host);
  policy.run();
  return std::move(policy.out);
}

Zero3Schedule deepspeed_schedule(const ModelGraph& model, const ParallelPlan& plan, LayerRange range, const ZeroHostCosts& host);
Zero3Schedule fsdp_schedule(const ModelGraph& model, const ParallelPlan& plan, LayerRange range, const ZeroHostCosts& host);

}  // namespace dlsim::models::zero3_detail
