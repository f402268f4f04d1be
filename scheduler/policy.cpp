// The built-in scheduling policies (see policy.hpp).
#include "scheduler/policy.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dlsim::scheduler {

double SchedulingPolicy::next_review_gpu_s(const JobView&) const { return std::numeric_limits<double>::infinity(); }
double SchedulingPolicy::queue_key(const JobView& job) const { return job.submit_s; }
int SchedulingPolicy::rank_level(const JobView&) const { return 0; }

namespace {

// Non-preemptive: queued jobs in the order `before` gives.
template <class Less>
Decisions ordered(const ClusterView& v, bool backfill, Less before) {
  std::vector<JobView> queued = v.queued;
  // The queue usually arrives in order already (FIFO): check in linear time before sorting.
  if (!std::is_sorted(queued.begin(), queued.end(), before)) std::stable_sort(queued.begin(), queued.end(), before);
  Decisions d;
  d.backfill = backfill;
  for (const JobView& j : queued) d.start.push_back(j.id);
  return d;
}

// Preemptive: every job, running or queued, ranked by `before`; the best ones that fit in the
// cluster's GPUs should run. Running jobs outside that set are preempted; queued jobs inside it
// are started in rank order.
template <class Less>
Decisions ranked(const ClusterView& v, bool backfill, Less before) {
  std::vector<JobView> all = v.running;
  all.insert(all.end(), v.queued.begin(), v.queued.end());
  if (!std::is_sorted(all.begin(), all.end(), before)) std::stable_sort(all.begin(), all.end(), before);
  Decisions d;
  d.backfill = backfill;
  int room = v.total_gpus;
  bool blocked = false;
  for (const JobView& j : all) {
    const bool fits = !blocked && j.gpus <= room;
    if (fits) {
      room -= j.gpus;
      if (!j.running) d.start.push_back(j.id);
    } else {
      if (!backfill) blocked = true;
      if (j.running) d.preempt.push_back(j.id);
    }
  }
  return d;
}

bool by_arrival(const JobView& a, const JobView& b) { return a.submit_s < b.submit_s || (a.submit_s == b.submit_s && a.id < b.id); }

class Fifo : public SchedulingPolicy {
 public:
  explicit Fifo(bool backfill) : backfill_(backfill) {}
  std::string name() const override { return "fifo"; }
  Decisions decide(const ClusterView& v) const override { return ordered(v, backfill_, by_arrival); }
  bool has_queue_key() const override { return true; }
  double queue_key(const JobView& j) const override { return j.submit_s; }
  bool backfills() const override { return backfill_; }
 private:
  bool backfill_;
};

class ShortestJobFirst : public SchedulingPolicy {
 public:
  explicit ShortestJobFirst(bool backfill) : backfill_(backfill) {}
  std::string name() const override { return "sjf"; }
  bool has_queue_key() const override { return true; }
  double queue_key(const JobView& j) const override { return j.total_s; }
  bool backfills() const override { return backfill_; }
  Decisions decide(const ClusterView& v) const override {
    return ordered(v, backfill_, [](const JobView& a, const JobView& b) {
      return a.total_s < b.total_s || (a.total_s == b.total_s && by_arrival(a, b));
    });
  }
 private:
  bool backfill_;
};

class ShortestRemainingTime : public SchedulingPolicy {
 public:
  bool preemptive() const override { return true; }
  explicit ShortestRemainingTime(bool backfill) : backfill_(backfill) {}
  std::string name() const override { return "srtf"; }
  Decisions decide(const ClusterView& v) const override {
    return ranked(v, backfill_, [](const JobView& a, const JobView& b) {
      return a.remaining_s < b.remaining_s || (a.remaining_s == b.remaining_s && by_arrival(a, b));
    });
  }
 private:
  bool backfill_;
};

// Tiresias (Gu et al., NSDI 2019), discretized 2D-LAS: a job's priority queue is the number of
// thresholds its attained GPU-service has passed; lower queues first, FIFO inside a queue.
class LeastAttainedService : public SchedulingPolicy {
 public:
  bool preemptive() const override { return true; }
  LeastAttainedService(bool backfill, std::vector<double> thresholds) : backfill_(backfill), thresholds_(std::move(thresholds)) {
    std::sort(thresholds_.begin(), thresholds_.end());
  }
  std::string name() const override { return "las"; }
  Decisions decide(const ClusterView& v) const override {
    return ranked(v, backfill_, [this](const JobView& a, const JobView& b) {
      const int qa = level(a.attained_gpu_s), qb = level(b.attained_gpu_s);
      return qa < qb || (qa == qb && by_arrival(a, b));
    });
  }
  int rank_levels() const override { return backfill_ ? 0 : static_cast<int>(thresholds_.size()) + 1; }
  int rank_level(const JobView& j) const override { return level(j.attained_gpu_s); }
  bool backfills() const override { return backfill_; }
  double next_review_gpu_s(const JobView& j) const override {
    const auto it = std::upper_bound(thresholds_.begin(), thresholds_.end(), j.attained_gpu_s);
    return it == thresholds_.end() ? std::numeric_limits<double>::infinity() : *it;
  }
 private:
  int level(double attained) const {
    return static_cast<int>(std::upper_bound(thresholds_.begin(), thresholds_.end(), attained) - thresholds_.begin());
  }
  bool backfill_;
  std::vector<double> thresholds_;
};

class Priority : public SchedulingPolicy {
 public:
  bool preemptive() const override { return true; }
  explicit Priority(bool backfill) : backfill_(backfill) {}
  std::string name() const override { return "priority"; }
  Decisions decide(const ClusterView& v) const override {
    return ranked(v, backfill_, [](const JobView& a, const JobView& b) {
      return a.priority > b.priority || (a.priority == b.priority && by_arrival(a, b));
    });
  }
 private:
  bool backfill_;
};

// Each queue's share: GPUs in use over its weight; queued jobs of the least-served queue first.
class FairShare : public SchedulingPolicy {
 public:
  explicit FairShare(bool backfill) : backfill_(backfill) {}
  std::string name() const override { return "fair-share"; }
  Decisions decide(const ClusterView& v) const override {
    std::vector<double> use = v.queue_gpus;
    std::vector<JobView> left = v.queued;
    std::stable_sort(left.begin(), left.end(), by_arrival);
    Decisions d;
    d.backfill = backfill_;
    // Repeatedly take the oldest job of the queue with the smallest share, charging it as if
    // it started, so that one pass interleaves queues.
    std::vector<bool> taken(left.size(), false);
    for (std::size_t n = 0; n < left.size(); ++n) {
      int best = -1;
      double best_share = 0;
      for (std::size_t i = 0; i < left.size(); ++i) {
        if (taken[i]) continue;
        const auto q = static_cast<std::size_t>(left[i].queue);
        const double weight = q < v.queue_weight.size() ? v.queue_weight[q] : 1.0;
        const double share = (q < use.size() ? use[q] : 0.0) / weight;
        if (best < 0 || share < best_share) {
          best = static_cast<int>(i);
          best_share = share;
        }
      }
      taken[static_cast<std::size_t>(best)] = true;
      const JobView& j = left[static_cast<std::size_t>(best)];
      const auto q = static_cast<std::size_t>(j.queue);
      if (q >= use.size()) use.resize(q + 1, 0.0);
      use[q] += j.gpus;
      d.start.push_back(j.id);
    }
    return d;
  }
 private:
  bool backfill_;
};

}  // namespace

std::vector<std::string> policy_names() { return {"fair-share", "fifo", "las", "priority", "sjf", "srtf"}; }

std::unique_ptr<SchedulingPolicy> make_policy(const std::string& name, bool backfill, std::vector<double> las_thresholds) {
  if (name == "fifo") return std::make_unique<Fifo>(backfill);
  if (name == "sjf") return std::make_unique<ShortestJobFirst>(backfill);
  if (name == "srtf") return std::make_unique<ShortestRemainingTime>(backfill);
  if (name == "las") {
    // Two queues split at 3,200 GPU-seconds unless the scenario says otherwise (an assumption;
    // Tiresias tunes its thresholds per cluster).
    if (las_thresholds.empty()) las_thresholds = {3200.0};
    return std::make_unique<LeastAttainedService>(backfill, std::move(las_thresholds));
  }
  if (name == "priority") return std::make_unique<Priority>(backfill);
  if (name == "fair-share") return std::make_unique<FairShare>(backfill);
  std::string known;
  for (const auto& n : policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown scheduling policy '" + name + "'; known: " + known);
}

}  // namespace dlsim::scheduler
