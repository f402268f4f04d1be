// Shared reading helpers of the trace importers, dlsim's own CSV format and the trace summary.
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "scheduler/trace.hpp"

namespace dlsim::scheduler {

void TraceSkips::add(const std::string& reason) {
  ++total;
  ++by_reason[reason];
}

std::string TraceSkips::describe() const {
  if (total == 0) return "none skipped";
  std::string text = std::to_string(total) + " skipped:";
  const char* separator = " ";
  for (const auto& [reason, count] : by_reason) {
    text += separator + std::to_string(count) + " " + reason;
    separator = ", ";
  }
  return text;
}

namespace trace_detail {

LineReader::LineReader(std::string path) : path_(std::move(path)), in_(path_) {
  if (!in_) throw std::runtime_error(path_ + ": cannot open the file");
}

bool LineReader::next(std::string& line) {
  if (!std::getline(in_, line)) return false;
  ++line_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

void LineReader::fail(const std::string& what) const {
  throw std::runtime_error(path_ + ":" + std::to_string(line_) + ": " + what);
}

std::vector<std::string> split(std::string_view line, char separator) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = line.find(separator, start);
    fields.emplace_back(line.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        fields.back() += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';  // "" inside quotes is one quote
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

Columns read_header(LineReader& reader, const std::vector<std::string>& required) {
  std::string line;
  std::string expected;
  for (const auto& name : required) expected += (expected.empty() ? "" : ",") + name;
  if (!reader.next(line)) reader.fail("empty file, expected a header with " + expected);
  Columns columns;
  for (const auto& field : split_csv(line)) {
    const std::string name(trim(field));
    if (!columns.index.emplace(name, columns.names.size()).second)
      reader.fail("column \"" + name + "\" appears twice in the header");
    columns.names.push_back(name);
  }
  for (const auto& name : required)
    if (!columns.has(name))
      reader.fail("header lacks column \"" + name + "\" (expected a header with " + expected + ")");
  return columns;
}

std::vector<std::string> row_fields(const LineReader& reader, const std::string& line,
                                    const Columns& columns) {
  auto fields = split_csv(line);
  if (fields.size() != columns.names.size())
    reader.fail(std::to_string(fields.size()) + " fields, expected " +
                std::to_string(columns.names.size()) + " as in the header");
  return fields;
}

double parse_double(const LineReader& reader, std::string_view column, std::string_view text) {
  const std::string_view t = trim(text);
  double value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || error != std::errc() || end != t.data() + t.size() || !std::isfinite(value))
    reader.fail(std::string(column) + " \"" + std::string(text) + "\" is not a finite number");
  return value;
}

long long parse_int(const LineReader& reader, std::string_view column, std::string_view text) {
  const std::string_view t = trim(text);
  long long value = 0;
  const auto [end, error] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || error != std::errc() || end != t.data() + t.size())
    reader.fail(std::string(column) + " \"" + std::string(text) + "\" is not an integer");
  return value;
}

int parse_gpus(const LineReader& reader, std::string_view column, std::string_view text) {
  const long long gpus = parse_int(reader, column, text);
  if (gpus < 1 || gpus > INT_MAX)
    reader.fail(std::string(column) + " = " + std::to_string(gpus) + ", expected an integer >= 1");
  return static_cast<int>(gpus);
}

double parse_duration(const LineReader& reader, std::string_view column, std::string_view text) {
  const double seconds = parse_double(reader, column, text);
  if (seconds < 0)
    reader.fail(std::string(column) + " = " + std::string(trim(text)) + " is negative, expected >= 0");
  return seconds;
}

long long days_from_civil(long long year, unsigned month, unsigned day) {
  // Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms": days since 1970-01-01 in the
  // proleptic Gregorian calendar, eras of 400 years starting on March 1st.
  year -= month <= 2;
  const long long era = (year >= 0 ? year : year - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(year - era * 400);               // [0, 399]
  const unsigned doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                  // [0, 146096]
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

long long parse_datetime(const LineReader& reader, std::string_view column, std::string_view text) {
  const std::string_view t = trim(text);
  auto bad = [&](const std::string& why) {
    reader.fail(std::string(column) + " \"" + std::string(text) + "\" " + why);
  };
  // Positions of "YYYY-MM-DD HH:MM:SS".
  const bool shape = t.size() == 19 && t[4] == '-' && t[7] == '-' && (t[10] == ' ' || t[10] == 'T') &&
                     t[13] == ':' && t[16] == ':';
  auto number = [&](std::size_t at, std::size_t digits) {
    long long value = 0;
    for (std::size_t i = at; i < at + digits; ++i) {
      if (t[i] < '0' || t[i] > '9') return -1LL;
      value = value * 10 + (t[i] - '0');
    }
    return value;
  };
  if (!shape) bad("is not a time of the form YYYY-MM-DD HH:MM:SS");
  const long long year = number(0, 4), month = number(5, 2), day = number(8, 2);
  const long long hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (std::min({year, month, day, hour, minute, second}) < 0)
    bad("is not a time of the form YYYY-MM-DD HH:MM:SS");
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12) bad("has no month " + std::to_string(month));
  if (day < 1 || day > kDays[month - 1] + (month == 2 && leap)) bad("has no such day");
  if (hour > 23 || minute > 59 || second > 59) bad("has no such time of day");
  const long long days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return days * 86400 + hour * 3600 + minute * 60 + second;
}

bool id_less(std::string_view a, std::string_view b) {
  auto numeric = [](std::string_view id) {
    return !id.empty() && id.find_first_not_of("0123456789") == std::string_view::npos;
  };
  const bool na = numeric(a), nb = numeric(b);
  if (na != nb) return na;  // numbers first
  if (!na) return a < b;
  auto digits = [](std::string_view id) {  // without leading zeros
    const auto first = id.find_first_not_of('0');
    return first == std::string_view::npos ? std::string_view{} : id.substr(first);
  };
  const std::string_view da = digits(a), db = digits(b);
  if (da.size() != db.size()) return da.size() < db.size();
  if (da != db) return da < db;
  return a < b;  // "07" and "7": the same value, still a strict order
}

void keep(Trace& trace, TraceJob&& job) {
  if (job.duration_s == 0) {
    trace.skipped.add("duration 0");
    return;
  }
  trace.jobs.push_back(std::move(job));
}

void finish(Trace& trace) {
  if (trace.jobs.empty()) return;
  double first = trace.jobs.front().submit_s;
  for (const auto& job : trace.jobs) first = std::min(first, job.submit_s);
  for (auto& job : trace.jobs) job.submit_s -= first;
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.submit_s != b.submit_s ? a.submit_s < b.submit_s : id_less(a.id, b.id);
  });
}

}  // namespace trace_detail

