#include "cli/commands.hpp"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <tuple>

#include "experiment/atomic_file.hpp"
#include "experiment/builtin_profiles.hpp"
#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "experiment/progress.hpp"
#include "experiment/results.hpp"
#include "experiment/serving_run.hpp"
#include "experiment/sweep.hpp"
#include "experiment/sweep_spec.hpp"
#include "experiment/trace_writer.hpp"
#include "experiment/units.hpp"
#include "experiment/writers.hpp"
#include "experiment/plan_yaml.hpp"
#include "models/catalog.hpp"
#include "models/dataset_preparation.hpp"
#include "models/storage.hpp"
#include "models/memory_model.hpp"
#include "models/zoo.hpp"
#include "network/collectives.hpp"

namespace dlsim::cli {
namespace {

std::vector<std::string> sets_of(const ScenarioOptions& o) {
  std::vector<std::string> sets = o.set_arguments;
  // --output / --csv are shorthands for overrides, so they get the same validation.
  if (!o.output.empty()) sets.push_back("output.results=" + o.output);
  if (!o.csv.empty()) sets.push_back("output.csv=" + o.csv);
  return sets;
}

// A mistake in --output or --csv names that option, not the --set it stands for.
[[noreturn]] void rethrow_naming_the_option(const experiment::ConfigError& e, const ScenarioOptions& o) {
  for (const auto& [option, key, value] : {std::tuple<const char*, const char*, const std::string&>{"--output", "output.results", o.output},
                                           {"--csv", "output.csv", o.csv}}) {
    if (!value.empty() && e.where().file == std::string("--set ") + key + "=" + value) {
      throw experiment::ConfigError({std::string(option) + " " + value, 0, 0}, e.key_path(), e.message());
    }
  }
  throw e;
}

experiment::Scenario load(const ScenarioOptions& o) {
  try {
    return experiment::load_scenario(o.scenario, sets_of(o));
  } catch (const experiment::ConfigError& e) {
    rethrow_naming_the_option(e, o);
  }
}

// `dlsim collective` without a file: all-reduce from 8 B to 1 GiB on p4d.24xlarge nodes joined
// by one non-blocking switch, as nccl-tests' all_reduce_perf -b 8 -e 1G -f 4 would measure.
const char* const kDefaultCollectiveScenario = R"(cluster:
  instance: aws/p4d.24xlarge
collective:
  operation: all-reduce
  algorithm: auto
  sizes: {from: 8B, to: 1GiB, factor: 4}
sweep:
  nodes: [1, 2, 4]
)";

std::string tflops(double flops) {
  if (flops <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", flops / 1e12);
  return buf;
}

// A node's network as instance types are sold: "400 Gbps", "3200 Gbps" (never Tbps).
std::string gbps(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g Gbps", bytes_per_s * 8 / 1e9);  // 12.5 Gbps stays 12.5
  return buf;
}

// Runs the scenario with a progress bar on standard error when it is a terminal and the run is
// not quiet (cluster jobs or training configurations done; nothing for collectives).
experiment::Results run_with_progress(const ScenarioOptions& o, const experiment::Scenario& scenario) {
  const double total = experiment::progress_total(scenario);
  experiment::ProgressBar bar(std::cerr, experiment::progress_unit(scenario), total,
                              !o.quiet && total > 0 && experiment::stderr_is_terminal());
  if (!bar.enabled()) return experiment::run(scenario);
  try {
    experiment::Results results = experiment::run(scenario, nullptr, [&bar](double done, double) { bar.update(done); });
    bar.finish();
    return results;
  } catch (...) {
    bar.finish();  // end the line before the error is printed
    throw;
  }
}

// "wrote PATH", or what went to standard output.
std::string wrote(const std::string& path, const char* what) {
  return experiment::is_standard_output(path) ? std::string("wrote ") + what + " to standard output" : "wrote " + path;
}

}  // namespace

int run_loaded(std::ostream& stdout_stream, const ScenarioOptions& o, const experiment::Scenario& scenario) {
  // With an output on standard output ("-"), the report goes to standard error.
  std::ostream& out = scenario.output.to_standard_output() ? std::cerr : stdout_stream;
  if (!scenario.output.results.empty()) experiment::preload_hdf5_writer();  // while the simulation runs
  const experiment::Results results = run_with_progress(o, scenario);
  if (!o.quiet && scenario.cluster_sim) {
    out << "dlsim " << results.dlsim_version << ": cluster scenario, " << scenario.cluster_sim->variants.size() << " variant"
        << (scenario.cluster_sim->variants.size() == 1 ? "" : "s") << ", seed " << scenario.seed << "\n";
    experiment::print_table(out, results);
  } else if (!o.quiet) {
    const std::string what = scenario.collective ? network::to_string(scenario.collective->operation) : scenario.workload.model_name;
    out << "dlsim " << results.dlsim_version << ": " << what << " on "
        << scenario.cluster.instance_name << " (" << scenario.cluster.instance.accelerators_per_node << " x "
        << scenario.cluster.device.name << " per node)";
    if (!scenario.collective) {
      out << ", " << models::to_string(scenario.workload.precision);
      if (scenario.workload.precision_is_default) out << " (default for " << scenario.cluster.device.name << ")";
    }
    out << ", seed " << scenario.seed << "\n";
    if (!scenario.cluster.profile_note.empty()) out << scenario.cluster.profile_note << "\n";
    if (!scenario.cluster.accuracy_note.empty()) out << "note: " << scenario.cluster.accuracy_note << "\n";
    experiment::print_table(out, results);
  }
  if (!scenario.output.results.empty()) {
    experiment::write_hdf5(scenario.output.results, results);
    if (!o.quiet) out << wrote(scenario.output.results, "the results (HDF5)") << "\n";
  }
  if (!scenario.output.csv.empty()) {
    experiment::write_csv(scenario.output.csv, results);
    if (!o.quiet) out << wrote(scenario.output.csv, "the CSV") << "\n";
  }
  if (!scenario.output.jobs_csv.empty()) {
    experiment::write_table_csv(scenario.output.jobs_csv, results.jobs_table);
    if (!o.quiet) out << wrote(scenario.output.jobs_csv, "the jobs CSV") << "\n";
  }
  for (std::size_t i = 0; i < results.traces.size(); ++i) {
    if (results.rows[i].status != "ok") continue;  // an infeasible point has no iteration
    const std::string path = experiment::trace_path(scenario.output.trace, results.rows[i].nodes, results.rows[i].plan_index,
                                                    scenario.node_counts().size() > 1, scenario.plans().size() > 1);
    experiment::write_chrome_trace(results.traces[i], path);
    if (!o.quiet) out << "wrote " << path << " (open in ui.perfetto.dev)\n";
  }
  return 0;
}

int run_serving_scenario(std::ostream& stdout_stream, const ScenarioOptions& o, const experiment::Scenario& scenario) {
  std::ostream& out = scenario.output.to_standard_output() ? std::cerr : stdout_stream;
  if (!scenario.sweep.variants.empty()) {
    throw experiment::ConfigError(scenario.sweep.variants.where, "sweep",
                                  "the scenario sweeps variants (sweep.grid, zip or random): run it with 'dlsim sweep'");
  }
  const experiment::ServingResults results = experiment::run_serving(scenario);
  if (!o.quiet) experiment::print_serving(out, results);
  if (!scenario.output.csv.empty()) {
    experiment::write_serving_csv(scenario.output.csv, results);
    if (!o.quiet) out << wrote(scenario.output.csv, "the CSV") << "\n";
  }
  if (!scenario.output.trace.empty()) {
    experiment::write_serving_trace(scenario.output.trace, results);
    if (!o.quiet) out << "wrote " << scenario.output.trace << " (replica 0's iterations; open in ui.perfetto.dev)\n";
  }
  if (!scenario.output.results.empty()) {
    experiment::Results files;
    files.kind = scenario.kind();
    files.dlsim_version = results.dlsim_version;
    files.seed = scenario.seed;
    files.scenario_source = scenario.source;
    files.scenario_yaml = scenario.input_yaml;
    files.resolved_yaml = experiment::resolved_yaml(scenario);
    experiment::serving_tables(results, files);
    experiment::write_hdf5(scenario.output.results, files);
    if (!o.quiet) out << wrote(scenario.output.results, "the results (HDF5)") << "\n";
  }
  return 0;
}

int run_command(std::ostream& out, const ScenarioOptions& o) {
  const experiment::Scenario scenario = load(o);
  if (scenario.serving) return run_serving_scenario(out, o, scenario);
  return run_loaded(out, o, scenario);
}

int collective_command(std::ostream& out, const ScenarioOptions& o) {
  // Without a file: the built-in sweep, changed with --set like any scenario.
  const auto built_in = [&o] {
    try {
      return experiment::load_scenario_text(kDefaultCollectiveScenario, "<built-in collective scenario>", sets_of(o));
    } catch (const experiment::ConfigError& e) {
      rethrow_naming_the_option(e, o);
    }
  };
  const experiment::Scenario scenario = o.scenario.empty() ? built_in() : load(o);
  if (!scenario.collective) {
    throw experiment::ConfigError({o.scenario, 0, 0}, "collective",
                                  "'dlsim collective' runs collective scenarios; this one is a training workload (use 'dlsim run')");
  }
  return run_loaded(out, o, scenario);
}

int check_command(std::ostream& out, const ScenarioOptions& o) {
  const experiment::Scenario s = load(o);
  if (!s.sweep.variants.empty()) {
    // Every variant of the sweep passes the same validation, as `dlsim sweep` would load it.
    const auto variants = experiment::expand(s.sweep.variants);
    experiment::SweepSource source;
    source.path = o.scenario;
    source.set_arguments = sets_of(o);
    experiment::check_variants(source, variants);
    out << s.source << ": sweep of " << variants.size() << " variant" << (variants.size() == 1 ? "" : "s")
        << " (sweep.grid/zip/random), each ok: run it with 'dlsim sweep'\n";
  }
  if (!s.validation.empty()) {
    const std::size_t n = s.validation.checks.size();
    out << s.source << ": " << n << " published figure" << (n == 1 ? "" : "s") << " to compare (" << s.validation.source
        << "): run 'dlsim validate' on its folder\n";
  }
  if (s.cluster_sim) {
    const auto& v = s.cluster_sim->variants;
    out << s.source << ": ok (cluster scenario: " << v.front().spec.pools.size() << " pool" << (v.front().spec.pools.size() == 1 ? "" : "s")
        << ", " << v.front().spec.jobs.size() << " jobs, " << v.size() << " variant" << (v.size() == 1 ? "" : "s") << ")\n";
    return 0;
  }
  if (s.serving) {
    const experiment::ServingConfig& v = *s.serving;
    out << s.source << ": ok (serving " << v.model_name << " on ";
    if (v.function) {
      out << "serverless functions of " << experiment::format_size(v.function_config.memory_bytes) << ", "
          << experiment::format_number(v.function_config.vcpus, "%.2f") << " vCPUs, at most " << v.function_config.concurrency << " at once";
    } else {
      out << v.replicas << " replica" << (v.replicas == 1 ? "" : "s") << " x " << v.tensor << " " << s.cluster.device.name;
    }
    out << ")" << (s.sweep.variants.empty() ? ": run it with 'dlsim run'" : "") << "\n";
    return 0;
  }
  if (s.search) {
    out << s.source << ": ok (plan search for " << s.workload.model_name << " over " << s.search->instances.size() << " instance type"
        << (s.search->instances.size() == 1 ? "" : "s") << " x " << s.search->nodes.size() << " node count"
        << (s.search->nodes.size() == 1 ? "" : "s") << (s.search->spot ? ", on-demand and spot" : "")
        << "): run it with 'dlsim plan'\n";
    return 0;
  }
  const std::size_t configurations = s.node_counts().size() * (s.collective ? 1 : s.plans().size());
  out << s.source << ": ok (" << (s.collective ? network::to_string(s.collective->operation) : s.workload.model_name) << " on "
      << s.cluster.instance_name << ", " << configurations << " configuration" << (configurations == 1 ? "" : "s") << ")\n";
  if (s.collective) return 0;
  // What each configuration needs per accelerator, against what it has.
  for (int nodes : s.node_counts()) {
    for (int i = 0; i < static_cast<int>(s.plans().size()); ++i) {
      if (const experiment::InfeasiblePoint* p = s.infeasible_at(nodes, i)) {
        out << "  " << nodes << " nodes, " << (p->plan.empty() ? "plan " + std::to_string(i) : p->plan) << ": infeasible: " << p->reason
            << "\n";
        continue;
      }
      const models::ParallelPlan plan = s.plan_for(nodes, i);
      const models::MemoryBreakdown mem = models::peak_memory(s.workload.model, plan);
      out << "  " << nodes << " nodes, " << experiment::describe_plan(plan) << ": " << models::describe(mem) << ", has "
          << experiment::format_size(s.cluster.device.memory_bytes) << "\n";
    }
  }
  return 0;
}

int catalog_command(std::ostream& out, const std::string& what) {
  if (!what.empty() && what != "devices" && what != "instances" && what != "models" && what != "storage") {
    throw experiment::ConfigError({"dlsim catalog", 0, 0}, "", "unknown listing '" + what + "': use devices, instances, models or storage");
  }
  // The catalog with its kernel profiles is built only for the listings that show it.
  const models::Catalog catalog = what.empty() || what == "devices" || what == "instances" ? experiment::builtin_catalog() : models::Catalog{};
  if (what.empty() || what == "devices") {
    out << "devices (peak dense TFLOP/s: fp32 tf32 fp16 bf16 fp8; memory; bandwidth)\n";
    for (const auto& [name, d] : catalog.devices()) {
      out << "  " << std::left << std::setw(11) << name << std::right;
      for (auto p : {models::Precision::fp32, models::Precision::tf32, models::Precision::fp16, models::Precision::bf16,
                     models::Precision::fp8}) {
        out << std::setw(7) << tflops(d.peak(p));
      }
      out << "  " << std::setw(9) << experiment::format_size(d.memory_bytes) << "  "
          << experiment::format_byte_rate(d.memory_bandwidth) << "\n";
    }
  }
  if (what.empty() || what == "instances") {
    out << "instances (accelerators x device; node network; on-demand USD/h; spot USD/h where known; price date)\n";
    for (const auto& [name, t] : catalog.instances()) {
      char price[32], spot[32] = "-";
      std::snprintf(price, sizeof price, "%.2f", t.price_per_hour);
      if (t.spot_price_per_hour > 0) std::snprintf(spot, sizeof spot, "%.2f", t.spot_price_per_hour);
      out << "  " << std::left << std::setw(34) << name << std::right << std::setw(3) << t.accelerators_per_node
          << " x " << std::left << std::setw(10) << t.device << std::right << std::setw(11)
          << gbps(t.network_bandwidth) << std::setw(9) << price << std::setw(8) << spot << "  " << t.price_date
          << "\n";
    }
  }
  if (what.empty() || what == "models") {
    out << "models (parameters; forward GFLOP per sample)\n";
    for (const auto& name : models::zoo_model_names()) {
      const models::ModelGraph m = models::zoo_model(name);
      char line[128];
      std::snprintf(line, sizeof line, "  %-12s %8.1f M  %8.2f GFLOP per %s", name.c_str(), m.parameters() / 1e6,
                    m.forward_flops_per_sample() / 1e9, m.sample_unit.c_str());
      out << line;
      if (m.tokens_per_sample > 1) out << " (sequence length " << m.tokens_per_sample << ")";
      out << "\n";
    }
  }
  if (what.empty() || what == "storage") {
    out << "storage for workload.input.storage (kind; how fast; USD per GB-month; USD per 1,000 requests)\n";
    for (const models::StorageSpec& s : models::builtin_storage()) {
      std::string speed;
      switch (s.kind) {
        case models::StorageKind::object:
          speed = experiment::format_byte_rate(s.connection_bytes_per_s) + " per connection, " +
                  experiment::format_duration(s.request_latency_s) + " to the first byte";
          break;
        case models::StorageKind::block:
          speed = experiment::format_byte_rate(s.bytes_per_s) + " and " + std::to_string(static_cast<int>(s.iops)) + " IOPS per volume";
          break;
        case models::StorageKind::parallel_fs:
          speed = experiment::format_byte_rate(s.bytes_per_s_per_tib) + " per TiB, for the job";
          break;
        case models::StorageKind::local:
          speed = "storage.bandwidth as given";
          break;
      }
      char price[64];
      std::snprintf(price, sizeof price, "%7.4f %9.4f", s.price_per_gb_month, s.price_per_1000_requests);
      out << "  " << std::left << std::setw(20) << s.name << std::setw(22) << models::to_string(s.kind) << std::setw(50) << speed
          << std::right << price << "\n";
    }
    out << "CPU instances for workload.input.preparation (vCPUs; on-demand USD/h)\n";
    for (const models::CpuInstance& c : models::builtin_cpu_instances()) {
      char line[96];
      std::snprintf(line, sizeof line, "  %-20s %5d %9.4f\n", c.name.c_str(), c.vcpus, c.price_per_hour);
      out << line;
    }
  }
  return 0;
}

int version_command(std::ostream& out) {
  out << "dlsim " << experiment::dlsim_version() << "\n";
  return 0;
}

}  // namespace dlsim::cli
