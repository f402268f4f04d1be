#include "experiment/sweep_store.hpp"

#include <chrono>
#include <filesystem>

#include "experiment/atomic_file.hpp"
#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/progress.hpp"
#include "experiment/results.hpp"
#include "experiment/sweep.hpp"
#include "experiment/sweep_journal.hpp"
#include "experiment/sweep_spec.hpp"
#include "experiment/writers.hpp"

namespace dlsim::experiment {
namespace {

std::uint64_t fingerprint(const Scenario& base, const std::vector<std::vector<std::string>>& variants) {
  std::uint64_t h = fnv1a(base.input_yaml);
  for (const auto& v : variants) {
    for (const std::string& set : v) h = fnv1a(set + "\n", h);
    h = fnv1a(";", h);
  }
  return h;
}

// The store: the finished variants' rows in variant order, and the list of variants.
void write_store(const std::string& path, const Scenario& base, const std::vector<std::vector<std::string>>& variants,
                 const std::map<std::uint64_t, Table>& finished) {
  Results r;
  r.kind = base.kind();
  r.dlsim_version = dlsim_version();
  r.seed = base.seed;
  r.scenario_source = base.source;
  r.scenario_yaml = base.input_yaml;
  r.resolved_yaml = resolved_yaml(base);
  std::vector<std::size_t> indices;
  std::vector<const Table*> tables;
  for (const auto& [v, t] : finished) {
    indices.push_back(static_cast<std::size_t>(v));
    tables.push_back(&t);
  }
  r.table = stack_variants(variants, indices, tables);
  Table list;
  TableColumn index{"sweep_variant", "", "index of the sweep variant", TableColumn::Type::integer, {}, {}};
  TableColumn overrides{"overrides", "", "the variant's overrides of the scenario (key=value; ...)", TableColumn::Type::text, {}, {}};
  TableColumn done{"finished", "", "1 when its results are in /results", TableColumn::Type::integer, {}, {}};
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::string text;
    for (const std::string& set : variants[v]) text += (text.empty() ? "" : "; ") + set;
    index.numbers.push_back(static_cast<double>(v));
    overrides.texts.push_back(text);
    done.numbers.push_back(finished.count(v) ? 1 : 0);
  }
  list.columns = {index, overrides, done};
  r.extra_tables.emplace_back("variants", std::move(list));
  write_hdf5(path, r);
}

}  // namespace

std::string default_store_path(const std::string& scenario) {
  return "results/" + std::filesystem::path(scenario).stem().string() + "-sweep.h5";
}

SweepStoreReport run_sweep_store(const SweepStoreOptions& o, const MpiSession* mpi, std::ostream& err) {
  const Scenario base = load_scenario(o.scenario, o.set_arguments);
  if (base.sweep.variants.empty()) {
    throw ConfigError({o.scenario, 0, 0}, "sweep",
                      "nothing to sweep: give sweep.grid, sweep.zip or sweep.random (see scenarios/README.md, \"Sweeps\"), or use 'dlsim run'");
  }
  const std::vector<std::vector<std::string>> variants = expand(base.sweep.variants);
  SweepSource source;
  source.path = o.scenario;
  source.set_arguments = o.set_arguments;
  SweepStoreReport report;
  report.variants = variants.size();
  report.kind = base.kind();
  report.store = !o.store.empty() ? o.store : !base.output.results.empty() ? base.output.results : default_store_path(o.scenario);
  if (is_standard_output(report.store)) {
    throw ConfigError({o.store.empty() ? o.scenario : "--output -", 0, 0}, o.store.empty() ? "output.results" : "",
                      "a sweep's store is a file it rewrites as variants finish and resumes from (its journal sits "
                      "beside it): '-' (standard output) cannot be one; give a file path");
  }
  report.journal = report.store + ".journal";
  if (mpi != nullptr && mpi->rank() != 0) {
    report.ran = mpi_work(*mpi, source, variants);  // loads what it is given (rank 0 validated them all)
    return report;
  }
  // Every variant is loaded, so validated, before any runs; on all cores (under MPI the other
  // ranks wait without spinning meanwhile).
  const std::vector<Scenario> scenarios = load_variants(source, variants, mpi != nullptr ? 0 : o.threads);

  SweepJournal journal(report.journal, fingerprint(base, variants), variants.size(), o.resume);
  report.resumed = journal.finished().size();
  std::vector<std::size_t> todo;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    if (!journal.finished().count(v)) todo.push_back(v);
  }
  ProgressBar bar(err, "sweep", static_cast<double>(variants.size()), o.progress);
  bar.update(static_cast<double>(report.resumed));
  auto last_write = std::chrono::steady_clock::now();
  const auto finished = [&](std::size_t v, Table&& table) {
    journal.append(v, std::move(table));
    ++report.ran;
    bar.update(static_cast<double>(journal.finished().size()));
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_write).count() >= o.write_interval_s) {
      write_store(report.store, base, variants, journal.finished());
      last_write = now;
    }
  };
  if (mpi != nullptr && mpi->size() > 1) {
    mpi_coordinate(*mpi, scenarios, todo, finished);
  } else {
    run_variants(scenarios, todo, o.threads, nullptr, [&finished](std::size_t v, Results&& r) { finished(v, std::move(r.table)); });
  }
  bar.finish();
  write_store(report.store, base, variants, journal.finished());
  if (journal.finished().size() == variants.size()) {
    journal.remove();  // the store is complete: nothing left to resume
    report.journal.clear();
  }
  return report;
}

}  // namespace dlsim::experiment
