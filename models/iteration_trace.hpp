// IterationTrace: what happened during one replayed training iteration, as spans on lanes.
// A lane is one stream of one simulated rank (its compute stream, a communication stream).
// Written out as a Chrome/Perfetto trace by experiment/trace_writer.hpp; the models layer only
// records it. Times are integer nanoseconds from the start of the iteration.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dlsim::models {

struct TraceLane {
  std::string process;  // the rank it belongs to, e.g. "stage 3 (ranks 24-31)"
  std::string thread;   // the stream, e.g. "compute", "tensor-parallel", "pipeline", "data-parallel"
};

struct TraceSpan {
  int lane = 0;                // index into IterationTrace::lanes
  std::string name;            // e.g. "F mb3 chunk0", "B mb3", "W mb3" (ZB-H1 weight gradients), "all-reduce 96 MiB"
  std::string category;        // "compute", "communication", "optimizer", "idle"
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
};

struct IterationTrace {
  std::vector<TraceLane> lanes;
  std::vector<TraceSpan> spans;
};

}  // namespace dlsim::models
