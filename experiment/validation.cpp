#include "experiment/validation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "experiment/load.hpp"
#include "experiment/results.hpp"
#include "experiment/scenario.hpp"
#include "experiment/sweep.hpp"
#include "experiment/sweep_spec.hpp"

namespace dlsim::experiment {
namespace {

[[noreturn]] void fail(const ValidationMetric& m, const std::string& message) {
  throw ConfigError(m.where_written, m.key_path, message);
}

const TableColumn* find_column(const Table& table, const std::string& name) {
  for (const TableColumn& c : table.columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string column_names(const Table& table) {
  std::string names;
  for (const TableColumn& c : table.columns) names += (names.empty() ? "" : ", ") + c.name;
  return names;
}

std::string cell_text(const TableColumn& c, std::size_t row) {
  if (c.type == TableColumn::Type::text) return c.texts[row];
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", c.numbers[row]);
  return buf;
}

bool cell_equals(const TableColumn& c, std::size_t row, const std::string& value) {
  if (c.type == TableColumn::Type::text) return c.texts[row] == value;
  try {
    std::size_t used = 0;
    const double v = std::stod(value, &used);
    return used == value.size() && c.numbers[row] == v;
  } catch (const std::exception&) {
    return false;
  }
}

// The one row of `table` whose columns equal the metric's `where` values.
std::size_t select_row(const ValidationMetric& m, const Table& table) {
  std::vector<const TableColumn*> columns;
  for (const auto& [name, value] : m.where) {
    const TableColumn* c = find_column(table, name);
    if (!c) fail(m, "where: the results have no column '" + name + "' (columns: " + column_names(table) + ")");
    columns.push_back(c);
  }
  std::vector<std::size_t> matches;
  for (std::size_t r = 0; r < table.rows(); ++r) {
    bool all = true;
    for (std::size_t k = 0; k < columns.size() && all; ++k) all = cell_equals(*columns[k], r, m.where[k].second);
    if (all) matches.push_back(r);
  }
  if (matches.size() == 1) return matches.front();
  std::string where;
  for (const auto& [name, value] : m.where) where += (where.empty() ? "" : ", ") + name + " = " + value;
  if (where.empty()) where = "no condition";
  std::string rows;
  for (std::size_t r = 0; r < std::min<std::size_t>(table.rows(), 12); ++r) {
    std::string cells;
    for (const auto& [name, value] : m.where) cells += (cells.empty() ? "" : ", ") + name + " = " + cell_text(*find_column(table, name), r);
    if (!cells.empty()) rows += (rows.empty() ? "" : "; ") + cells;
  }
  fail(m, "where (" + where + ") selects " + std::to_string(matches.size()) + " of the " + std::to_string(table.rows()) +
              " result rows; it must select exactly one" + (rows.empty() ? "" : " (rows: " + rows + ")"));
}

// A column's unit as a dimension and the factor to SI.
std::pair<std::string, double> column_dimension(const TableColumn& c) {
  if (c.unit == "TFLOP/s") return {"FLOP/s", 1e12};
  if (c.unit.empty()) return {"1", 1};
  return {c.unit, 1};
}

double column_value(const ValidationMetric& m, const Table& table, const std::string& column) {
  const TableColumn* c = find_column(table, column);
  if (!c) fail(m, "the results have no column '" + column + "' (columns: " + column_names(table) + ")");
  if (c->type == TableColumn::Type::text) fail(m, "column '" + column + "' holds text, not a number");
  return c->numbers[select_row(m, table)] * column_dimension(*c).second;
}

std::string metric_dimension(const ValidationMetric& m, const Table& table) {
  switch (m.kind) {
    case ValidationMetric::Kind::column: {
      const TableColumn* c = find_column(table, m.column);
      return c ? column_dimension(*c).first : "";
    }
    case ValidationMetric::Kind::megatron_tflops_per_gpu: return "FLOP/s";
    default: return "1";
  }
}

std::string format_number(double v) {
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 100 || a == 0) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else if (a >= 1) {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

std::string format_error(const ValidationRow& r) {
  if (r.error == 0 && r.published.kind != PublishedValue::Kind::value) return "inside";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * r.error);
  return buf;
}

std::string shown_explanation(const ValidationRow& r) {
  return std::fabs(r.error) > kExplainAbove ? r.explanation : "";
}

// Rows summed up by a key (reference or group), in order of first appearance.
struct Summary {
  std::string key;
  int points = 0, within = 0;  // within: |error| <= kExplainAbove
  double sum = 0;              // of |error|
  double mape() const { return points ? sum / points : std::numeric_limits<double>::quiet_NaN(); }
};
std::vector<Summary> summarize(const std::vector<ValidationRow>& rows, std::string ValidationRow::*key) {
  std::vector<Summary> out;
  for (const ValidationRow& r : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Summary& s) { return s.key == r.*key; });
    if (it == out.end()) it = out.insert(out.end(), Summary{r.*key});
    ++it->points;
    it->sum += std::fabs(r.error);
    it->within += std::fabs(r.error) <= kExplainAbove;
  }
  return out;
}
Summary summary_of(const std::vector<ValidationRow>& rows, const std::string& reference) {
  for (const Summary& s : summarize(rows, &ValidationRow::reference)) {
    if (s.key == reference) return s;
  }
  return Summary{reference};
}

std::string summary_line(const char* what, const Summary& s) {
  char buf[256];
  if (s.points == 0) {
    std::snprintf(buf, sizeof buf, "%s: none", what);
  } else {
    std::snprintf(buf, sizeof buf, "%s: mean absolute percentage error %.1f%% over %d points (%d within 15%%)", what, 100 * s.mape(),
                  s.points, s.within);
  }
  return buf;
}

// The first file of the scenario's validation.requires that does not exist ("" when all do, or
// when it has none). Read before the scenario is loaded: loading would fail on the missing file.
std::string missing_requirement(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception&) {
    return "";  // load_scenario reports it, with its position
  }
  if (!root.IsMap() || !root["validation"].IsMap()) return "";
  const YAML::Node files = root["validation"]["requires"];
  if (!files.IsSequence()) return "";
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (const auto& f : files) {
    if (f.IsScalar() && !std::filesystem::exists(dir / f.Scalar())) return f.Scalar();
  }
  return "";
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

std::string markdown_cell(std::string text) {
  for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
  return text;
}

}  // namespace

double megatron_flops_per_iteration(double batch, double sequence, double layers, double hidden, double vocab) {
  return 96.0 * batch * sequence * layers * hidden * hidden *
         (1.0 + sequence / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

double evaluate_metric(const ValidationMetric& m, const Scenario& scenario, const Table& table) {
  switch (m.kind) {
    case ValidationMetric::Kind::column: return column_value(m, table, m.column);
    case ValidationMetric::Kind::megatron_tflops_per_gpu: {
      if (!scenario.workload.decoder) {
        fail(m, "megatron_tflops_per_gpu needs a decoder-only transformer (a zoo GPT/Llama model or a transformer: "
                "definition); the workload's model is " + scenario.workload.model_name);
      }
      const models::DecoderConfig& d = *scenario.workload.decoder;
      const double batch = column_value(m, table, "global_batch");
      const double iteration = column_value(m, table, "iteration_time");
      const double accelerators = column_value(m, table, "accelerators");
      return megatron_flops_per_iteration(batch, scenario.workload.sequence_length, d.layers, d.hidden, d.vocab) /
             (iteration * accelerators);
    }
    default: {
      const double a = evaluate_metric(m.operands[0], scenario, table);
      const double b = evaluate_metric(m.operands[1], scenario, table);
      if (b == 0) fail(m.operands[1], "the denominator is 0");
      if (m.kind == ValidationMetric::Kind::ratio) return a / b;
      if (m.kind == ValidationMetric::Kind::change) return a / b - 1;
      return 1 - a / b;
    }
  }
}

double validation_error(const PublishedValue& p, double predicted) {
  switch (p.kind) {
    case PublishedValue::Kind::value: return (predicted - p.low) / p.low;
    case PublishedValue::Kind::at_least: return predicted >= p.low ? 0 : (predicted - p.low) / std::fabs(p.low);
    case PublishedValue::Kind::at_most: return predicted <= p.high ? 0 : (predicted - p.high) / std::fabs(p.high);
    case PublishedValue::Kind::range:
      if (predicted < p.low) return (predicted - p.low) / std::fabs(p.low);
      if (predicted > p.high) return (predicted - p.high) / std::fabs(p.high);
      return 0;
  }
  return 0;
}

std::vector<ValidationRow> compare_checks(const Scenario& scenario, const Table& table, const std::string& file) {
  std::vector<ValidationRow> rows;
  for (const ValidationCheck& check : scenario.validation.checks) {
    const std::string dimension = metric_dimension(check.predicted, table);
    if (!dimension.empty() && dimension != check.published.dimension) {
      throw ConfigError(check.where_written, check.key_path + ".published",
                        "the published unit '" + check.published.unit + "' measures " + check.published.dimension +
                            " but the prediction is in " + dimension);
    }
    ValidationRow r;
    r.scenario = file;
    r.source = scenario.validation.source;
    r.group = scenario.validation.group;
    r.reference = scenario.validation.reference;
    r.id = check.id;
    r.quantity = check.quantity;
    r.published = check.published;
    r.predicted = evaluate_metric(check.predicted, scenario, table);
    if (!std::isfinite(r.predicted)) {
      throw ConfigError(check.where_written, check.key_path + ".predicted",
                        "the prediction is not a number (a column that does not apply to this row?)");
    }
    r.error = validation_error(check.published, r.predicted);
    r.explanation = check.explanation;
    rows.push_back(std::move(r));
  }
  return rows;
}

ValidationReport validate_folder(const std::string& folder, const ValidateOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw ConfigError({folder, 0, 0}, "", "not a folder of scenarios (missing or unreadable)");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;
    bool kept = options.only.empty();
    for (const std::string& prefix : options.only) kept = kept || name.rfind(prefix, 0) == 0;
    if (kept) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw ConfigError({folder, 0, 0}, "", "no scenario files (*.yaml) to validate here");

  std::vector<std::vector<ValidationRow>> rows(files.size());
  std::vector<bool> ran(files.size(), false);
  std::vector<std::string> skipped(files.size());
  std::mutex report;
  double done = 0;
  // One file: skipped when its data is absent, else loaded, run (if it has checks that the
  // options keep) and compared.
  const auto validate_file = [&](std::size_t k) {
    const std::string path = (fs::path(folder) / files[k]).string();
    skipped[k] = missing_requirement(path);
    if (!skipped[k].empty()) return;
    const Scenario scenario = load_scenario(path);
    if (scenario.validation.empty() || (options.fast_only && !scenario.validation.fast)) return;
    Table table;
    if (!scenario.sweep.variants.empty()) {
      SweepSource source;
      source.path = path;
      table = run_sweep_variants(source, expand(scenario.sweep.variants), 1, options.interrupt).table;
    } else {
      table = run(scenario, options.interrupt).table;
    }
    rows[k] = compare_checks(scenario, table, files[k]);
    ran[k] = true;
  };
  for_each_on_threads(files.size(), options.threads, true, [&](std::size_t k) {
    sim::check_interrupt(options.interrupt);
    validate_file(k);
    const std::lock_guard<std::mutex> lock(report);
    done += 1;
    if (options.progress) options.progress(done, static_cast<double>(files.size()));
  });

  ValidationReport out;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (!skipped[k].empty()) out.skipped.push_back(files[k] + " (needs " + skipped[k] + ")");
    out.scenarios += ran[k];
    for (ValidationRow& r : rows[k]) {
      if (std::fabs(r.error) > kExplainAbove && r.explanation.empty()) out.unexplained.push_back(r.scenario + ": " + r.id);
      out.rows.push_back(std::move(r));
    }
  }
  if (out.scenarios == 0 && out.skipped.empty()) {
    throw ConfigError({folder, 0, 0}, "", options.fast_only ? "no scenario here has a validation section with fast: true"
                                                            : "no scenario here has a validation section");
  }
  const Summary measured = summary_of(out.rows, "measured");
  const Summary claims = summary_of(out.rows, "claims");
  out.mape_measured = measured.mape();
  out.measured_points = measured.points;
  out.mape_claims = claims.mape();
  out.claim_points = claims.points;
  return out;
}

std::string format_published(const PublishedValue& p) { return p.text; }

std::string format_in_unit(double value_si, const PublishedValue& p) { return format_number(value_si / p.factor) + " " + p.unit; }

std::string format_validation_text(const ValidationReport& report) {
  std::vector<std::array<std::string, 6>> cells;
  cells.push_back({"id", "quantity", "published", "dlsim", "error", "source"});
  for (const ValidationRow& r : report.rows) {
    cells.push_back({r.id, r.quantity, format_published(r.published), format_in_unit(r.predicted, r.published), format_error(r), r.source});
  }
  std::array<std::size_t, 6> width{};
  for (const auto& row : cells) {
    for (std::size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& row = cells[i];
    for (std::size_t c = 0; c < 6; ++c) {
      out << row[c];
      if (c < 5) out << std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << '\n';
    if (i > 0) {
      const std::string why = shown_explanation(report.rows[i - 1]);
      if (!why.empty()) out << "    why: " << why << '\n';
    }
  }
  out << summary_line("measurements (measured.yaml)", summary_of(report.rows, "measured")) << '\n';
  out << summary_line("claims (published-claims.md)", summary_of(report.rows, "claims")) << '\n';
  for (const std::string& s : report.skipped) out << "skipped, its data is not here: " << s << '\n';
  out << "by group (points, mean absolute percentage error, within 15%):\n";
  for (const Summary& s : summarize(report.rows, &ValidationRow::group)) {
    char line[64];
    std::snprintf(line, sizeof line, "  %4d  %6s  %4d  ", s.points, percent(s.mape()).c_str(), s.within);
    out << line << s.key << '\n';
  }
  return out.str();
}

std::string format_validation_markdown(const ValidationReport& report) {
  std::ostringstream out;
  out << "| source | id | quantity | published | dlsim | error | why they differ |\n";
  out << "|---|---|---|---|---|---|---|\n";
  for (const ValidationRow& r : report.rows) {
    out << "| " << markdown_cell(r.source) << " | " << markdown_cell(r.id) << " | " << markdown_cell(r.quantity) << " | "
        << markdown_cell(format_published(r.published)) << " | " << markdown_cell(format_in_unit(r.predicted, r.published)) << " | "
        << format_error(r) << " | " << markdown_cell(shown_explanation(r)) << " |\n";
  }
  out << "\n";
  out << "- " << summary_line("Measurements (measured.yaml)", summary_of(report.rows, "measured")) << "\n";
  out << "- " << summary_line("Claims (published-claims.md)", summary_of(report.rows, "claims")) << "\n";
  for (const std::string& s : report.skipped) out << "- Skipped, its data is not here: " << s << "\n";
  out << "\n| group | points | mean absolute percentage error | within 15% |\n|---|---|---|---|\n";
  for (const Summary& s : summarize(report.rows, &ValidationRow::group)) {
    out << "| " << markdown_cell(s.key) << " | " << s.points << " | " << percent(s.mape()) << " | " << s.within << " |\n";
  }
  return out.str();
}

Table validation_table(const ValidationReport& report) {
  using T = TableColumn::Type;
  Table t;
  t.columns = {
      {"scenario", "", "scenario file", T::text, {}, {}},
      {"source", "", "publication", T::text, {}, {}},
      {"reference", "", "measured (measured.yaml) or claims (published-claims.md)", T::text, {}, {}},
      {"id", "", "record id or claim label", T::text, {}, {}},
      {"quantity", "", "what is compared", T::text, {}, {}},
      {"published", "", "the published figure as written", T::text, {}, {}},
      {"unit", "", "unit of published_low, published_high and predicted", T::text, {}, {}},
      {"published_low", "", "published value, or the low end of its range or bound (in unit)", T::real, {}, {}},
      {"published_high", "", "published value, or the high end of its range or bound (in unit)", T::real, {}, {}},
      {"predicted", "", "dlsim's prediction (in unit)", T::real, {}, {}},
      {"error", "1", "relative error; 0 inside a published range or bound", T::real, {}, {}},
      {"explanation", "", "why dlsim differs (checks beyond 15%)", T::text, {}, {}},
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const ValidationRow& r : report.rows) {
    const PublishedValue& p = r.published;
    const bool low = p.kind != PublishedValue::Kind::at_most;
    const bool high = p.kind != PublishedValue::Kind::at_least;
    t.columns[0].texts.push_back(r.scenario);
    t.columns[1].texts.push_back(r.source);
    t.columns[2].texts.push_back(r.reference);
    t.columns[3].texts.push_back(r.id);
    t.columns[4].texts.push_back(r.quantity);
    t.columns[5].texts.push_back(p.text);
    t.columns[6].texts.push_back(p.unit);
    t.columns[7].numbers.push_back(low ? p.low / p.factor : nan);
    t.columns[8].numbers.push_back(high ? p.high / p.factor : nan);
    t.columns[9].numbers.push_back(r.predicted / p.factor);
    t.columns[10].numbers.push_back(r.error);
    t.columns[11].texts.push_back(r.explanation);
  }
  return t;
}

}  // namespace dlsim::experiment
