// Scheduling policies: functions from a read-only view of the cluster to decisions. The
// simulation builds the view, asks the policy, and applies what it decides (preempt these
// running jobs, then try to start these queued jobs in this order); no code branches on a
// policy's name. New policies implement SchedulingPolicy and nothing else changes.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace dlsim::scheduler {

struct JobView {
  int id = 0;                   // index into ClusterSpec::jobs
  int gpus = 1;
  double submit_s = 0;
  double total_s = 0;           // iterations x iteration time: the job's length at its size
  double remaining_s = 0;       // what is left of it (from the last checkpoint when queued)
  double attained_gpu_s = 0;    // GPU-seconds received so far (LAS)
  int priority = 0;
  int queue = 0;                // index of the job's queue (fair share)
  bool running = false;         // running, checkpointing or restarting
};

struct ClusterView {
  double now_s = 0;
  int total_gpus = 0;           // in ready or busy nodes
  int free_gpus = 0;
  std::vector<JobView> queued;  // in arrival order
  std::vector<JobView> running;
  std::vector<double> queue_gpus;    // GPUs in use per queue
  std::vector<double> queue_weight;  // fair-share weights per queue (default 1)
};

struct Decisions {
  std::vector<int> preempt;     // running job ids to stop (they keep their progress)
  std::vector<int> start;       // queued job ids to place, in this order
  bool backfill = false;        // continue past a job that does not fit
};

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  virtual std::string name() const = 0;
  virtual Decisions decide(const ClusterView& view) const = 0;
  // Whether decide() may preempt: only then does the view list the running jobs, and only when
  // the queued jobs ask for more GPUs than are free (else nothing needs preempting).
  virtual bool preemptive() const { return false; }
  // A non-preemptive policy whose order of queued jobs is a fixed key per job (smaller first,
  // ties by arrival) may say so: the simulation then keeps its queue sorted by that key as jobs
  // come and go and starts them in that order itself, instead of handing the policy the whole
  // queue on every pass (decide() is not called). Preemptive policies must not.
  virtual bool has_queue_key() const { return false; }
  virtual double queue_key(const JobView& job) const;
  virtual bool backfills() const { return false; }
  // A preemptive policy that does not backfill and ranks jobs by a level from a small set
  // (smaller first), then by arrival, may say so (rank_levels() > 0, and rank_level() of a job
  // in [0, rank_levels())): the simulation then keeps that ranking itself (rank_walk.hpp) and
  // takes exactly the decisions decide() would, without handing it every job on every pass
  // (decide() is not called). A job's level may change only at its next_review_gpu_s().
  virtual int rank_levels() const { return 0; }
  virtual int rank_level(const JobView& job) const;
  // LAS-style policies change their mind as service accrues: the attained GPU-seconds at
  // which a running job should be reviewed next (infinity: never).
  virtual double next_review_gpu_s(const JobView& job) const;
};

// fifo, sjf (shortest job first: total length), srtf (shortest remaining time, preemptive),
// las (Tiresias 2D-LAS: discretized attained GPU-service queues, preemptive), priority
// (preemptive), fair-share (least used queue first). `backfill` lets smaller jobs pass one that
// does not fit (EASY-style without reservations). Throws std::invalid_argument for an unknown
// name, listing the known ones.
std::unique_ptr<SchedulingPolicy> make_policy(const std::string& name, bool backfill = false,
                                              std::vector<double> las_thresholds_gpu_s = {});
std::vector<std::string> policy_names();

}  // namespace dlsim::scheduler
