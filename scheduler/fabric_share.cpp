#include "scheduler/fabric_share.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dlsim::scheduler {

double ring_bytes_per_node(double gradient_bytes, int nodes) {
  if (nodes <= 1) return 0.0;
  return 2.0 * (nodes - 1) / nodes * gradient_bytes;
}

double uncontended_iteration_s(double base_s, double overlap_s, double gradient_bytes, int nodes, double nic_bandwidth) {
  if (nodes <= 1 || gradient_bytes <= 0 || nic_bandwidth <= 0) return base_s;
  const double comm = ring_bytes_per_node(gradient_bytes, nodes) / nic_bandwidth;
  return base_s + std::max(0.0, comm - overlap_s);
}

int FabricShare::add_link(double capacity) {
  if (!(capacity > 0) || !std::isfinite(capacity)) throw std::invalid_argument("link capacity must be positive and finite");
  capacity_.push_back(capacity);
  jobs_on_link_.emplace_back();
  seen_link_.push_back(0);
  rate_sum_.push_back(0.0);
  return static_cast<int>(capacity_.size()) - 1;
}

FabricShare::Traffic& FabricShare::traffic(int job) {
  if (job < 0) throw std::invalid_argument("negative job id");
  if (static_cast<std::size_t>(job) >= traffic_.size()) {
    traffic_.resize(static_cast<std::size_t>(job) + 1);
    seen_job_.resize(static_cast<std::size_t>(job) + 1, 0);
  }
  return traffic_[static_cast<std::size_t>(job)];
}

void FabricShare::set_job(int job, double base_s, double overlap_s, std::vector<LinkLoad> loads) {
  if (!(base_s > 0) || !(overlap_s >= 0)) throw std::invalid_argument("a job's base iteration time must be positive and its overlap not negative");
  Traffic& t = traffic(job);
  for (const LinkLoad& l : t.loads) {
    auto& on = jobs_on_link_[static_cast<std::size_t>(l.link)];
    on.erase(std::find(on.begin(), on.end(), job));
  }
  for (const LinkLoad& l : loads) {
    if (l.link < 0 || static_cast<std::size_t>(l.link) >= capacity_.size()) throw std::invalid_argument("unknown link");
    if (!(l.bytes >= 0)) throw std::invalid_argument("negative bytes on a link");
    jobs_on_link_[static_cast<std::size_t>(l.link)].push_back(job);
  }
  t.base_s = base_s;
  t.overlap_s = overlap_s;
  t.loads = std::move(loads);
  t.active = !t.loads.empty();
  // Start from the job alone on its links; settle() goes on from there.
  double comm = 0;
  for (const LinkLoad& l : t.loads) comm = std::max(comm, l.bytes / capacity_[static_cast<std::size_t>(l.link)]);
  t.t_s = base_s + std::max(0.0, comm - overlap_s);
}

std::vector<int> FabricShare::links_of(int job) const {
  std::vector<int> out;
  if (job < 0 || static_cast<std::size_t>(job) >= traffic_.size()) return out;
  for (const LinkLoad& l : traffic_[static_cast<std::size_t>(job)].loads) out.push_back(l.link);
  return out;
}

double FabricShare::iteration_s(int job) const {
  if (job < 0 || static_cast<std::size_t>(job) >= traffic_.size()) throw std::invalid_argument("job without traffic");
  return traffic_[static_cast<std::size_t>(job)].t_s;
}

const std::vector<int>& FabricShare::settle(const std::vector<int>& links) {
  // The component: jobs reachable from the given links through links they share.
  component_.clear();
  std::vector<int> link_stack;
  std::vector<int> touched_links;
  for (int l : links) {
    if (!seen_link_[static_cast<std::size_t>(l)]) {
      seen_link_[static_cast<std::size_t>(l)] = 1;
      link_stack.push_back(l);
      touched_links.push_back(l);
    }
  }
  while (!link_stack.empty()) {
    const int l = link_stack.back();
    link_stack.pop_back();
    for (int j : jobs_on_link_[static_cast<std::size_t>(l)]) {
      if (seen_job_[static_cast<std::size_t>(j)]) continue;
      seen_job_[static_cast<std::size_t>(j)] = 1;
      component_.push_back(j);
      for (const LinkLoad& ll : traffic_[static_cast<std::size_t>(j)].loads) {
        if (!seen_link_[static_cast<std::size_t>(ll.link)]) {
          seen_link_[static_cast<std::size_t>(ll.link)] = 1;
          link_stack.push_back(ll.link);
          touched_links.push_back(ll.link);
        }
      }
    }
  }
  for (int l : touched_links) seen_link_[static_cast<std::size_t>(l)] = 0;
  for (int j : component_) seen_job_[static_cast<std::size_t>(j)] = 0;
  std::sort(component_.begin(), component_.end());
  solve(component_);
  return component_;
}

void FabricShare::solve(const std::vector<int>& jobs) {
  if (sharing_ == FabricSharing::flow) {
    solve_flows(jobs);
    return;
  }
  // Damped fixed-point steps from where each job was (its last settled time, or alone on its
  // links when it is new): one change usually moves the others little, so few steps are needed.
  // The map is a contraction in practice (a job's time grows when others' rates grow, which
  // slows them); halving each step removes the oscillation between "everyone fast" and
  // "everyone slow".
  constexpr int kMaxSteps = 200;
  constexpr double kTolerance = 1e-9;
  std::vector<double> next(jobs.size());
  for (int step = 0; step < kMaxSteps; ++step) {
    for (int j : jobs) {
      for (const LinkLoad& l : traffic_[static_cast<std::size_t>(j)].loads) rate_sum_[static_cast<std::size_t>(l.link)] = 0;
    }
    for (int j : jobs) {
      const Traffic& t = traffic_[static_cast<std::size_t>(j)];
      for (const LinkLoad& l : t.loads) rate_sum_[static_cast<std::size_t>(l.link)] += l.bytes / t.t_s;
    }
    double change = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const Traffic& t = traffic_[static_cast<std::size_t>(jobs[i])];
      double comm = 0;
      for (const LinkLoad& l : t.loads) {
        const std::size_t li = static_cast<std::size_t>(l.link);
        const double c = capacity_[li];
        const double others = rate_sum_[li] - l.bytes / t.t_s;
        const double fair = c / static_cast<double>(jobs_on_link_[li].size());
        const double bw = std::max(fair, c - others);
        comm = std::max(comm, l.bytes / bw);
      }
      const double target = t.base_s + std::max(0.0, comm - t.overlap_s);
      next[i] = 0.5 * (t.t_s + target);
      change = std::max(change, std::abs(target - t.t_s) / t.t_s);
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) traffic_[static_cast<std::size_t>(jobs[i])].t_s = next[i];
    if (change < kTolerance) break;
  }
}

}  // namespace dlsim::scheduler