using namespace trace_detail;

namespace {

const std::vector<std::string> kDlsimColumns{"id", "submit_s", "gpus", "duration_s", "queue", "model"};

std::string csv_field(const std::string& text, const std::string& what, const std::string& id) {
  if (text.find_first_of("\r\n") != std::string::npos)
    throw std::invalid_argument("write_dlsim_csv: " + what + " of job \"" + id + "\" holds a line break");
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string exact(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

}  // namespace

Trace read_dlsim_csv(const std::string& path) {
  LineReader reader(path);
  const Columns columns = read_header(reader, kDlsimColumns);
  if (columns.names != kDlsimColumns)
    reader.fail("header must be exactly id,submit_s,gpus,duration_s,queue,model");
  Trace trace{path, {}, {}};
  std::set<std::string> ids;
  std::string line;
  while (reader.next(line)) {
    if (trim(line).empty()) continue;
    auto f = row_fields(reader, line, columns);
    TraceJob job;
    job.id = f[0];
    if (job.id.empty()) reader.fail("empty id");
    if (!ids.insert(job.id).second) reader.fail("id \"" + job.id + "\" appears twice");
    job.submit_s = parse_double(reader, "submit_s", f[1]);
    if (job.submit_s < 0) reader.fail("submit_s = " + f[1] + " is negative, expected >= 0");
    job.gpus = parse_gpus(reader, "gpus", f[2]);
    job.duration_s = parse_duration(reader, "duration_s", f[3]);
    if (job.duration_s == 0) reader.fail("duration_s = 0, expected > 0");
    job.queue = f[4];
    job.model = f[5];
    trace.jobs.push_back(std::move(job));
  }
  finish(trace);
  return trace;
}

void write_dlsim_csv(const Trace& trace, const std::string& path) {
  std::string text = "id,submit_s,gpus,duration_s,queue,model\n";
  for (const auto& job : trace.jobs) {
    if (job.id.empty()) throw std::invalid_argument("write_dlsim_csv: a job has an empty id");
    if (job.gpus < 1 || !(job.duration_s > 0) || !std::isfinite(job.duration_s) ||
        !(job.submit_s >= 0) || !std::isfinite(job.submit_s))
      throw std::invalid_argument("write_dlsim_csv: job \"" + job.id +
                                  "\" needs gpus >= 1, a finite duration_s > 0 and submit_s >= 0");
    text += csv_field(job.id, "id", job.id) + "," + exact(job.submit_s) + "," + std::to_string(job.gpus) +
            "," + exact(job.duration_s) + "," + csv_field(job.queue, "queue", job.id) + "," +
            csv_field(job.model, "model", job.id) + "\n";
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(temporary + ": cannot open for writing");
    out << text;
    out.close();
    if (!out) throw std::runtime_error(temporary + ": write failed");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error(path + ": cannot rename " + temporary + ": " + error.message());
}

TraceSummary summarize(const Trace& trace) {
  TraceSummary summary;
  summary.jobs = trace.jobs.size();
  if (trace.jobs.empty()) return summary;
  std::vector<double> durations;
  durations.reserve(trace.jobs.size());
  double sum = 0, gpu_time_8plus = 0;
  std::map<int, std::size_t> counts;
  for (const auto& job : trace.jobs) {
    durations.push_back(job.duration_s);
    sum += job.duration_s;
    const double gpu_time = job.gpus * job.duration_s;
    summary.gpu_time_s += gpu_time;
    if (job.gpus >= 8) gpu_time_8plus += gpu_time;
    ++counts[job.gpus];
  }
  const double n = static_cast<double>(trace.jobs.size());
  for (const auto& [gpus, count] : counts) summary.job_share_by_gpus[gpus] = count / n;
  std::sort(durations.begin(), durations.end());
  auto percentile = [&](double p) {  // linear between closest ranks (numpy's default)
    const double h = (n - 1) * p;
    const auto lo = static_cast<std::size_t>(h);
    if (lo + 1 >= durations.size()) return durations.back();
    return durations[lo] + (h - static_cast<double>(lo)) * (durations[lo + 1] - durations[lo]);
  };
  summary.duration_median_s = percentile(0.5);
  summary.duration_p99_s = percentile(0.99);
  summary.duration_mean_s = sum / n;
  summary.gpu_time_share_8plus = summary.gpu_time_s > 0 ? gpu_time_8plus / summary.gpu_time_s : 0;
  const double span = trace.jobs.back().submit_s - trace.jobs.front().submit_s;
  if (trace.jobs.size() >= 2 && span > 0) summary.arrival_rate_per_s = (n - 1) / span;
  return summary;
}

}  // namespace dlsim::scheduler
