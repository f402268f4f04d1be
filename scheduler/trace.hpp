// Multi-job workload traces: the jobs a cluster simulation replays (who submits what, when, on how
// many accelerators, for how long), read from public GPU-cluster traces or generated from a
// published distribution. A trace is plain data: it neither schedules nor runs anything.
//
// Units: seconds (double) and accelerator counts. Invariants of a Trace returned here: jobs are
// sorted by (submit_s, id), stably, with ids in natural order (ids of digits only by their value,
// before other ids, which compare as strings: "2" < "10" < "a"), so jobs submitted at the same
// time keep the order of their line numbers; the first job submits at 0 (submissions are relative
// to the trace's first one); every job has gpus >= 1 and a finite duration_s > 0.
//
// Errors: a malformed row throws std::runtime_error "<file>:<line>: <what is wrong>" (wrong field
// count, a value that is not a number, gpus < 1, a negative duration, ...). Rows that are well
// formed but not replayable (duration 0, a job that did not finish, a CPU-only job) are skipped and
// counted in Trace::skipped by reason. A bad SyntheticTraceSpec throws std::invalid_argument naming
// the field. Depends only on the C++ standard library and sim/ (random streams).
#pragma once
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dlsim::scheduler {

struct TraceJob {
  std::string id;          // from the trace, or "<line number>" when it has none
  double submit_s = 0;     // seconds after the trace's first submission (the first job submits at 0)
  int gpus = 1;            // accelerators requested (>= 1)
  double duration_s = 0;   // run time recorded in the trace on those accelerators (> 0)
  std::string queue;       // user / virtual cluster / group, "" when absent
  std::string model;       // model or application name, "" when absent
};

// Rows of the input left out of Trace::jobs, by reason ("duration 0", "state FAILED", ...).
struct TraceSkips {
  std::size_t total = 0;
  std::map<std::string, std::size_t> by_reason;  // ordered: printing is deterministic
  void add(const std::string& reason);
  std::string describe() const;  // "3 skipped: 2 duration 0, 1 state FAILED" or "none skipped"
};

struct Trace {
  std::string source;           // file(s) or "synthetic:<description>"
  std::vector<TraceJob> jobs;   // sorted by (submit_s, id); stable
  TraceSkips skipped;
};

// ---- Importers (each file format is described beside its reader in trace_import*.cpp) ----

// Philly as published by Pollux (petuum/adaptdl, simulator/traces/philly.csv): header
// `timestamp,duration,num_gpus,gpu_time,cluster`, timestamp "YYYY-MM-DD HH:MM:SS" (read as a
// civil time, no time zone). queue = cluster (the Philly virtual cluster). Rows need not be sorted.
Trace read_philly_csv(const std::string& path);

// Tiresias testbed traces (SymbioticLab/Tiresias, simulator/*.csv): header
// `job_id,num_gpu,submit_time,iterations,model_name,duration,interval`, seconds.
Trace read_tiresias_csv(const std::string& path);

// Gavel traces (stanford-futuredata/gavel, scheduler/traces/*.trace), tab-separated, no header,
// in the 7-, 9- or 10-field layouts of Gavel's parse_trace. They record work in steps, not time:
// Gavel turns steps into time with a measured throughput table that is not part of the trace.
// Here duration_s = total_steps * seconds_per_step, where seconds_per_step comes from
// `seconds_per_step_of(job_type, gpus)` when set, else the constant `seconds_per_step`. The
// default of 1 s per step is an assumption, not a measurement: durations are then step counts.
struct GavelOptions {
  double seconds_per_step = 1.0;  // > 0
  std::function<double(std::string_view job_type, int gpus)> seconds_per_step_of;  // optional
};
Trace read_gavel_trace(const std::string& path, const GavelOptions& options = {});

// Alibaba PAI GPU cluster trace v2020 (alibaba/clusterdata, cluster-trace-gpu-v2020): two CSV files
// without header. pai_job_table `job_name,inst_id,user,status,start_time,end_time` and
// pai_task_table `job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,
// plan_gpu,gpu_type` (seconds; plan_gpu in percent of one GPU). A task holds
// ceil(inst_num * plan_gpu / 100) GPUs; a job's GPUs are the sum over its tasks; submit = job
// start_time, duration = end_time - start_time, queue = user. Only status Terminated is kept.
Trace read_pai_tables(const std::string& job_table_path, const std::string& task_table_path);

// Helios job logs (S-Lab-System-Group/HeliosData, data/<cluster>/cluster_log.csv; Hu et al.,
// SC'21): header with at least job_id,user,gpu_num,state,submit_time,duration (any order; extra
// columns such as cpu_num,node_num,start_time,end_time are allowed). queue = vc when the column
// exists, else user. Helios's own `queue` column is the queueing delay in seconds, not a queue
// name, and is ignored. submit_time is "YYYY-MM-DD HH:MM:SS" or seconds. Only state COMPLETED is
// kept.
Trace read_helios_csv(const std::string& path);

// dlsim's own format: header `id,submit_s,gpus,duration_s,queue,model`; doubles written with
// %.17g so that write then read gives back identical jobs. Text fields holding ',' or '"' are
// quoted as in RFC 4180; line breaks in a field are rejected. The file is written to a temporary
// name and renamed, so it is never half-written.
Trace read_dlsim_csv(const std::string& path);
void write_dlsim_csv(const Trace& trace, const std::string& path);

// ---- Synthetic traces ----

// Philly's mix of GPU counts (jobs per count in philly.csv of the traces folder, 82,247 jobs;
// the 17 jobs asking for 12, 24 or 128 GPUs are left out, so the weights sum to 0.99979 and are
// normalized when sampling).
inline const std::vector<int> kPhillyGpuCounts{1, 2, 4, 8, 16, 32, 64};
inline const std::vector<double> kPhillyGpuWeights{76627.0 / 82247, 1818.0 / 82247, 1870.0 / 82247,
                                                   1643.0 / 82247,  199.0 / 82247,  67.0 / 82247,
                                                   6.0 / 82247};

enum class QueueAssignment { round_robin, random };

struct SyntheticTraceSpec {
  int jobs = 1000;                                  // >= 1
  double arrival_rate_per_s = 0.01;                 // Poisson arrivals (> 0)
  std::vector<int> gpu_counts = kPhillyGpuCounts;   // each >= 1
  std::vector<double> gpu_weights = kPhillyGpuWeights;  // same size, >= 0, not all 0
  // Lognormal durations with this median and mean (sigma = sqrt(2 ln(mean/median)), mean >=
  // median). Defaults: Philly's median and mean (README.md of the traces folder, from philly.csv).
  double duration_median_s = 1144;
  double duration_mean_s = 13136;
  double duration_max_s = 0;                        // 0: no cap; else longer draws are cut to it
  std::vector<std::string> queues;                  // "" for every job when empty
  QueueAssignment queue_assignment = QueueAssignment::round_robin;
};

// Throws std::invalid_argument naming the first bad field.
void validate(const SyntheticTraceSpec& spec);

// Draws from the named streams "arrivals", "gpus", "durations" and "queues" of
// sim::RandomStreams(seed): the same spec and seed give an identical trace on every run.
// The first job submits at 0, then gaps are exponential with mean 1 / arrival_rate_per_s.
Trace synthetic_trace(const SyntheticTraceSpec& spec, std::uint64_t seed);

// ---- Summary ----

struct TraceSummary {
  std::size_t jobs = 0;
  std::map<int, double> job_share_by_gpus;  // fraction of jobs asking for each GPU count
  double duration_median_s = 0;             // percentiles interpolate linearly between ranks
  double duration_mean_s = 0;
  double duration_p99_s = 0;
  double gpu_time_s = 0;                    // sum of gpus * duration_s
  double gpu_time_share_8plus = 0;          // share of gpu_time_s in jobs with >= 8 GPUs
  double arrival_rate_per_s = 0;            // (jobs - 1) / last submission; 0 if undefined
};
TraceSummary summarize(const Trace& trace);

// ---- Shared by the readers in trace_*.cpp; not part of the interface ----
namespace trace_detail {

// A text file read line by line (lines numbered from 1, a trailing '\r' removed); fail() throws
// std::runtime_error "<path>:<line>: <what>".
class LineReader {
 public:
  explicit LineReader(std::string path);
  bool next(std::string& line);
  std::size_t line_number() const { return line_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string path_;
  std::ifstream in_;
  std::size_t line_ = 0;
};

std::vector<std::string> split(std::string_view line, char separator);  // no quoting
std::vector<std::string> split_csv(std::string_view line);  // RFC 4180 quotes within one line
std::string_view trim(std::string_view text);

// Column positions from a header line; fail()s when a required name is absent.
struct Columns {
  std::vector<std::string> names;
  std::map<std::string, std::size_t, std::less<>> index;
  bool has(std::string_view name) const { return index.count(name) != 0; }
  std::size_t at(std::string_view name) const { return index.find(name)->second; }
};
Columns read_header(LineReader& reader, const std::vector<std::string>& required);
// Splits a data row and checks its field count against the header.
std::vector<std::string> row_fields(const LineReader& reader, const std::string& line,
                                    const Columns& columns);

// Parsers that fail() with the column name and the offending text.
double parse_double(const LineReader& reader, std::string_view column, std::string_view text);
long long parse_int(const LineReader& reader, std::string_view column, std::string_view text);
int parse_gpus(const LineReader& reader, std::string_view column, std::string_view text);  // >= 1
double parse_duration(const LineReader& reader, std::string_view column, std::string_view text);  // >= 0
// "YYYY-MM-DD HH:MM:SS" (or 'T' between date and time) as seconds since 1970-01-01 00:00:00 of
// the same (unknown) time zone, by the days-from-civil algorithm; no locale or time-zone calls.
long long parse_datetime(const LineReader& reader, std::string_view column, std::string_view text);
long long days_from_civil(long long year, unsigned month, unsigned day);

// Natural order of job ids (see the top of this file); a strict weak order.
bool id_less(std::string_view a, std::string_view b);
// Sorts the jobs by (submit_s, id), stably, and subtracts the earliest submission from all.
void finish(Trace& trace);
// Appends `job`, or counts it as skipped when it lasted no time (every format's last rule).
void keep(Trace& trace, TraceJob&& job);

}  // namespace trace_detail
}  // namespace dlsim::scheduler
