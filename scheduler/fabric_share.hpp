// Jobs that share a fabric slow each other. At cluster level each running job that spans nodes
// puts a communication demand on network links: its nodes' NICs, and the leaf-switch uplinks when
// it spans leaves. FabricShare keeps, for every such job, its traffic per iteration on each link,
// and finds every job's iteration time given everybody else's.
//
// Model (per iteration of job j, times in seconds, bytes per direction):
//   T_j = base_j + max(0, comm_j - overlap_j)          base: compute and intra-node communication
//   comm_j = max over j's links l of  b_jl / bw_jl     the slowest link paces the collective
//   bw_jl = max(C_l / n_l,  C_l - sum_{k != j on l} b_kl / T_k)
// When j communicates, the other jobs on the link are, on average, using their mean rate
// (bytes per iteration over iteration time): j gets what they leave. It never gets less than its
// max-min fair share C_l / n_l, which is what it gets when every job on the link communicates all
// the time. Two jobs that only communicate therefore halve each other; a neighbour that
// communicates 1% of the time costs about 1%. The T_j depend on each other through the rates; the
// fixed point is found by damped iteration, over the jobs connected to a change through shared
// links (a component), in job order (deterministic).
//
// Inter-node gradient reduction is modelled as a hierarchical ring: reduce inside each node, then
// a ring over the k nodes in which every node sends 2(k-1)/k of the gradient bytes over its NIC
// (Patarasuk and Yuan, 2009: the ring all-reduce is bandwidth-optimal; NCCL runs one ring per
// NIC rail, together the node's NIC bandwidth). A ring ordered by leaf crosses each leaf boundary
// once in each direction, so each spanned leaf's uplink carries one node's share.
//
// FabricSharing::flow (a cluster scenario's fabric.sharing: flow) replaces the mean-rate model by
// a flow-level co-simulation of the jobs of a component (fabric_share_flows.cpp): each job runs
// its iterations one after another, computing for base_s, its traffic starting overlap_s before
// the compute ends as one flow per link it loads (b_jl bytes), the iteration ending when both
// are done; the flows share each link max-min fairly (network::FlowNetwork), so a job slows
// its neighbours only while both really send, and jobs whose communication phases line up
// collide every time. Which they do depends on where each job is in its iteration (in a
// steady state two equal jobs keep whatever offset they have: in lockstep they collide every
// time, half a period apart never): a job's next iteration starts as far into the co-simulation
// as it has left of its current one (the phase source, the cluster simulation's clock; without
// one every job starts at once). Each runs until every job has done kFlowWarmupIterations +
// kFlowMeasuredIterations iterations (or all together kMaxTotalIterations); its iteration time
// is the mean over the iterations after the warm-up. Costlier than the mean-rate fixed point
// (events per iteration of every job of the component), exact for the traffic and phases it is
// given.
#pragma once
#include <functional>
#include <vector>

namespace dlsim::scheduler {

// How jobs that share links slow each other (see above).
enum class FabricSharing { analytical, flow };

// Bytes each node sends (and receives) per ring all-reduce of `gradient_bytes` over `nodes` nodes.
double ring_bytes_per_node(double gradient_bytes, int nodes);

// Iteration time of a job alone on `nodes` nodes of one leaf, each with `nic_bandwidth` bytes/s.
double uncontended_iteration_s(double base_s, double overlap_s, double gradient_bytes, int nodes, double nic_bandwidth);

struct LinkLoad {
  int link = 0;
  double bytes = 0;   // per iteration, per direction
};

class FabricShare {
 public:
  explicit FabricShare(FabricSharing sharing = FabricSharing::analytical) : sharing_(sharing) {}
  FabricSharing sharing() const { return sharing_; }
  // FabricSharing::flow: seconds a job is into its current iteration now (null: 0 for all).
  void set_phase_source(std::function<double(int job)> phase) { phase_ = std::move(phase); }

  // A link of `capacity` bytes/s per direction (> 0); returns its id (0, 1, ...).
  int add_link(double capacity);

  // Sets job `job`'s traffic (replacing what it had); an empty `loads` removes it. Nothing is
  // recomputed until settle().
  void set_job(int job, double base_s, double overlap_s, std::vector<LinkLoad> loads);

  // Recomputes the iteration times of every job connected (through shared links) to the given
  // links; returns those jobs, in increasing order.
  const std::vector<int>& settle(const std::vector<int>& links);

  // The last settled iteration time of a job with traffic (its base when it has none).
  double iteration_s(int job) const;
  // The links a job's traffic uses (empty when none).
  std::vector<int> links_of(int job) const;
  double capacity(int link) const { return capacity_[static_cast<std::size_t>(link)]; }

 private:
  struct Traffic {
    double base_s = 0, overlap_s = 0;
    std::vector<LinkLoad> loads;
    double t_s = 0;
    bool active = false;
  };
  void solve(const std::vector<int>& jobs);
  void solve_flows(const std::vector<int>& jobs);  // FabricSharing::flow (fabric_share_flows.cpp)
  Traffic& traffic(int job);

  FabricSharing sharing_;
  std::function<double(int)> phase_;
  std::vector<double> capacity_;
  std::vector<std::vector<int>> jobs_on_link_;
  std::vector<Traffic> traffic_;
  std::vector<int> component_;
  std::vector<char> seen_job_, seen_link_;
  std::vector<double> rate_sum_;   // per link, during solve
};

}  // namespace dlsim::scheduler
