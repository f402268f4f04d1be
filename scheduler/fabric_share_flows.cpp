// FabricSharing::flow: the jobs of a component co-simulated at flow level (fabric_share.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "network/flow_network.hpp"
#include "network/topology.hpp"
#include "scheduler/fabric_share.hpp"
#include "sim/engine.hpp"

namespace dlsim::scheduler {
namespace {

// Iterations each job runs before and while its iteration time is measured. The first ones carry
// the start (each job entering at its phase, or all at once without a phase source) until the
// jobs' collisions settle, and are not counted.
constexpr int kFlowWarmupIterations = 3;
constexpr int kFlowMeasuredIterations = 12;
// However different the jobs' periods, the co-simulation stops after this many iterations of all
// jobs together; a job that has not finished its measured iterations by then is timed over
// those it did after the warm-up (or all of them).
constexpr std::int64_t kMaxTotalIterations = 20'000;

// One job of the co-simulation: its phases and the end instants of its iterations.
struct FlowJob {
  double compute_s = 0;         // base_s
  double comm_start_s = 0;      // base_s - overlap_s: when its traffic starts in an iteration
  std::vector<std::pair<network::LinkId, double>> flows;  // (link, bytes) per iteration
  sim::Time first_start;        // when its first iteration began
  std::vector<sim::Time> ends;  // end of each finished iteration
  int pending_flows = 0;
  bool compute_done = false;
};

}  // namespace

void FabricShare::solve_flows(const std::vector<int>& jobs) {
  if (jobs.empty()) return;
  // A topology of the component's links alone: each a directed link between two vertices of
  // its own, at its capacity, without latency (the mean-rate model has none either).
  network::Topology topology;
  std::map<int, network::LinkId> link_of;
  for (int j : jobs) {
    for (const LinkLoad& l : traffic_[static_cast<std::size_t>(j)].loads) {
      if (link_of.count(l.link) != 0) continue;
      const network::VertexId a = topology.add_vertex({});
      const network::VertexId b = topology.add_vertex({});
      link_of[l.link] = topology.add_duplex_link(a, b, capacity_[static_cast<std::size_t>(l.link)], 0.0, "fabric");
    }
  }
  sim::Engine engine;
  network::FlowNetwork flows(engine, topology);
  std::vector<FlowJob> run(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Traffic& t = traffic_[static_cast<std::size_t>(jobs[i])];
    run[i].compute_s = t.base_s;
    run[i].comm_start_s = t.base_s - std::min(t.overlap_s, t.base_s);
    for (const LinkLoad& l : t.loads) run[i].flows.emplace_back(link_of.at(l.link), l.bytes);
  }

  std::int64_t total_iterations = 0;
  const int wanted = kFlowWarmupIterations + kFlowMeasuredIterations;
  std::size_t short_of_quota = jobs.size();
  std::function<void(std::size_t)> start_iteration;
  const auto finish_part = [&](std::size_t i) {
    FlowJob& f = run[i];
    if (!f.compute_done || f.pending_flows > 0) return;
    f.ends.push_back(engine.now());
    ++total_iterations;
    if (static_cast<int>(f.ends.size()) == wanted) --short_of_quota;
    if (short_of_quota == 0 || total_iterations >= kMaxTotalIterations) {
      engine.stop();
      return;
    }
    start_iteration(i);
  };
  start_iteration = [&](std::size_t i) {
    FlowJob& f = run[i];
    if (f.ends.empty()) f.first_start = engine.now();
    f.compute_done = false;
    f.pending_flows = static_cast<int>(f.flows.size());
    engine.schedule_in(sim::Time::from_seconds(f.compute_s), [&, i] {
      run[i].compute_done = true;
      finish_part(i);
    });
    engine.schedule_in(sim::Time::from_seconds(f.comm_start_s), [&, i] {
      for (const auto& [link, bytes] : run[i].flows) {
        network::FlowSpec spec;
        spec.path = {link};
        spec.bytes = bytes;
        flows.start(std::move(spec), [&, i] {
          --run[i].pending_flows;
          finish_part(i);
        });
      }
    });
  };
  // Each job's next iteration begins when its current one would end at its last iteration time.
  for (std::size_t i = 0; i < run.size(); ++i) {
    const double period = traffic_[static_cast<std::size_t>(jobs[i])].t_s;
    const double into = phase_ ? std::clamp(phase_(jobs[i]), 0.0, period) : 0.0;
    const double wait = into > 0 ? period - into : 0.0;
    engine.schedule_in(sim::Time::from_seconds(wait), [&, i] { start_iteration(i); });
  }
  engine.run();

  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::vector<sim::Time>& ends = run[i].ends;
    Traffic& t = traffic_[static_cast<std::size_t>(jobs[i])];
    if (ends.empty()) continue;  // stopped before its first iteration ended: keeps its last time
    // After the warm-up when there were iterations after it, else from its first start.
    const std::size_t first = ends.size() > static_cast<std::size_t>(kFlowWarmupIterations) ? kFlowWarmupIterations : 0;
    const sim::Time from = first == 0 ? run[i].first_start : ends[first - 1];
    t.t_s = (ends.back() - from).seconds() / static_cast<double>(ends.size() - first);
  }
}

}  // namespace dlsim::scheduler
