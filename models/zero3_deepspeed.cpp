// DeepSpeed's ZeRO-3 coordinator as a schedule (zero3_schedule.hpp: the mechanisms and their
// sources): per-module fetch, prefetch, release, persistence, gradient buckets, per-parameter or
// coalesced fetch.
#include "models/zero3_builder.hpp"

namespace dlsim::models::zero3_detail {
namespace {

struct DeepSpeed : Builder {
  using Builder::Builder;
  const ZeroConfig& z() const { return plan.zero; }
  bool per_parameter() const { return z().fetch == DeepSpeedFetch::per_parameter; }
  int in_flight = 0;                        // tensors in flight (gathers not yet waited for)
  std::vector<int> carried_by;              // tensor -> the collective (this pass) gathering it
  std::vector<char> external;               // tensor -> held by the top module (tied weights)
  std::vector<int> bucket;                  // gradient tensors waiting in the bucket
  double bucket_numel = 0;
  double large_open = 0, large_flying = 0;  // gradients too large for a bucket: waiting, being reduced

  void run() {
    carried_by.assign(tensors.size(), -1);
    // A tensor another layer is tied to is an external parameter of the model's top module (as
    // DeepSpeed's Megatron-LM tutorial registers the word embedding): gathered by the top
    // module's hook when forward starts, and kept (the top module is reused at once by backward)
    // until backward ends.
    external.assign(tensors.size(), 0);
    for (int i = range.first; i < range.last; ++i) {
      const int tied = model.layers[static_cast<std::size_t>(i)].tied_to;
      if (auto it = own.find(tied); tied >= 0 && it != own.end()) {
        for (int t : it->second) external[static_cast<std::size_t>(t)] = 1;
      }
    }
    for (Tensor& t : tensors) {
      t.persistent = t.numel < z().param_persistence_threshold;
      if (t.persistent) {
        t.status = Status::gathered;
        out.persistent_elements += t.numel;
      }
    }
    double total = 0;
    for (const Tensor& t : tensors) total += t.numel;
    out.bucket_bytes = (z().overlap_comm ? 2.0 : 1.0) * std::min(z().reduce_bucket_size, total) * gradient_element;
    begin_pass(out.forward);
    for (std::size_t k = 0; k < trace.size(); ++k) {
      if (k == backward_start) {
        begin_pass(out.backward);
        held_bytes = out.bucket_bytes;   // the ipg buffers, allocated at the start of backward
      }
      pass->steps.push_back(use(k));
    }
    pass->steps.push_back(epilogue());
    after_step();
  }

  // Issues the gather of `ts` (one collective per tensor, or one for all); marks them in flight.
  // Without overlap_comm the gathers run on the compute stream, which waits for them.
  void gather(const std::vector<int>& ts, std::vector<ZeroPoint>& points) {
    if (ts.empty()) return;
    double sum = 0;
    for (int t : ts) {
      Tensor& x = tensors[static_cast<std::size_t>(t)];
      sum += x.numel;
      live += x.numel;
      x.status = Status::in_flight;
      ++in_flight;
      if (per_parameter()) {
        // _allgather_param: torch.zeros, torch.cuda.synchronize(), the Python list of per-rank
        // views, copy_ of the shard, the call; after the NCCL launch PyTorch copies each rank's
        // piece out of its flat buffer (ProcessGroupNCCL::allgather), the collective running.
        ZeroPoint p;
        p.drain = true;
        p.host_s = 2 * host.python_kernel_s + host.python_call_s + per_rank_python_s();
        p.host_after_s = ranks * host.cpp_kernel_s;
        p.issue.push_back(add_collective(CollectiveKind::all_gather, x.numel, 1));
        carried_by[static_cast<std::size_t>(t)] = p.issue.back();
        points.push_back(p);
        note(x.numel * element);   // the list API's flat output beside DeepSpeed's buffer
      }
    }
    if (!per_parameter()) {
      ZeroPoint p;
      p.issue.push_back(add_collective(CollectiveKind::all_gather, sum, static_cast<int>(ts.size())));
      for (int t : ts) carried_by[static_cast<std::size_t>(t)] = p.issue.back();
      points.push_back(p);
    }
    if (!z().overlap_comm) {
      ZeroPoint w;
      w.wait_through = last_gather();
      points.push_back(w);
    }
    note();
  }

