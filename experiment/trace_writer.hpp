// Writes an IterationTrace (models/iteration_trace.hpp) as Chrome trace-event JSON, the format
// ui.perfetto.dev and chrome://tracing open ("Trace Event Format", JSON object form):
//
//   {"traceEvents": [...], "displayTimeUnit": "ns"}
//
// - Each distinct TraceLane::process becomes one pid (1, 2, ... in order of first appearance),
//   named by a process_name metadata event and ordered by process_sort_index.
// - Each lane becomes one tid: the lane's index + 1, unique over the whole trace, named by a
//   thread_name metadata event and ordered within its process by thread_sort_index.
// - Each span becomes a complete event (ph "X") with name, cat, ts and dur in microseconds,
//   written exactly from the integer nanoseconds with three decimals ("1.234").
// The output depends only on the trace (same trace, same bytes). Strings are escaped per JSON;
// bytes that are not valid UTF-8 are replaced by U+FFFD so the file always parses.
#pragma once
#include <string>

#include "models/iteration_trace.hpp"

namespace dlsim::experiment {

// The trace as JSON text. Throws std::invalid_argument for a span whose lane does not exist or
// whose start or duration is negative.
std::string chrome_trace_json(const models::IterationTrace& trace);

// Writes chrome_trace_json(trace) to `path` atomically (atomic_file.hpp): the target is either
// untouched or complete. Throws std::runtime_error when the file cannot be written.
void write_chrome_trace(const models::IterationTrace& trace, const std::string& path);

// The file for one configuration of a sweep: `base` itself for a single configuration, else
// "<stem>[-<nodes>nodes][-plan<i>]<extension>" beside it, naming what the sweep varies
// ("gpt3.json" -> "gpt3-128nodes.json", "bert.json" -> "bert-plan1.json").
std::string trace_path(const std::string& base, int nodes, int plan_index, bool many_nodes, bool many_plans);

}  // namespace dlsim::experiment
