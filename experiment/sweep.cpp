#include "experiment/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <set>
#include <thread>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"

namespace dlsim::experiment {
namespace {

Scenario load_variant(const SweepSource& source, const std::vector<std::string>& grid, std::size_t index) {
  std::vector<std::string> sets = source.set_arguments;
  sets.insert(sets.end(), grid.begin(), grid.end());
  try {
    return source.path.empty() ? load_scenario_text(source.text, source.name, sets, source.base_dir)
                               : load_scenario(source.path, sets);
  } catch (const ConfigError& e) {
    std::string which = "sweep variant " + std::to_string(index);
    for (const auto& g : grid) which += (which.back() == ')' ? ", " : " (") + g;
    if (!grid.empty()) which += ")";
    throw ConfigError(e.where(), e.key_path(), e.message() + " [in " + which + "]");
  }
}

// The variants' tables stacked, after the variant and axis columns.
Table stack(const std::vector<SweepAxis>& axes, const std::vector<std::vector<std::string>>& variants,
            const std::vector<Results>& results) {
  Table out;
  out.columns.push_back({"variant", "", "index of the sweep variant", TableColumn::Type::integer, {}, {}});
  for (const SweepAxis& a : axes) out.columns.push_back({a.key, "", "swept value of " + a.key, TableColumn::Type::text, {}, {}});
  const std::size_t fixed = out.columns.size();
  for (const TableColumn& c : results.front().table.columns) out.columns.push_back({c.name, c.unit, c.description, c.type, {}, {}});
  for (std::size_t v = 0; v < results.size(); ++v) {
    const Table& t = results[v].table;
    if (t.columns.size() + fixed != out.columns.size()) {
      throw std::runtime_error("sweep variant " + std::to_string(v) + " has other result columns than variant 0");
    }
    for (std::size_t row = 0; row < t.rows(); ++row) {
      out.columns[0].numbers.push_back(static_cast<double>(v));
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const std::string& set = variants[v][a];
        out.columns[1 + a].texts.push_back(set.substr(set.find('=') + 1));
      }
    }
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      TableColumn& to = out.columns[fixed + c];
      const TableColumn& from = t.columns[c];
      if (from.name != to.name) throw std::runtime_error("sweep variant " + std::to_string(v) + " has other result columns than variant 0");
      to.numbers.insert(to.numbers.end(), from.numbers.begin(), from.numbers.end());
      to.texts.insert(to.texts.end(), from.texts.begin(), from.texts.end());
    }
  }
  return out;
}

}  // namespace

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

SweepResults run_sweep(const SweepSource& source, const std::vector<SweepAxis>& axes, int threads,
                       const sim::InterruptFlag* interrupt) {
  SweepResults out;
  out.variants = grid_variants(axes);
  std::vector<Scenario> scenarios;
  for (std::size_t v = 0; v < out.variants.size(); ++v) scenarios.push_back(load_variant(source, out.variants[v], v));

  std::vector<Results> results(scenarios.size());
  std::vector<std::exception_ptr> errors(scenarios.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&] {
    for (std::size_t v = next++; v < scenarios.size() && !failed; v = next++) {
      try {
        sim::check_interrupt(interrupt);
        results[v] = run(scenarios[v], interrupt);
      } catch (...) {
        errors[v] = std::current_exception();
        failed = true;  // the others stop taking variants
      }
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = std::min<std::size_t>(threads > 0 ? static_cast<std::size_t>(threads) : cores, scenarios.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  out.kind = results.front().kind;
  out.table = stack(axes, out.variants, results);
  return out;
}

}  // namespace dlsim::experiment
