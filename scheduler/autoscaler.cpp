// The auto-scalers (see autoscaler.hpp).
#include "scheduler/autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "scheduler/demand_forecast.hpp"

namespace dlsim::scheduler {
namespace {

bool cooling_down(const AutoscaleView& v, const PoolSpec& p) {
  return v.pool.last_scale_up_s >= 0 && v.now_s < v.pool.last_scale_up_s + p.scale_up_cooldown_s;
}

// Nodes to request for `gpus` more GPUs, within the pool's maximum.
int nodes_within_max(const AutoscaleView& v, const PoolSpec& p, double gpus) {
  if (gpus <= 0) return 0;
  const int room = std::max(0, p.max_nodes - v.pool.live_nodes());
  const double wanted = std::ceil(gpus / v.pool.gpus_per_node - 1e-9);  // 28 / 0.7 is 40.000000000000007
  return static_cast<int>(std::min<double>(room, wanted));
}

// Reactive (Kubernetes Cluster Autoscaler style): after a pass, request enough nodes for the
// queued GPUs that neither fit nor are covered by nodes already provisioning, at most once per
// cool-down; release a node when it has been idle for the idle timeout, down to the minimum.
class Reactive : public Autoscaler {
 public:
  explicit Reactive(const PoolSpec& p) : p_(p) {}
  std::string name() const override { return "reactive"; }
  ScaleDecision decide(const AutoscaleView& v) const override {
    ScaleDecision d;
    if (v.trigger == ScaleTrigger::pass && !cooling_down(v, p_)) {
      d.add_nodes = nodes_within_max(v, p_, v.unplaced_gpus - v.pool.provisioning_gpus());
    }
    if (v.trigger == ScaleTrigger::idle_timeout && v.pool.live_nodes() > p_.min_nodes) d.release.push_back(v.idle_node);
    return d;
  }

 private:
  PoolSpec p_;
};

// Utilization (Kubernetes Horizontal Pod Autoscaler style, on nodes), evaluated only on a tick
// every `scale_interval_s`. With B the GPUs held by jobs, Q the GPUs queued jobs ask for, C the
// GPUs of nodes in service (ready or busy) and P those of nodes provisioning:
//   up:   the demand utilization (B + Q) / (C + P) must stay <= target: when it is above,
//         request the fewest nodes n with (B + Q) <= target x (C + P + n x GPUs per node)
//         (HPA's desired = ceil(current x utilization / target)), within max, once per cool-down.
//   down: when nothing is queued (Q = 0) and the in-service utilization B / C is below `low`
//         (< target; Cluster Autoscaler's scale-down-utilization-threshold), release idle nodes
//         that have been idle for the idle timeout, longest idle first, while the pool stays
//         above min and B <= target x (C + P - released GPUs), so that a release never pushes the
//         utilization over the target (which would request the node back at the next tick).
class Utilization : public Autoscaler {
 public:
  explicit Utilization(const PoolSpec& p) : p_(p) {}
  std::string name() const override { return "utilization"; }
  double interval_s() const override { return p_.scale_interval_s; }
  ScaleDecision decide(const AutoscaleView& v) const override {
    ScaleDecision d;
    if (v.trigger != ScaleTrigger::tick) return d;
    const PoolScaleView& pool = v.pool;
    const double demand = pool.busy_gpus + v.unplaced_gpus;
    const double capacity = pool.in_service_gpus() + pool.provisioning_gpus();
    if (demand > p_.target_utilization * capacity + 1e-9) {
      if (!cooling_down(v, p_)) d.add_nodes = nodes_within_max(v, p_, demand / p_.target_utilization - capacity);
      return d;
    }
    const int in_service = pool.in_service_gpus();
    if (v.unplaced_gpus > 0 || in_service == 0 || pool.busy_gpus >= p_.low_utilization * in_service) return d;
    double left = capacity;
    int live = pool.live_nodes();
    for (const IdleNode& n : pool.idle) {
      if (v.now_s - n.idle_since_s < p_.idle_timeout_s || live <= p_.min_nodes) break;
      if (pool.busy_gpus > p_.target_utilization * (left - pool.gpus_per_node)) break;
      d.release.push_back(n.id);
      left -= pool.gpus_per_node;
      --live;
    }
    return d;
  }

