#include "experiment/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "experiment/config_error.hpp"
#include "experiment/overrides.hpp"
#include "experiment/load.hpp"

namespace dlsim::experiment {
namespace {

std::string key_of(const std::string& set) { return set.substr(0, set.find('=')); }

// "sweep variant 3 (key=value, ...)"
std::string describe_variant(const std::vector<std::string>& overrides, std::size_t index) {
  std::string which = "sweep variant " + std::to_string(index);
  if (!overrides.empty()) {
    which += " (";
    for (std::size_t i = 0; i < overrides.size(); ++i) which += (i ? ", " : "") + overrides[i];
    which += ")";
  }
  return which;
}

// Every point of the scenario is infeasible (training scenarios only).
bool nothing_runs(const Scenario& s) {
  return s.kind() == "training" && s.infeasible.size() == s.node_counts().size() * s.plans().size();
}
std::string value_of(const std::string& set) { return set.substr(set.find('=') + 1); }

}  // namespace

void for_each_on_threads(std::size_t count, int threads, bool stop_on_error, const std::function<void(std::size_t)>& task) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&] {
    for (std::size_t k = next++; k < count && !(stop_on_error && failed); k = next++) {
      try {
        task(k);
      } catch (...) {
        errors[k] = std::current_exception();
        failed = true;
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = std::min<std::size_t>(threads > 0 ? static_cast<std::size_t>(threads) : cores, count);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

std::vector<std::vector<std::string>> grid_variants(const std::vector<SweepAxis>& axes) {
  std::set<std::string> keys;
  for (const SweepAxis& a : axes) {
    if (a.key.empty()) throw ConfigError({"sweep", 0, 0}, "", "an axis has no key");
    if (a.values.empty()) throw ConfigError({"sweep", 0, 0}, a.key, "the axis has no values");
    if (!keys.insert(a.key).second) throw ConfigError({"sweep", 0, 0}, a.key, "the key is swept twice");
  }
  std::vector<std::vector<std::string>> variants{{}};
  for (const SweepAxis& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& v : variants) {
      for (const std::string& value : a.values) {
        next.push_back(v);
        next.back().push_back(a.key + "=" + value);
      }
    }
    variants = std::move(next);
  }
  return variants;
}

Scenario load_variant(const SweepSource& source, const std::vector<std::string>& overrides, std::size_t index) {
  std::vector<std::string> sets = source.set_arguments;
  sets.insert(sets.end(), overrides.begin(), overrides.end());
  try {
    // A variant none of whose points can run is rows with the reasons, not an error
    // (load_variants rejects a sweep where no variant can run at all).
    LoadOptions options;
    options.keep_infeasible = true;
    Scenario s = source.path.empty() ? load_scenario_text(source.text, source.name, sets, source.base_dir, options)
                                     : load_scenario(source.path, sets, options);
    s.sweep.variants = {};  // a variant is one run: the scenario's own variant sweep is set aside
    return s;
  } catch (const ConfigError& e) {
    const std::string which = describe_variant(overrides, index);
    // Not "--set ..." when the value came from the file's sweep section, not the command line.
    std::vector<Override> written, typed;
    for (const std::string& o : overrides) written.push_back(parse_set_argument(o));
    for (const std::string& o : source.set_arguments) typed.push_back(parse_set_argument(o));
    const ConfigError located = located_in_file(e, written, typed, source.path.empty() ? source.name : source.path);
    throw ConfigError(located.where(), located.key_path(), located.message() + " [in " + which + "]");
  }
}

std::vector<Scenario> load_variants(const SweepSource& source, const std::vector<std::vector<std::string>>& variants,
                                    int threads) {
  std::vector<std::optional<Scenario>> loaded(variants.size());
  // Every variant is tried, so that the error reported is the first bad variant's by index.
  for_each_on_threads(variants.size(), threads, false, [&](std::size_t v) { loaded[v].emplace(load_variant(source, variants[v], v)); });
  std::vector<Scenario> scenarios;
  scenarios.reserve(variants.size());
  for (auto& s : loaded) scenarios.push_back(std::move(*s));
  // Infeasible variants are rows with their reasons; a sweep where nothing can run is an error,
  // the first variant's, as a single run's would be.
  if (!scenarios.empty() && std::all_of(scenarios.begin(), scenarios.end(), nothing_runs)) {
    const ConfigError e = scenarios.front().infeasible.front().error();
    throw ConfigError(e.where(), e.key_path(), e.message() + " [in " + describe_variant(variants.front(), 0) + "]");
  }
  return scenarios;
}

void check_variants(const SweepSource& source, const std::vector<std::vector<std::string>>& variants, int threads) {
  // Tasks start in index order and none starts after an error, so the error rethrown (the
  // lowest index that failed) is the first bad variant's, whatever the thread count.
  for_each_on_threads(variants.size(), threads, true, [&](std::size_t v) { load_variant(source, variants[v], v); });
}

void run_variants(const std::vector<Scenario>& scenarios, const std::vector<std::size_t>& todo, int threads,
                  const sim::InterruptFlag* interrupt, const std::function<void(std::size_t, Results&&)>& finished) {
  std::mutex report;
  for_each_on_threads(todo.size(), threads, true, [&](std::size_t k) {
    sim::check_interrupt(interrupt);
    Results r = run(scenarios[todo[k]], interrupt);
    const std::lock_guard<std::mutex> lock(report);
    finished(todo[k], std::move(r));
  });
}

Table stack_variants(const std::vector<std::vector<std::string>>& variants, const std::vector<std::size_t>& indices,
                     const std::vector<const Table*>& tables) {
  Table out;
  out.columns.push_back({"sweep_variant", "", "index of the sweep variant", TableColumn::Type::integer, {}, {}});
  const std::vector<std::string>& first = variants.front();
  std::set<std::string> result_names;
  if (!tables.empty()) {
    for (const TableColumn& c : tables.front()->columns) result_names.insert(c.name);
  }
  for (const std::string& set : first) {
    // A swept key is its own column; "set:<key>" when a result column has its name ("seed").
    const std::string key = key_of(set);
    out.columns.push_back({result_names.count(key) ? "set:" + key : key, "", "swept value of " + key, TableColumn::Type::text, {}, {}});
  }
  const std::size_t fixed = out.columns.size();
  if (tables.empty()) return out;
  for (const TableColumn& c : tables.front()->columns) out.columns.push_back({c.name, c.unit, c.description, c.type, {}, {}});
  for (std::size_t k = 0; k < tables.size(); ++k) {
    const std::size_t v = indices[k];
    const Table& t = *tables[k];
    const auto differ = [v] { return std::runtime_error("sweep variant " + std::to_string(v) + " has other result columns than the first"); };
    if (t.columns.size() + fixed != out.columns.size()) throw differ();
    for (std::size_t row = 0; row < t.rows(); ++row) {
      out.columns[0].numbers.push_back(static_cast<double>(v));
      for (std::size_t a = 0; a < first.size(); ++a) out.columns[1 + a].texts.push_back(value_of(variants[v][a]));
    }
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      TableColumn& to = out.columns[fixed + c];
      const TableColumn& from = t.columns[c];
      if (from.name != to.name || from.type != to.type) throw differ();
      to.numbers.insert(to.numbers.end(), from.numbers.begin(), from.numbers.end());
      to.texts.insert(to.texts.end(), from.texts.begin(), from.texts.end());
    }
  }
  return out;
}

SweepResults run_sweep_variants(const SweepSource& source, const std::vector<std::vector<std::string>>& variants, int threads,
                       const sim::InterruptFlag* interrupt) {
  SweepResults out;
  out.variants = variants;
  const std::vector<Scenario> scenarios = load_variants(source, variants, threads);
  std::vector<Results> results(scenarios.size());
  std::vector<std::size_t> all(scenarios.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  run_variants(scenarios, all, threads, interrupt, [&results](std::size_t v, Results&& r) { results[v] = std::move(r); });
  std::vector<const Table*> tables;
  for (const Results& r : results) tables.push_back(&r.table);
  out.kind = results.front().kind;
  out.table = stack_variants(out.variants, all, tables);
  return out;
}

SweepResults run_sweep(const SweepSource& source, const std::vector<SweepAxis>& axes, int threads,
                       const sim::InterruptFlag* interrupt) {
  return run_sweep_variants(source, grid_variants(axes), threads, interrupt);
}

}  // namespace dlsim::experiment
