// Checkpoint/restart arithmetic: the optimum checkpoint interval, the expected wall time of a job
// that checkpoints periodically under exponential failures, and the durations of a checkpoint
// write and of a restart. Units: seconds, bytes, bytes per second.
//
// Notation (Daly 2006): tau = useful work between checkpoints, delta = time to write one
// checkpoint, R = time to restart after a failure, M = mean time between failures (exponential).
//
// References
//   J. W. Young, "A first order approximation to the optimum checkpoint interval",
//     Communications of the ACM 17(9):530-531, 1974.
//   J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
//     Future Generation Computer Systems 22(3):303-312, 2006 (eq. 37 for the interval; its
//     complete cost model for the expected wall time, derived again in checkpoint_math.cpp).
#pragma once

namespace dlsim::scheduler {

// Young (1974): tau = sqrt(2 delta M). Requires finite delta > 0 and M > 0.
double young_interval(double checkpoint_s, double mtbf_s);

// Daly (2006) eq. 37: tau = sqrt(2 delta M) (1 + sqrt(delta/(2M))/3 + delta/(18 M)) - delta for
// delta < 2M, else tau = M. Requires finite delta > 0 and M > 0. Tends to Young as delta/M -> 0.
double daly_interval(double checkpoint_s, double mtbf_s);

// Expected wall time to finish `work_s` of useful work, writing a checkpoint (delta) after every
// `interval_s` (tau) of work, with failures at rate 1/M that may strike during work, checkpoint
// writes and restarts alike; each failure loses the work since the last checkpoint and costs a
// restart R (Daly 2006, complete model):
//     T = M e^{R/M} (e^{(tau + delta)/M} - 1) work / tau.
// Exact when work/tau is an integer; otherwise the last segment is counted fractionally, as in
// Daly. M = +infinity gives the failure-free time work (tau + delta) / tau.
// Requires work >= 0, tau > 0, delta >= 0, R >= 0, M > 0 (all finite except M).
double expected_completion_time(double work_s, double interval_s, double checkpoint_s, double restart_s,
                                double mtbf_s);

// Time to write a checkpoint: bytes / write bandwidth + a fixed latency (barrier, metadata,
// commit). Requires bytes >= 0, bandwidth > 0, latency >= 0.
double checkpoint_write_time(double bytes, double write_bytes_per_s, double latency_s = 0);

// Time to restart: provisioning of the replacement node(s) + reading the checkpoint back +
// warm-up (process start, framework and communicator initialisation, data loader). Requires
// all terms >= 0 and the bandwidth > 0.
double restart_time(double provisioning_s, double bytes, double read_bytes_per_s, double warmup_s = 0);

}  // namespace dlsim::scheduler