 private:
  PoolSpec p_;
};

// Predictive: forecasts the GPUs that arriving jobs will ask for within one provisioning delay,
// H = rate x provisioning delay, where rate is the exponentially weighted GPU demand of the
// arrivals that may use this pool (DemandRate, time constant `forecast_window_s`), and keeps that
// many GPUs free, so that the next jobs find nodes ready instead of waiting for them. On every
// pass and tick it requests the nodes the reactive rule asks for plus those that bring the free
// GPUs up to H: ceil((Q - P + max(0, H - F)) / GPUs per node) with Q the queued GPUs, P those
// provisioning and F the free GPUs in service (never fewer than the reactive rule), within max,
// once per cool-down. An idle node whose idle timeout has passed is released (at its timeout or
// a later tick, longest idle first, down to min) only while nothing is queued and the free and
// provisioning GPUs left still cover H.
class Predictive : public Autoscaler {
 public:
  explicit Predictive(const PoolSpec& p) : p_(p), rate_(p.forecast_window_s) {}
  std::string name() const override { return "predictive"; }
  double interval_s() const override { return p_.scale_interval_s; }
  ScaleDecision decide(const AutoscaleView& v) const override {
    ScaleDecision d;
    const double headroom = forecast_rate(v) * p_.provisioning_s;
    const PoolScaleView& pool = v.pool;
    const double free = pool.free_gpus();
    if (v.trigger != ScaleTrigger::idle_timeout && !cooling_down(v, p_)) {
      d.add_nodes = nodes_within_max(v, p_, v.unplaced_gpus - pool.provisioning_gpus() + std::max(0.0, headroom - free));
    }
    if (d.add_nodes > 0 || v.unplaced_gpus > 0 || v.trigger == ScaleTrigger::pass) return d;
    double spare = free + pool.provisioning_gpus();
    int live = pool.live_nodes();
    for (const IdleNode& n : pool.idle) {
      if (v.now_s - n.idle_since_s < p_.idle_timeout_s || live <= p_.min_nodes) break;
      if (spare - pool.gpus_per_node < headroom) break;
      if (v.trigger == ScaleTrigger::idle_timeout && n.id != v.idle_node) continue;
      d.release.push_back(n.id);
      spare -= pool.gpus_per_node;
      --live;
    }
    return d;
  }

  // The demand rate at now (GPUs per second), folding in the arrivals not seen yet.
  double forecast_rate(const AutoscaleView& v) const {
    if (v.arrivals.size() < seen_) {  // another run's list: start over
      rate_ = DemandRate(p_.forecast_window_s);
      seen_ = 0;
    }
    for (; seen_ < v.arrivals.size(); ++seen_) {
      const Arrival& a = v.arrivals[seen_];
      if (a.pool < 0 || a.pool == v.pool.pool) rate_.add(a.t_s, a.gpus);
    }
    return rate_.rate_at(v.now_s);
  }

 private:
  PoolSpec p_;
  mutable DemandRate rate_;       // a memo of the arrivals already folded in
  mutable std::size_t seen_ = 0;
};

[[noreturn]] void reject(const PoolSpec& p, const std::string& why) {
  throw std::invalid_argument("pool '" + p.name + "': autoscale " + why);
}

}  // namespace

std::vector<std::string> autoscaler_names() { return {"predictive", "reactive", "utilization"}; }

std::unique_ptr<Autoscaler> make_autoscaler(const PoolSpec& p) {
  if (p.autoscaler == "reactive") return std::make_unique<Reactive>(p);
  if (p.autoscaler == "utilization" || p.autoscaler == "predictive") {
    if (!(p.scale_interval_s > 0) || !std::isfinite(p.scale_interval_s)) reject(p, "interval must be > 0");
  }
  if (p.autoscaler == "utilization") {
    if (!(p.target_utilization > 0 && p.target_utilization <= 1)) reject(p, "target must be in (0, 1]");
    if (!(p.low_utilization >= 0 && p.low_utilization < p.target_utilization)) reject(p, "low must be in [0, target)");
    return std::make_unique<Utilization>(p);
  }
  if (p.autoscaler == "predictive") {
    if (!(p.forecast_window_s > 0) || !std::isfinite(p.forecast_window_s)) reject(p, "window must be > 0");
    return std::make_unique<Predictive>(p);
  }
  std::string known;
  for (const auto& n : autoscaler_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("pool '" + p.name + "': unknown auto-scaler '" + p.autoscaler + "'; known: " + known);
}

}  // namespace dlsim::scheduler
