// Chrome trace-event JSON written by hand (no JSON library in the C++ build): metadata events
// first (processes, then each process's threads), then one complete event per span, in the
// trace's order (complete events need not be sorted by time).
#include "experiment/trace_writer.hpp"

#include <filesystem>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include "experiment/atomic_file.hpp"

namespace dlsim::experiment {
namespace {

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence starting at s[i] (a non-ASCII lead byte), or 0.
// Overlong forms, surrogates and code points above U+10FFFF are not well formed.
std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (!continuation(at(i + k))) return 0;
  }
  return n;
}

// Appends `s` as a JSON string literal.
void append_string(std::string& out, const std::string& s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(s, i);
      if (n == 0) {
        out.append("\\ufffd");
        ++i;
      } else {
        out.append(s, i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out.append(buf);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

// Integer nanoseconds (>= 0) as microseconds with three decimals, exactly: 1234 -> "1.234".
void append_microseconds(std::string& out, std::int64_t ns) {
  char fraction[8];  // 3 digits; room for what the compiler cannot rule out
  std::snprintf(fraction, sizeof fraction, "%03d", static_cast<int>(ns % 1000));
  out.append(std::to_string(ns / 1000)).append(".").append(fraction);
}

struct Ids {
  std::vector<std::string> processes;          // pid - 1 -> process name, in order of first appearance
  std::vector<std::vector<std::size_t>> lanes;  // pid - 1 -> its lanes, in lane order
  std::vector<int> pid_of_lane;
};

Ids assign_ids(const models::IterationTrace& trace) {
  Ids ids;
  std::map<std::string, std::size_t> index_of;  // lookup only; the order comes from `processes`
  for (std::size_t l = 0; l < trace.lanes.size(); ++l) {
    const auto [at, added] = index_of.emplace(trace.lanes[l].process, ids.processes.size());
    if (added) {
      ids.processes.push_back(trace.lanes[l].process);
      ids.lanes.emplace_back();
    }
    ids.lanes[at->second].push_back(l);
    ids.pid_of_lane.push_back(static_cast<int>(at->second) + 1);
  }
  return ids;
}

void append_metadata(std::string& out, const char* name, int pid, int tid, const char* arg, const std::string* text,
                     int number) {
  out.append("{\"ph\":\"M\",\"name\":\"").append(name).append("\",\"pid\":").append(std::to_string(pid));
  if (tid > 0) out.append(",\"tid\":").append(std::to_string(tid));
  out.append(",\"args\":{\"").append(arg).append("\":");
  if (text != nullptr) {
    append_string(out, *text);
  } else {
    out.append(std::to_string(number));
  }
  out.append("}}");
}

void check(const models::IterationTrace& trace, const models::TraceSpan& span, std::size_t index) {
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("trace span " + std::to_string(index) + " ('" + span.name + "'): " + why);
  };
  if (span.lane < 0 || static_cast<std::size_t>(span.lane) >= trace.lanes.size()) {
    fail("lane " + std::to_string(span.lane) + " does not exist (the trace has " + std::to_string(trace.lanes.size()) +
         " lanes)");
  }
  if (span.start_ns < 0) fail("negative start " + std::to_string(span.start_ns) + " ns");
  if (span.duration_ns < 0) fail("negative duration " + std::to_string(span.duration_ns) + " ns");
}

}  // namespace

std::string chrome_trace_json(const models::IterationTrace& trace) {
  for (std::size_t i = 0; i < trace.spans.size(); ++i) check(trace, trace.spans[i], i);
  const Ids ids = assign_ids(trace);
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  const auto next = [&] {
    out.append(first ? "\n" : ",\n");
    first = false;
  };
  for (std::size_t p = 0; p < ids.processes.size(); ++p) {
    const int pid = static_cast<int>(p) + 1;
    next();
    append_metadata(out, "process_name", pid, 0, "name", &ids.processes[p], 0);
    next();
    append_metadata(out, "process_sort_index", pid, 0, "sort_index", nullptr, static_cast<int>(p));
    for (std::size_t k = 0; k < ids.lanes[p].size(); ++k) {
      const std::size_t l = ids.lanes[p][k];
      const int tid = static_cast<int>(l) + 1;
      next();
      append_metadata(out, "thread_name", pid, tid, "name", &trace.lanes[l].thread, 0);
      next();
      append_metadata(out, "thread_sort_index", pid, tid, "sort_index", nullptr, static_cast<int>(k));
    }
  }
  for (const models::TraceSpan& span : trace.spans) {
    const auto lane = static_cast<std::size_t>(span.lane);
    next();
    out.append("{\"ph\":\"X\",\"name\":");
    append_string(out, span.name);
    out.append(",\"cat\":");
    append_string(out, span.category);
    out.append(",\"ts\":");
    append_microseconds(out, span.start_ns);
    out.append(",\"dur\":");
    append_microseconds(out, span.duration_ns);
    out.append(",\"pid\":").append(std::to_string(ids.pid_of_lane[lane]));
    out.append(",\"tid\":").append(std::to_string(lane + 1)).append("}");
  }
  out.append("\n],\n\"displayTimeUnit\":\"ns\"}\n");
  return out;
}

void write_chrome_trace(const models::IterationTrace& trace, const std::string& path) {
  const std::string text = chrome_trace_json(trace);  // before touching the file system
  write_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write the trace file '" + temporary + "'");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write the trace file '" + path + "' (disk full?)");
  });
}

std::string trace_path(const std::string& base, int nodes, int plan_index, bool many_nodes, bool many_plans) {
  if (!many_nodes && !many_plans) return base;
  const std::filesystem::path p(base);
  std::string stem = p.stem().string();
  if (many_nodes) stem += "-" + std::to_string(nodes) + "nodes";
  if (many_plans) stem += "-plan" + std::to_string(plan_index);
  return (p.parent_path() / (stem + p.extension().string())).string();
}

}  // namespace dlsim::experiment
