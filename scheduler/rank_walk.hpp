// The decision of a preemptive ranked policy (policy.cpp's ranked(), without backfilling), kept
// incrementally for large clusters. Every job has a rank position (smaller: better; e.g. LAS's
// level x jobs + arrival order). The policy's rule: walk all jobs, running and queued, in rank
// order with the cluster's GPUs as room; a job fits while nothing has been blocked and its GPUs
// are within the room left; the first that does not fit blocks the rest; running jobs that do
// not fit are preempted, queued jobs that fit are started.
//
// Asking a policy for that decision means handing it every running and queued job on every
// pass: with thousands of each, the replay is quadratic. RankWalk keeps the queued positions in
// a set and the running GPUs per position in a Fenwick tree (prefix sums in O(log n)), so that a
// whole run of running jobs between two queued ones is checked at once: the walk costs
// O((started + 1) log n) and the preemptions it decides, not O(running + queued).
#pragma once
#include <cstdint>
#include <set>
#include <vector>

namespace dlsim::scheduler {

class RankWalk {
 public:
  explicit RankWalk(int positions);

  void add_running(int position, int gpus);
  void remove_running(int position, int gpus);
  void add_queued(int position);
  void remove_queued(int position);
  std::size_t queued_size() const { return queued_.size(); }

  struct Decision {
    std::vector<int> start;   // queued positions to start, in rank order
    int preempt_from = -1;    // running jobs at this position or after are preempted (-1: none)
  };
  // `gpus_of(position)`: the GPUs the queued job there asks for.
  template <class GpusOf>
  Decision walk(std::int64_t total_gpus, GpusOf gpus_of) const;

  // Running positions at or after `position`, in order.
  std::vector<int> running_from(int position) const;

 private:
  std::int64_t prefix(int position) const;            // running GPUs at positions < position
  int first_exceeding(std::int64_t target) const;     // smallest p with prefix(p + 1) > target
  std::vector<std::int64_t> tree_;                     // Fenwick tree, 1-based
  std::set<int> queued_, running_;
  int size_ = 0;
};

template <class GpusOf>
RankWalk::Decision RankWalk::walk(std::int64_t total_gpus, GpusOf gpus_of) const {
  Decision d;
  std::int64_t room = total_gpus;
  int cursor = 0;  // positions before it are settled
  for (int q : queued_) {
    const std::int64_t running = prefix(q) - prefix(cursor);
    if (running > room) {  // a running job before q does not fit: it and everything after stop
      d.preempt_from = first_exceeding(prefix(cursor) + room);
      return d;
    }
    room -= running;
    const int gpus = gpus_of(q);
    if (gpus > room) {  // q is blocked: running jobs after it are preempted
      d.preempt_from = q + 1;
      return d;
    }
    d.start.push_back(q);
    room -= gpus;
    cursor = q + 1;
  }
  if (prefix(size_) - prefix(cursor) > room) d.preempt_from = first_exceeding(prefix(cursor) + room);
  return d;
}

}  // namespace dlsim::scheduler
