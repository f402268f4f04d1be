// Importers of scheduler job logs: Alibaba PAI GPU v2020 (job and task tables) and Helios
// (SenseTime, Slurm cluster_log.csv). Only the column headers of these traces are in the shared
// traces folder; the formats follow their published schemas (cited beside each reader).
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <set>
#include <unordered_map>

#include "scheduler/trace.hpp"

namespace dlsim::scheduler {

using namespace trace_detail;

namespace {

// Fields of a row without header; the first line may be the header itself (the released tables
// have none, but users often add one), which is then skipped.
bool is_header(const LineReader& reader, const std::vector<std::string>& fields) {
  return reader.line_number() == 1 && !fields.empty() && trim(fields[0]) == "job_name";
}

void expect_fields(const LineReader& reader, const std::vector<std::string>& fields, std::size_t count,
                   const char* layout) {
  if (fields.size() != count)
    reader.fail(std::to_string(fields.size()) + " fields, expected " + std::to_string(count) + " (" +
                layout + ")");
}

// GPUs per job name from pai_task_table. A task's GPUs are ceil(inst_num * plan_gpu / 100):
// plan_gpu is a percentage of one GPU per instance (Weng et al., NSDI'22, and the column notes
// of alibaba/clusterdata cluster-trace-gpu-v2020). An empty plan_gpu (CPU task) counts 0. The
// 1e-9 keeps products such as 7 * 100 / 100 = 7.000000000000001 from rounding up to 8.
std::unordered_map<std::string, long long> pai_task_gpus(const std::string& path) {
  static constexpr const char* kLayout =
      "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type";
  LineReader reader(path);
  std::unordered_map<std::string, long long> gpus;
  std::string line;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    const auto f = split_csv(line);
    if (is_header(reader, f)) continue;
    expect_fields(reader, f, 10, kLayout);
    const double instances = parse_double(reader, "inst_num", f[2]);
    const double percent = trim(f[8]).empty() ? 0.0 : parse_double(reader, "plan_gpu", f[8]);
    if (instances < 0 || percent < 0) reader.fail("inst_num and plan_gpu must be >= 0");
    const double task_gpus = std::ceil(instances * percent / 100 - 1e-9);
    if (task_gpus > INT_MAX) reader.fail("task asks for more than 2^31 GPUs");
    long long& total = gpus[f[0]];
    total += static_cast<long long>(std::max(0.0, task_gpus));
  }
  return gpus;
}

// A number of seconds, or a "YYYY-MM-DD HH:MM:SS" time converted to seconds.
double seconds_or_datetime(const LineReader& reader, std::string_view column, std::string_view text) {
  const std::string_view t = trim(text);
  double value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (!t.empty() && error == std::errc() && end == t.data() + t.size() && std::isfinite(value)) return value;
  return static_cast<double>(parse_datetime(reader, column, text));
}

}  // namespace

Trace read_pai_tables(const std::string& job_table_path, const std::string& task_table_path) {
  const auto gpus_of = pai_task_gpus(task_table_path);
  LineReader reader(job_table_path);
  Trace trace{job_table_path + " + " + task_table_path, {}, {}};
  std::set<std::string> names;
  std::string line;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    const auto f = split_csv(line);
    if (is_header(reader, f)) continue;
    expect_fields(reader, f, 6, "job_name,inst_id,user,status,start_time,end_time");
    TraceJob job;
    job.id = f[0];
    if (trim(job.id).empty()) reader.fail("empty job_name");
    if (!names.insert(job.id).second) reader.fail("job_name \"" + job.id + "\" appears twice");
    job.queue = f[2];
    const std::string status(trim(f[3]));
    if (status != "Terminated") {  // Failed, Running, Waiting: no complete run time
      trace.skipped.add("status " + (status.empty() ? std::string("empty") : status));
      continue;
    }
    const double start = parse_double(reader, "start_time", f[4]);
    const double end = parse_double(reader, "end_time", f[5]);
    if (end < start) reader.fail("end_time " + f[5] + " is before start_time " + f[4]);
    job.submit_s = start;
    job.duration_s = end - start;
    const auto it = gpus_of.find(job.id);
    if (it == gpus_of.end()) {
      trace.skipped.add("no task rows");
      continue;
    }
    if (it->second > INT_MAX) reader.fail("job \"" + job.id + "\" asks for more than 2^31 GPUs");
    job.gpus = static_cast<int>(it->second);
    if (job.gpus == 0) {
      trace.skipped.add("no GPU (CPU-only job)");
      continue;
    }
    keep(trace, std::move(job));
  }
  finish(trace);
  return trace;
}

Trace read_helios_csv(const std::string& path) {
  // HeliosData README (S-Lab-System-Group/HeliosData): job_id,user,vc,gpu_num,cpu_num,node_num,
  // state,submit_time,start_time,end_time,duration,queue. state is COMPLETED, CANCELLED, FAILED,
  // TIMEOUT or NODE_FAIL; duration = end_time - start_time and queue = start_time - submit_time,
  // both in seconds.
  LineReader reader(path);
  const Columns columns =
      read_header(reader, {"job_id", "user", "gpu_num", "state", "submit_time", "duration"});
  const bool has_vc = columns.has("vc");
  Trace trace{path, {}, {}};
  std::set<std::string> ids;
  std::string line;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    const auto f = row_fields(reader, line, columns);
    TraceJob job;
    job.id = std::string(trim(f[columns.at("job_id")]));
    if (job.id.empty()) reader.fail("empty job_id");
    if (!ids.insert(job.id).second) reader.fail("job_id \"" + job.id + "\" appears twice");
    job.queue = std::string(trim(f[columns.at(has_vc ? "vc" : "user")]));
    const long long gpus = parse_int(reader, "gpu_num", f[columns.at("gpu_num")]);
    if (gpus < 0 || gpus > INT_MAX) reader.fail("gpu_num = " + std::to_string(gpus) + ", expected >= 0");
    job.submit_s = seconds_or_datetime(reader, "submit_time", f[columns.at("submit_time")]);
    job.duration_s = parse_duration(reader, "duration", f[columns.at("duration")]);
    const std::string state(trim(f[columns.at("state")]));
    if (state != "COMPLETED") {
      trace.skipped.add("state " + (state.empty() ? std::string("empty") : state));
    } else if (gpus == 0) {
      trace.skipped.add("no GPU (CPU-only job)");
    } else {
      job.gpus = static_cast<int>(gpus);
      keep(trace, std::move(job));
    }
  }
  finish(trace);
  return trace;
}

}  // namespace dlsim::scheduler
