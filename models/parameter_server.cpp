// Parameter-server transfers, updates and the asynchronous steady state (see parameter_server.hpp).
#include "models/parameter_server.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::models {

std::string to_string(ServerPlacement p) { return p == ServerPlacement::colocated ? "colocated" : "dedicated"; }

double ps_transfer_time(const ParameterServerConfig& c, double bytes, int workers) {
  if (!(bytes > 0)) return 0;
  const double w = workers, s = c.servers;
  if (c.placement == ServerPlacement::dedicated) return c.latency_s + std::max(bytes / c.worker_nic, w * bytes / (s * c.server_nic));
  // A server node sends (S - 1) G / S (its own shard's part stays local) and receives (W - 1) G / S;
  // a node without a shard (when S < W) sends G.
  const double out = s < w ? bytes : (s - 1) * bytes / s;
  return c.latency_s + std::max(out, (w - 1) * bytes / s) / c.worker_nic;
}

double ps_nic_bound_time(const ParameterServerConfig& c, double bytes, int workers) {
  const double w = workers, s = c.servers;
  if (c.placement == ServerPlacement::dedicated) return std::max(bytes / c.worker_nic, w * bytes / (s * c.server_nic));
  // Per direction, a server node carries its shard's W - 1 pushes (or pulls) and its worker's
  // S - 1 pulls (or pushes); a node without a shard its worker's G.
  const double server_node = (w - 1) * bytes / s + (s - 1) * bytes / s;
  return std::max(s < w ? bytes : 0.0, server_node) / c.worker_nic;
}

double ps_update_time(const ParameterServerConfig& c, double elements, double gradient_bytes, double optimizer_bytes, int pushes,
                      bool aggregated) {
  const double shard = elements / c.servers;
  const double read = pushes * shard * gradient_bytes;
  const double steps = aggregated ? 1.0 : pushes;
  return (read + steps * shard * optimizer_bytes) / c.server_memory_bandwidth;
}

std::vector<ReductionPhase> ps_reduction(const ParameterServerConfig& c, double bytes, double elements, int workers, double optimizer_bytes) {
  std::vector<ReductionPhase> phases;
  if (!(bytes > 0)) return phases;
  const auto local = [&](network::CollectiveKind kind) {
    if (c.replicas_per_node <= 1) return;
    ReductionPhase p;
    p.kind = ReductionPhase::Kind::collective;
    p.collective = kind;
    p.bytes = bytes;
    p.node_local = true;
    phases.push_back(p);
  };
  const auto wait = [&](double seconds, double sent) {
    ReductionPhase p;
    p.kind = ReductionPhase::Kind::wait;
    p.seconds = seconds;
    p.sent_bytes = sent;
    phases.push_back(p);
  };
  const double transfer = ps_transfer_time(c, bytes, workers);
  local(network::CollectiveKind::reduce);
  wait(transfer, bytes);
  wait(ps_update_time(c, elements, bytes / elements, optimizer_bytes, c.synchronous ? workers : 1, true), 0);
  wait(transfer, 0);
  local(network::CollectiveKind::broadcast);
  return phases;
}

AsyncSteadyState ps_async_steady_state(const ParameterServerConfig& c, double sync_iteration_s, double compute_s, double stream_busy_s,
                                       double server_nic_s, double server_update_s) {
  AsyncSteadyState a;
  a.cycle_s = std::max({compute_s, stream_busy_s, server_nic_s, server_update_s, sync_iteration_s / (c.staleness + 1)});
  // Iteration t + j may use iteration t's pull once j cycles cover the synchronous iteration.
  const double lag = std::ceil(sync_iteration_s / a.cycle_s * (1 - 1e-12));
  a.staleness = std::clamp(lag - 1, 0.0, static_cast<double>(c.staleness));
  return a;
}

void validate_parameter_server(const ParameterServerConfig& c, int worker_nodes) {
  if (!c.enabled) return;
  if (c.servers < 1) throw std::invalid_argument("plan.parameter_server.servers: must be >= 1");
  if (c.placement == ServerPlacement::colocated && c.servers > worker_nodes) {
    throw std::invalid_argument("plan.parameter_server.servers: " + std::to_string(c.servers) + " co-located servers need as many worker nodes, there are " +
                                std::to_string(worker_nodes));
  }
  if (c.synchronous && c.staleness != 0) throw std::invalid_argument("plan.parameter_server.staleness: applies to asynchronous training (synchronous: false)");
  if (!(c.worker_nic > 0) || !(c.server_memory_bandwidth > 0) || (c.placement == ServerPlacement::dedicated && !(c.server_nic > 0))) {
    throw std::invalid_argument("plan.parameter_server: NIC and memory bandwidths must be > 0");
  }
}

}  // namespace dlsim::models