  // The next released tensors in trace order from use k, until the prefetch bucket is reached.
  std::vector<int> to_prefetch(std::size_t k) const {
    std::vector<int> picked;
    double numel = 0;
    for (std::size_t j = k; j < trace.size(); ++j) {
      for (int t : needs(trace[j].layer)) {
        const Tensor& x = tensors[static_cast<std::size_t>(t)];
        if (x.status != Status::released || std::find(picked.begin(), picked.end(), t) != picked.end()) continue;
        picked.push_back(t);
        numel += x.numel;
        if (numel >= z().prefetch_bucket_size) return picked;
      }
    }
    return picked;
  }

  // Elements the trace touches between use k and the next use of the same module (none: never).
  bool reused_soon(std::size_t k) const {
    double distance = 0;
    for (std::size_t j = k + 1; j < trace.size(); ++j) {
      if (trace[j].layer == trace[k].layer) return distance < z().max_reuse_distance;
      distance += numel_of(trace[j].layer);
      if (distance >= z().max_reuse_distance) return false;
    }
    return false;
  }

  ZeroStep use(std::size_t k) {
    const Use& u = trace[k];
    ZeroStep step;
    step.layer = u.layer;
    step.recompute = u.recompute;
    std::vector<int> fetch;
    bool waiting = false, hooked = false;
    int carrier = -1;
    std::vector<int> wanted = needs(u.layer);
    if (k == 0) {
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        if (external[t] && std::find(wanted.begin(), wanted.end(), static_cast<int>(t)) == wanted.end()) wanted.push_back(static_cast<int>(t));
      }
    }
    for (int t : wanted) {
      const Tensor& x = tensors[static_cast<std::size_t>(t)];
      if (x.persistent) continue;
      hooked = true;
      if (x.status == Status::released) fetch.push_back(t);
      if (x.status == Status::in_flight) {
        waiting = true;
        carrier = std::max(carrier, carried_by[static_cast<std::size_t>(t)]);
      }
    }
    gather(fetch, step.before);
    const bool synced = !fetch.empty() || waiting;
    ZeroPoint wait;
    if (synced) {
      // _synchronize_communication: per-parameter, torch.cuda.synchronize() (the host waits for
      // the device); coalesced, the compute stream waits for the module's gathers.
      wait.drain = per_parameter();
      if (!per_parameter()) wait.wait_through = fetch.empty() ? carrier : last_gather();
      for (Tensor& x : tensors) {
        if (x.status == Status::in_flight) x.status = Status::gathered;
      }
      in_flight = 0;
    }
    // The hook's bookkeeping: the device idles through it after a synchronize; hidden otherwise.
    if (hooked) (per_parameter() && synced ? wait.host_s : step.overlapped_host_s) += hook_s();
    step.before.push_back(wait);
    // Every module's hook tries to prefetch (per-parameter: only with nothing in flight).
    if ((!per_parameter() || in_flight == 0) && live < z().max_live_parameters) gather(to_prefetch(k + 1), step.before);
    if (per_parameter() && (synced || step.before.size() > 1)) {
      step.before.back().host_s += host.python_kernel_s;  // the device waits for the module's first launch
    }
    if (!per_parameter()) {
      // A coalesced issue costs the host a few calls, overlapped with compute.
      for (const ZeroPoint& p : step.before) step.overlapped_host_s += p.issue.size() * (2 * host.python_kernel_s + host.python_call_s);
    }
    if (hooked) release(k);
    if (u.backward) reduce_gradients(u.layer, step);
    if (k + 1 == backward_start && in_flight > 0 && !per_parameter()) {
      // Prefetches across the end of forward are waited for there (their indices are this pass's).
      ZeroPoint end;
      end.wait_through = last_gather();
      step.after.push_back(end);
      for (Tensor& x : tensors) {
        if (x.status == Status::in_flight) x.status = Status::gathered;
      }
      in_flight = 0;
    }
    std::erase_if(step.before, [](const ZeroPoint& p) { return p.empty(); });
    return step;
  }

  int last_gather() const {
    for (int i = static_cast<int>(pass->collectives.size()) - 1; i >= 0; --i) {
      if (pass->collectives[static_cast<std::size_t>(i)].kind == CollectiveKind::all_gather) return i;
    }
    return -1;
  }

