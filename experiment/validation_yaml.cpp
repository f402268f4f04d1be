#include "experiment/validation_yaml.hpp"

#include <charconv>
#include <cmath>
#include <utility>

namespace dlsim::experiment {
namespace {

// Units a published figure may be given in: factor to SI and the dimension it measures.
const std::vector<std::pair<std::string, PublishedUnit>>& units() {
  static const std::vector<std::pair<std::string, PublishedUnit>> table{
      {"images/s", {1, "samples/s"}},  {"samples/s", {1, "samples/s"}}, {"sequences/s", {1, "samples/s"}},
      {"tokens/s", {1, "tokens/s"}},   {"s", {1, "s"}},                 {"ms", {1e-3, "s"}},
      {"minutes", {60, "s"}},          {"hours", {3600, "s"}},          {"days", {86400, "s"}},
      {"TFLOP/s", {1e12, "FLOP/s"}},   {"PFLOP/s", {1e15, "FLOP/s"}},   {"GB/s", {1e9, "B/s"}},
      {"TB/s", {1e12, "B/s"}},         {"Gbps", {1e9 / 8, "B/s"}},      {"GiB", {1073741824.0, "B"}},
      {"%", {0.01, "1"}},              {"x", {1, "1"}},                 {"USD", {1, "USD"}},
      {"USD/h", {1, "USD/h"}},
  };
  return table;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A number at the start of `text` (after spaces); the rest is returned in `rest`.
std::optional<double> leading_number(const std::string& text, std::string& rest) {
  const std::string t = trim(text);
  double v = 0;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  rest = trim(std::string(end, last));
  return v;
}

PublishedValue parse_published(const YAML::Node& node, const std::string& path, const Source& source) {
  const auto fail = [&](const std::string& why) -> PublishedValue {
    throw ConfigError(source.locate(node, path), path,
                      why + "; expected '<number> <unit>', a range '[low, high] <unit>' or a bound '>= <number> <unit>' / "
                            "'<= <number> <unit>' (quote ranges and bounds in YAML)");
  };
  if (!node.IsScalar()) return fail("expected text, got " + std::string(node.IsSequence() ? "a list" : "a mapping"));
  const std::string text = trim(node.Scalar());
  PublishedValue p;
  std::string rest;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    const auto comma = text.find(',');
    if (close == std::string::npos || comma == std::string::npos || comma > close) return fail("'" + text + "' is not a range");
    std::string after_low, after_high;
    const auto low = leading_number(text.substr(1, comma - 1), after_low);
    const auto high = leading_number(text.substr(comma + 1, close - comma - 1), after_high);
    if (!low || !high || !after_low.empty() || !after_high.empty()) return fail("'" + text + "': the range needs two numbers");
    if (*low > *high) return fail("'" + text + "': the range's low end is above its high end");
    p.kind = PublishedValue::Kind::range;
    p.low = *low;
    p.high = *high;
    rest = trim(text.substr(close + 1));
  } else if (text.rfind(">=", 0) == 0 || text.rfind("<=", 0) == 0) {
    const auto v = leading_number(text.substr(2), rest);
    if (!v) return fail("'" + text + "': the bound needs a number");
    p.kind = text[0] == '>' ? PublishedValue::Kind::at_least : PublishedValue::Kind::at_most;
    p.low = p.high = *v;
  } else {
    const auto v = leading_number(text, rest);
    if (!v) return fail("'" + text + "' does not start with a number");
    if (*v == 0) return fail("'" + text + "': a published value of 0 has no relative error");
    p.low = p.high = *v;
  }
  if (rest.empty()) return fail("'" + text + "' has no unit (one of " + published_units_list() + ")");
  const auto unit = published_unit(rest);
  if (!unit) return fail("unknown unit '" + rest + "' (one of " + published_units_list() + ")");
  p.text = text;
  p.unit = rest;
  p.factor = unit->factor;
  p.dimension = unit->dimension;
  p.low *= p.factor;
  p.high *= p.factor;
  return p;
}

ValidationMetric read_metric(const YAML::Node& node, const std::string& path, const Source& source, bool operand);

ValidationMetric read_column_metric(MapReader& m, ValidationMetric metric) {
  const YAML::Node where = m.node("where");
  if (where.IsDefined() && !where.IsNull()) {
    if (!where.IsMap()) m.fail("where", "expected a mapping of column names to values, e.g. {nodes: 4}");
    for (const auto& entry : where) {
      const std::string column = entry.first.Scalar();
      if (!entry.second.IsScalar()) {
        throw ConfigError(m.source().locate(entry.second, m.path_of("where") + "." + column), m.path_of("where") + "." + column,
                          "expected one value (a number or text) to select rows by");
      }
      metric.where.emplace_back(column, entry.second.Scalar());
    }
  }
  m.finish();
  return metric;
}

ValidationMetric read_metric(const YAML::Node& node, const std::string& path, const Source& source, bool operand) {
  const std::vector<std::pair<const char*, ValidationMetric::Kind>> forms{
      {"column", ValidationMetric::Kind::column},
      {"ratio", ValidationMetric::Kind::ratio},
      {"change", ValidationMetric::Kind::change},
      {"saving", ValidationMetric::Kind::saving},
      {"megatron_tflops_per_gpu", ValidationMetric::Kind::megatron_tflops_per_gpu}};
  const std::string allowed = operand ? "{column: NAME, where: {...}}"
                                      : "one of {column: NAME, where: {...}}, {ratio: [A, B]}, {change: [A, B]}, "
                                        "{saving: [A, B]}, {megatron_tflops_per_gpu: {where: {...}}}";
  if (!node.IsMap()) throw ConfigError(source.locate(node, path), path, "expected " + allowed);
  MapReader m(node, path, source);
  ValidationMetric metric;
  metric.key_path = path;
  metric.where_written = source.locate(node, path);
  int given = 0;
  for (const auto& [key, kind] : forms) {
    if (m.has(key)) {
      ++given;
      metric.kind = kind;
    }
  }
  if (given != 1 || (operand && metric.kind != ValidationMetric::Kind::column)) {
    throw ConfigError(metric.where_written, path, "expected " + allowed);
  }
  switch (metric.kind) {
    case ValidationMetric::Kind::column:
      metric.column = m.text("column");
      if (metric.column.empty()) m.fail("column", "expected the name of a results column");
      return read_column_metric(m, std::move(metric));
    case ValidationMetric::Kind::megatron_tflops_per_gpu: {
      const YAML::Node inner = m.node("megatron_tflops_per_gpu");
      m.finish();
      if (inner.IsNull()) return metric;
      if (!inner.IsMap()) throw ConfigError(source.locate(inner, path + ".megatron_tflops_per_gpu"), path + ".megatron_tflops_per_gpu",
                                            "expected {} or {where: {...}}");
      MapReader w(inner, path + ".megatron_tflops_per_gpu", source, true);
      return read_column_metric(w, std::move(metric));
    }
    default: {
      const char* key = metric.kind == ValidationMetric::Kind::ratio    ? "ratio"
                        : metric.kind == ValidationMetric::Kind::change ? "change"
                                                                        : "saving";
      const YAML::Node pair = m.node(key);
      m.finish();
      const std::string pair_path = path + "." + key;
      if (!pair.IsSequence() || pair.size() != 2) {
        throw ConfigError(source.locate(pair, pair_path), pair_path, "expected a list of two metrics [A, B], each {column: NAME, where: {...}}");
      }
      for (std::size_t i = 0; i < 2; ++i) {
        metric.operands.push_back(read_metric(pair[i], pair_path + "[" + std::to_string(i) + "]", source, true));
      }
      return metric;
    }
  }
}

}  // namespace

std::optional<PublishedUnit> published_unit(const std::string& unit) {
  for (const auto& [name, u] : units()) {
    if (name == unit) return u;
  }
  return std::nullopt;
}

std::string published_units_list() {
  std::string list;
  for (const auto& [name, u] : units()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

ValidationSpec read_validation(MapReader& v) {
  ValidationSpec spec;
  spec.source = v.text("source");
  if (spec.source.empty()) v.fail("source", "name the publication the checks come from");
  spec.group = v.optional_text("group").value_or(spec.source);
  spec.reference = v.choice("reference", {"measured", "claims"});
  spec.fast = v.boolean("fast", false);
  // validation.requires is read by validate_folder before the scenario loads; here its shape.
  const YAML::Node requires_node = v.node("requires");
  if (requires_node.IsDefined() && !requires_node.IsNull()) {
    bool paths = requires_node.IsSequence();
    for (std::size_t i = 0; paths && i < requires_node.size(); ++i) paths = requires_node[i].IsScalar() && !requires_node[i].Scalar().empty();
    if (!paths) v.fail("requires", "expected a list of file paths (relative to the scenario's folder)");
  }
  const YAML::Node checks = v.node("checks");
  if (!checks.IsDefined()) v.fail_missing("checks", "the published figures to compare with: a list of {id, quantity, published, predicted}");
  if (!checks.IsSequence() || checks.size() == 0) v.fail("checks", "expected a non-empty list of checks");
  v.finish();
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const std::string path = v.path_of("checks") + "[" + std::to_string(i) + "]";
    if (!checks[i].IsMap()) throw ConfigError(v.source().locate(checks[i], path), path, "expected a mapping {id, quantity, published, predicted}");
    MapReader c(checks[i], path, v.source());
    ValidationCheck check;
    check.key_path = path;
    check.where_written = v.source().locate(checks[i], path);
    check.id = c.text("id");
    check.quantity = c.text("quantity");
    if (check.id.empty()) c.fail("id", "expected the measured.yaml record id or a claim's label");
    if (!c.has("published")) c.fail_missing("published", "the published figure, e.g. 938 images/s");
    check.published = parse_published(c.node("published"), c.path_of("published"), v.source());
    if (!c.has("predicted")) c.fail_missing("predicted", "the result to compare, e.g. {column: samples_per_second, where: {nodes: 1}}");
    check.predicted = read_metric(c.node("predicted"), c.path_of("predicted"), v.source(), false);
    check.explanation = c.optional_text("explanation").value_or("");
    c.finish();
    for (const ValidationCheck& earlier : spec.checks) {
      if (earlier.id == check.id) c.fail("id", "the id '" + check.id + "' is checked twice in this scenario");
    }
    spec.checks.push_back(std::move(check));
  }
  return spec;
}

}  // namespace dlsim::experiment
