// Importers of the Philly (Pollux's CSV), Tiresias and Gavel traces. Each reader turns a row into a
// TraceJob with the trace's absolute submission time, then finish() sorts and rebases to 0.
#include <cmath>
#include <set>

#include "scheduler/trace.hpp"

namespace dlsim::scheduler {

using namespace trace_detail;

Trace read_philly_csv(const std::string& path) {
  // petuum/adaptdl (osdi21-artifact) simulator/traces/philly.csv: one row per finished job of
  // Microsoft's Philly trace (Jeon et al., ATC'19). duration in seconds on num_gpus GPUs,
  // gpu_time = duration * num_gpus, cluster = hashed virtual cluster. Rows are not time-ordered.
  LineReader reader(path);
  const Columns columns = read_header(reader, {"timestamp", "duration", "num_gpus", "cluster"});
  const std::size_t timestamp = columns.at("timestamp"), duration = columns.at("duration"),
                    gpus = columns.at("num_gpus"), cluster = columns.at("cluster");
  const bool has_gpu_time = columns.has("gpu_time");
  Trace trace{path, {}, {}};
  std::string line;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    const auto f = row_fields(reader, line, columns);
    TraceJob job;
    job.id = std::to_string(reader.line_number());
    job.submit_s = static_cast<double>(parse_datetime(reader, "timestamp", f[timestamp]));
    job.gpus = parse_gpus(reader, "num_gpus", f[gpus]);
    job.duration_s = parse_duration(reader, "duration", f[duration]);
    if (has_gpu_time) parse_double(reader, "gpu_time", f[columns.at("gpu_time")]);  // checked, unused
    job.queue = f[cluster];
    keep(trace, std::move(job));
  }
  finish(trace);
  return trace;
}

Trace read_tiresias_csv(const std::string& path) {
  // SymbioticLab/Tiresias simulator/60_job.csv: job_id,num_gpu,submit_time (s),iterations,
  // model_name,duration (s),interval (s between this submission and the next; unused here).
  LineReader reader(path);
  const Columns columns = read_header(reader, {"job_id", "num_gpu", "submit_time", "duration"});
  const bool has_model = columns.has("model_name");
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
    job.gpus = parse_gpus(reader, "num_gpu", f[columns.at("num_gpu")]);
    job.submit_s = parse_double(reader, "submit_time", f[columns.at("submit_time")]);
    job.duration_s = parse_duration(reader, "duration", f[columns.at("duration")]);
    if (has_model) job.model = std::string(trim(f[columns.at("model_name")]));
    keep(trace, std::move(job));
  }
  finish(trace);
  return trace;
}

namespace {

// Field positions of one Gavel layout (tab-separated, no header; from the tuple unpacked by
// parse_trace in stanford-futuredata/gavel scheduler/utils.py and the trace drivers):
//  7 fields (older Gavel; msr_seed0_vc2869ce.trace): job_type, command, num_steps_arg,
//    needs_data_dir, total_steps, arrival_time, scale_factor
//  9 fields: job_type, command, num_steps_arg, needs_data_dir, total_steps, scale_factor,
//    priority_weight, SLO, arrival_time
// 10 fields (Gavel @ c4fa4009; physical_cluster_artifact_evaluation.trace): job_type, command,
//    working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor,
//    priority_weight, SLO (-1: none), arrival_time
// job_type names the model and batch size ("ResNet-50 (batch size 64)"); scale_factor is the
// number of GPUs; arrival_time is in seconds. Priority and SLO are not kept.
struct GavelLayout {
  std::size_t total_steps, scale_factor, arrival_time;
};

GavelLayout gavel_layout(const LineReader& reader, std::size_t fields) {
  switch (fields) {
    case 7: return {4, 6, 5};
    case 9: return {4, 5, 8};
    case 10: return {5, 6, 9};
    default:
      reader.fail(std::to_string(fields) +
                  " tab-separated fields; a Gavel trace row has 7, 9 or 10 (see trace_import.cpp)");
  }
}

}  // namespace

Trace read_gavel_trace(const std::string& path, const GavelOptions& options) {
  if (!(options.seconds_per_step > 0) || !std::isfinite(options.seconds_per_step))
    throw std::invalid_argument("read_gavel_trace: seconds_per_step must be finite and > 0");
  LineReader reader(path);
  Trace trace{path, {}, {}};
  std::size_t layout_fields = 0;
  std::string line;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    const auto f = split(line, '\t');
    if (layout_fields == 0) layout_fields = f.size();
    if (f.size() != layout_fields)
      reader.fail(std::to_string(f.size()) + " tab-separated fields, expected " +
                  std::to_string(layout_fields) + " like the first row");
    const GavelLayout layout = gavel_layout(reader, f.size());
    TraceJob job;
    job.id = std::to_string(reader.line_number());
    job.model = f[0];
    job.gpus = parse_gpus(reader, "scale_factor", f[layout.scale_factor]);
    job.submit_s = parse_double(reader, "arrival_time", f[layout.arrival_time]);
    const long long steps = parse_int(reader, "total_steps", f[layout.total_steps]);
    if (steps < 0) reader.fail("total_steps = " + std::to_string(steps) + " is negative");
    double per_step = options.seconds_per_step;
    if (options.seconds_per_step_of) {
      per_step = options.seconds_per_step_of(job.model, job.gpus);
      if (!(per_step > 0) || !std::isfinite(per_step))
        reader.fail("seconds_per_step_of(\"" + job.model + "\", " + std::to_string(job.gpus) +
                    ") = " + std::to_string(per_step) + ", expected a finite value > 0");
    }
    job.duration_s = static_cast<double>(steps) * per_step;
    keep(trace, std::move(job));
  }
  finish(trace);
  return trace;
}

}  // namespace dlsim::scheduler