  void release(std::size_t k) {
    if (reused_soon(k)) return;
    for (int t : needs(trace[k].layer)) {
      Tensor& x = tensors[static_cast<std::size_t>(t)];
      if (x.persistent || external[static_cast<std::size_t>(t)] || x.status != Status::gathered) continue;
      x.status = Status::released;
      live -= x.numel;
    }
  }

  // The gradients of a layer's own tensors go into the bucket; a bucket that would overflow is
  // reduce-scattered first.
  void reduce_gradients(int layer, ZeroStep& step) {
    auto it = own.find(layer);
    if (it == own.end()) return;
    for (auto t = it->second.rbegin(); t != it->second.rend(); ++t) {
      const double n = tensors[static_cast<std::size_t>(*t)].numel;
      if (bucket_numel + n > z().reduce_bucket_size && !bucket.empty()) flush(step);
      bucket.push_back(*t);
      bucket_numel += n;
      // A gradient too large for the bucket stays in its own tensor until reduced; a smaller one
      // exists whole until copied into the bucket.
      if (n > z().reduce_bucket_size) large_open += n;
      note(n > z().reduce_bucket_size ? 0.0 : n * gradient_element);
    }
  }

  void flush(ZeroStep& step) {
    if (bucket.empty()) return;
    ZeroPoint p;
    p.wait_through = last_reduce;   // the previous bucket first (reduction_stream.synchronize())
    held_bytes += (large_open - large_flying) * gradient_element;
    large_flying = large_open;
    large_open = 0;
    if (per_parameter()) {
      double largest = 0;
      for (int t : bucket) largest = std::max(largest, tensors[static_cast<std::size_t>(t)].numel);
      note(largest * gradient_element);   // the list API's flat copy of the gradient being reduced
      for (int t : bucket) {
        p.issue.push_back(add_collective(CollectiveKind::reduce_scatter, tensors[static_cast<std::size_t>(t)].numel, 1));
        step.overlapped_host_s += 2 * host.python_call_s + per_rank_s();
      }
    } else {
      p.issue.push_back(add_collective(CollectiveKind::reduce_scatter, bucket_numel, static_cast<int>(bucket.size())));
      step.overlapped_host_s += 2 * host.python_kernel_s + host.python_call_s;
    }
    step.after.push_back(p);
    if (!z().overlap_comm) {
      ZeroPoint w;   // reduced on the compute stream
      w.wait_through = last_reduce;
      step.after.push_back(w);
    }
    bucket.clear();
    bucket_numel = 0;
  }

  // End of backward: the last bucket, then wait for every reduce-scatter (the device idles
  // while the host issues it: no compute is left to hide it).
  ZeroStep epilogue() {
    ZeroStep step;
    flush(step);
    for (ZeroPoint& p : step.after) {
      p.host_s += step.overlapped_host_s;
      step.overlapped_host_s = 0;
    }
    ZeroPoint wait;
    wait.wait_through = last_reduce;
    step.after.push_back(wait);
    step.before = std::move(step.after);
    step.after.clear();
    for (Tensor& x : tensors) {
      if (!x.persistent) x.status = Status::released;  // _partition_all_parameters
    }
    live = 0;
    in_flight = 0;
    return step;
  }

  // After the optimizer step the persistent tensors are all-gathered again.
  void after_step() {
    double sum = 0;
    int count = 0;
    for (const Tensor& t : tensors) {
      if (!t.persistent) continue;
      sum += t.numel;
      ++count;
    }
    if (count == 0) return;
    out.after_step.push_back({CollectiveKind::all_gather, sum * element, count});
    if (per_parameter()) {
      // _allgather_params: the per-rank list of the flat buffer, then for every tensor and rank
      // narrow, view, narrow and copy_ in Python.
      out.after_step_host_s = 3 * host.python_kernel_s + per_rank_s() +
                              count * (host.python_kernel_s + ranks * (3 * host.python_call_s + host.python_kernel_s));
    } else {
      out.after_step_host_s = 3 * host.python_kernel_s + count * host.python_call_s;
    }
  }
};

}  // namespace

Zero3Schedule deepspeed_schedule(const ModelGraph& model, const ParallelPlan& plan, LayerRange range, const ZeroHostCosts& host) {
  return schedule_with<DeepSpeed>(model, plan, range, host);
}

}  // namespace dlsim::models::zero3_detail
