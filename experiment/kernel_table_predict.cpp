// Predicting measured kernel tables (kernel_table_predict.hpp).
#include "experiment/kernel_table_predict.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "calibration/kernel_fit.hpp"
#include "experiment/atomic_file.hpp"
#include "experiment/config_error.hpp"
#include "experiment/kernel_predict.hpp"
#include "models/fp8_recipe.hpp"

namespace dlsim::experiment {
namespace {

constexpr const char* kPredictedColumn = "predicted_ms";

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string without_cr(const std::string& line) {
  return !line.empty() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line;
}

// The table reader's "name:line: column: why" as a located ConfigError (file, line, column name).
ConfigError located(const std::string& what, const std::string& name, const std::vector<std::string>& columns) {
  std::string rest = what;
  int line = 0;
  const std::string prefix = name + ":";
  if (what.rfind(prefix, 0) == 0) {
    const std::size_t digits = what.find_first_not_of("0123456789", prefix.size());
    if (digits != prefix.size() && digits != std::string::npos && what.compare(digits, 2, ": ") == 0) {
      line = std::stoi(what.substr(prefix.size(), digits - prefix.size()));
      rest = what.substr(digits + 2);
    }
  }
  std::string key;
  const std::size_t colon = rest.find(": ");
  if (colon != std::string::npos && contains(columns, rest.substr(0, colon))) {
    key = rest.substr(0, colon);
    rest = rest.substr(colon + 2);
  }
  return ConfigError({name, line, 0}, key, rest);
}

// The text the table reader is given: the lines as read, and for a table of shapes only (no time
// column) a placeholder time of 1 ms in each row, which is never reported. Line numbers are kept.
std::string reader_text(const KernelTablePrediction& p, const std::string& placeholder) {
  std::string text;
  for (std::size_t i = 0; i < p.lines.size(); ++i) {
    const std::string line = without_cr(p.lines[i]);
    text += line;
    if (!placeholder.empty() && !line.empty()) text += i == 0 ? "," + placeholder : ",1";
    text += '\n';
  }
  return text;
}

// Catalog devices by the gpu cells that name them, resolved once each.
class DeviceCache {
 public:
  explicit DeviceCache(std::string name) : name_(std::move(name)) {}
  const KernelDevice& get(const std::string& gpu, int line) {
    auto it = devices_.find(gpu);
    if (it == devices_.end()) it = devices_.emplace(gpu, kernel_device(gpu, {name_, line, 0}, "gpu")).first;
    return it->second;
  }

