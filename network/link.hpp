// Link: one direction of a point-to-point connection. Units: bytes/s and seconds.
#pragma once

namespace dlsim::network {

struct Link {
  double bandwidth = 0;   // bytes/s, > 0
  double latency_s = 0;   // seconds, >= 0
  // Time to move `bytes` over the link alone: latency + bytes / bandwidth.
  double transfer_time(double bytes) const { return latency_s + bytes / bandwidth; }
};

}  // namespace dlsim::network
