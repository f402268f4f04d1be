// PyTorch FSDP as a schedule (zero3_schedule.hpp: the mechanisms and their sources): one flat
// unit per block and a root unit, implicit forward prefetching, backward prefetch, a
// reduce-scatter per unit.
#include "models/zero3_builder.hpp"

namespace dlsim::models::zero3_detail {
namespace {

struct Fsdp : Builder {
  using Builder::Builder;
  std::map<int, double> unit_numel;   // unit (block, or -1 for the root) -> flat elements
  std::map<int, int> gathered;        // unit -> its all-gather's index in the current pass

  static ZeroPoint wait_for(int collective) {
    ZeroPoint p;
    p.wait_through = collective;
    return p;
  }
  int unit_of(int layer) const { return model.layers[static_cast<std::size_t>(layer)].block; }
  double issue_s() const { return 2 * host.python_kernel_s + host.python_call_s; }

  void run() {
    for (const auto& [layer, ts] : own) {
      for (int t : ts) unit_numel[unit_of(layer)] += tensors[static_cast<std::size_t>(t)].numel;
    }
    std::vector<int> blocks;
    for (const auto& [u, n] : unit_numel) {
      if (u >= 0) blocks.push_back(u);
    }
    forward(blocks);
    backward(blocks);
  }

  void issue(int unit, ZeroPoint& p, double& overlapped) {
    if (!unit_numel.count(unit) || gathered.count(unit)) return;
    gathered[unit] = add_collective(CollectiveKind::all_gather, unit_numel[unit], 1);
    p.issue.push_back(gathered[unit]);
    overlapped += issue_s();
  }

  void forward(const std::vector<int>& blocks) {
    begin_pass(out.forward);
    const double root = unit_numel.count(-1) ? unit_numel[-1] : 0;
    int current = -2;
    for (std::size_t k = 0; k < backward_start; ++k) {
      const int layer = trace[k].layer, u = unit_of(layer);
      ZeroStep step;
      step.layer = layer;
      if (k == 0) {
        // The root unit, and the first block's all-gather behind it (the host runs ahead).
        ZeroPoint p;
        issue(-1, p, step.overlapped_host_s);
        if (!blocks.empty()) issue(blocks.front(), p, step.overlapped_host_s);
        step.before.push_back(p);
        if (root > 0) step.before.push_back(wait_for(gathered[-1]));
      }
      if (u >= 0 && u != current && unit_numel.count(u)) {
        ZeroPoint p;
        issue(u, p, step.overlapped_host_s);
        // The next unit's all-gather goes out while this one computes: FSDP's implicit
        // prefetching (the host runs ahead; limit_all_gathers holds it to two units in flight).
        auto next = std::upper_bound(blocks.begin(), blocks.end(), u);
        if (next != blocks.end()) issue(*next, p, step.overlapped_host_s);
        step.overlapped_host_s += 2 * hook_s();   // pre- and post-forward hooks
        step.before.push_back(p);
        step.before.push_back(wait_for(gathered[u]));
        live = root + unit_numel[u] + (next != blocks.end() ? unit_numel[*next] : 0.0);
        note();
        if (current >= 0) gathered.erase(current);  // resharded after its forward
        current = u;
      }
      pass->steps.push_back(step);
    }
  }

  void backward(const std::vector<int>& blocks) {
    begin_pass(out.backward);
    gathered.clear();
    const double root = unit_numel.count(-1) ? unit_numel[-1] : 0;
    const BackwardPrefetch prefetch = plan.zero.backward_prefetch;
    int current = -2;
    for (std::size_t k = backward_start; k < trace.size(); ++k) {
      const int layer = trace[k].layer, u = unit_of(layer);
      ZeroStep step;
      step.layer = layer;
      step.recompute = trace[k].recompute;
      if (k == backward_start && !blocks.empty()) {
        ZeroPoint p;   // the last block's all-gather, issued while the head's backward runs
        issue(blocks.back(), p, step.overlapped_host_s);
        step.before.push_back(p);
      }
      if (u != current && current >= 0) {
        end_unit(current, prefetch, blocks, pass->steps.back());
        current = -2;
      }
      if (u >= 0 && u != current && unit_numel.count(u)) {
        ZeroPoint p;
        issue(u, p, step.overlapped_host_s);
        const auto it = std::lower_bound(blocks.begin(), blocks.end(), u);
        if (prefetch == BackwardPrefetch::pre && it != blocks.begin()) issue(*(it - 1), p, step.overlapped_host_s);
        step.overlapped_host_s += 2 * hook_s();
        step.before.push_back(p);
        step.before.push_back(wait_for(gathered[u]));
        const double next = prefetch != BackwardPrefetch::none && it != blocks.begin() ? unit_numel[*(it - 1)] : 0.0;
        live = root + unit_numel[u] + next;
        note(unit_numel[u] * gradient_element);   // the unit's flat gradient
        current = u;
      }
      pass->steps.push_back(step);
    }
    if (current >= 0) end_unit(current, prefetch, blocks, pass->steps.back());
    // The root's gradients (embedding, final norm, head), then the wait for every reduce-scatter.
    ZeroStep last;
    ZeroPoint p;
    if (root > 0) {
      p.issue.push_back(add_collective(CollectiveKind::reduce_scatter, root, 1));
      p.host_s = issue_s();
    }
    last.before.push_back(p);
    last.before.push_back(wait_for(last_reduce));
    pass->steps.push_back(last);
  }

  // After a unit's backward: BACKWARD_POST's prefetch, then the unit's reduce-scatter.
  void end_unit(int u, BackwardPrefetch prefetch, const std::vector<int>& blocks, ZeroStep& step) {
    ZeroPoint p;
    const auto it = std::lower_bound(blocks.begin(), blocks.end(), u);
    if (prefetch == BackwardPrefetch::post && it != blocks.begin()) issue(*(it - 1), p, step.overlapped_host_s);
    p.issue.push_back(add_collective(CollectiveKind::reduce_scatter, unit_numel[u], 1));
    step.overlapped_host_s += issue_s();
    step.after.push_back(p);
    gathered.erase(u);
  }
};

}  // namespace

Zero3Schedule fsdp_schedule(const ModelGraph& model, const ParallelPlan& plan, LayerRange range, const ZeroHostCosts& host) {
  return schedule_with<Fsdp>(model, plan, range, host);
}

}  // namespace dlsim::models::zero3_detail