 private:
  std::string name_;
  std::map<std::string, KernelDevice> devices_;
};

PredictedKernelRow predict_gemm_row(const calibration::MeasuredGemm& r, DeviceCache& devices, const std::string& name,
                                    const std::string& precision_column) {
  const KernelDevice& d = devices.get(r.gpu, r.line);
  if (!d.spec->supports(r.precision)) {
    throw ConfigError({name, r.line, 0}, precision_column,
                      d.name + " has no " + std::string(models::to_string(r.precision)) + " peak");
  }
  try {
    const double s =
        models::gemm_time(r.shape, r.precision, *d.spec, models::lone_gemm_params(d.profile->kernels, r.precision)).seconds;
    return {r.line, r.op, d.name, s, r.seconds};
  } catch (const std::invalid_argument& e) {
    throw ConfigError({name, r.line, 0}, "", e.what());
  }
}

PredictedKernelRow predict_memory_row(const calibration::MeasuredMemoryKernel& r, DeviceCache& devices) {
  const KernelDevice& d = devices.get(r.gpu, r.line);
  const double s = models::memory_kernel_time(r.kernel, r.bytes, d.profile->kernels.memory, d.spec->memory_bandwidth,
                                              d.profile->memory_efficiency);
  return {r.line, r.op, d.name, s, r.seconds};
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

}  // namespace

KernelTablePrediction predict_kernel_table(std::istream& in, const std::string& name) {
  KernelTablePrediction p;
  p.name = name;
  for (std::string line; std::getline(in, line);) {
    p.lines.push_back(line);
    p.final_newline = !in.eof();
  }
  const std::vector<std::string> columns =
      p.lines.empty() ? std::vector<std::string>{} : calibration::split_csv_line(without_cr(p.lines[0]));
  if (contains(columns, kPredictedColumn)) {
    throw ConfigError({name, 1, 0}, kPredictedColumn,
                      "the table already has this column (an output of dlsim kernel?): "
                      "give it the measured table");
  }
  p.measured = contains(columns, "median_ms") || contains(columns, "time_ms");
  const std::string placeholder = p.measured ? "" : contains(columns, "a_transpose") ? "time_ms" : "median_ms";
  std::istringstream text(reader_text(p, placeholder));
  calibration::KernelTables tables;
  try {
    p.format = calibration::read_kernel_table(text, name, tables);
  } catch (const std::invalid_argument& e) {
    throw located(e.what(), name, columns);
  }
  if (p.format == calibration::TableFormat::deepbench_conv) {
    throw ConfigError({name, 1, 0}, "",
                      "a DeepBench convolution table: dlsim kernel predicts GEMM tables (vidur's, "
                      "DeepBench's) and vidur's element-wise tables");
  }
  DeviceCache devices(name);
  const std::string precision_column = p.format == calibration::TableFormat::deepbench_gemm ? "precision" : "dtype";
  for (const auto& r : tables.gemm) p.rows.push_back(predict_gemm_row(r, devices, name, precision_column));
  for (const auto& r : tables.memory) p.rows.push_back(predict_memory_row(r, devices));
  if (!p.measured) {
    for (auto& r : p.rows) r.measured_s = 0;
  }
  return p;
}

KernelTablePrediction predict_kernel_table_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({path, 0, 0}, "", "cannot be read");
  return predict_kernel_table(in, path);
}

void write_predicted_table(std::ostream& out, const KernelTablePrediction& p) {
  std::size_t next = 0;  // the next predicted row
  for (std::size_t i = 0; i < p.lines.size(); ++i) {
    const std::string& line = p.lines[i];
    const bool cr = !line.empty() && line.back() == '\r';
    out.write(line.data(), static_cast<std::streamsize>(line.size() - (cr ? 1 : 0)));
    if (i == 0) {
      out << ',' << kPredictedColumn;
    } else if (next < p.rows.size() && p.rows[next].line == static_cast<int>(i + 1)) {
      char value[32];
      std::snprintf(value, sizeof value, ",%.6g", p.rows[next++].predicted_s * 1e3);
      out << value;
    }
    if (cr) out << '\r';
    if (i + 1 < p.lines.size() || p.final_newline) out << '\n';
  }
}

void write_predicted_table_file(const std::string& path, const KernelTablePrediction& p) {
  write_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    write_predicted_table(out, p);
    out.close();
    if (!out) throw std::runtime_error("cannot write '" + temporary + "'");
  });
}

std::vector<KernelOpError> errors_by_op(const KernelTablePrediction& p) {
  if (!p.measured || p.rows.empty()) return {};
  // summarize_held_out gives the median and p90 of |e| per label, in order of first appearance;
  // the family is one it adds no size subsets for, and "all" pools every row.
  std::vector<calibration::HeldOut> cases;
  for (const auto& r : p.rows) {
    for (const std::string& label : {r.op, std::string("all")}) {
      cases.push_back({models::KernelFamilyKind::attention, label, "", 0, r.measured_s, r.predicted_s});
    }
  }
  std::vector<KernelOpError> out;
  for (const auto& s : calibration::summarize_held_out(cases))
    out.push_back({s.label, s.cases, s.median_abs, s.p90_abs});
  std::stable_partition(out.begin(), out.end(), [](const KernelOpError& e) { return e.op != "all"; });
  if (out.size() == 2) out.pop_back();  // one op: "all" would repeat it
  return out;
}

std::string prediction_summary(const KernelTablePrediction& p) {
  std::string line = "predicted " + std::to_string(p.rows.size()) + " rows of " + p.name + " (" +
                     calibration::to_string(p.format) + ")";
  if (!p.measured) return line + "; no measured times to compare (no time column)";
  line += "; |predicted / measured - 1| median / p90:";
  const auto errors = errors_by_op(p);
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const auto& e = errors[i];
    line += std::string(i == 0 ? " " : ", ") + e.op + " " + percent(e.median_abs) + " / " + percent(e.p90_abs) + " (" +
            std::to_string(e.cases) + ")";
  }
  return line;
}

}  // namespace dlsim::experiment
