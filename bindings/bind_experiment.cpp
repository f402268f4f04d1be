// Scenarios, runs and sweeps: experiment::load_scenario*, experiment::run, experiment::run_sweep.
#include <pybind11/stl.h>

#include <memory>
#include <sstream>

#include "bindings/bind_common.hpp"
#include "experiment/load.hpp"
#include "experiment/planner.hpp"
#include "experiment/serving_run.hpp"
#include "experiment/results.hpp"
#include "experiment/config_error.hpp"
#include "experiment/sweep.hpp"
#include "experiment/sweep_spec.hpp"
#include "experiment/validation.hpp"
#include "experiment/writers.hpp"

namespace dlsim::bindings {
namespace {

using experiment::Results;
using experiment::Scenario;

// What a scenario describes, in a few figures (what `dlsim check` prints).
// `threads` as `dlsim sweep -j` takes it: 0 for one per core, else a count (-1 was accepted).
int checked_threads(int threads) {
  if (threads < 0 || threads > 4096) {
    throw py::value_error("threads must be 0 (one per core) or a count from 1 to 4096, got " + std::to_string(threads));
  }
  return threads;
}

py::dict summary_of(const Scenario& s) {
  py::dict d;
  d["kind"] = s.kind();
  d["source"] = s.source;
  d["seed"] = s.seed;
  if (s.cluster_sim) {
    const auto& first = s.cluster_sim->variants.front().spec;
    d["variants"] = s.cluster_sim->variants.size();
    d["pools"] = first.pools.size();
    d["jobs"] = first.jobs.size();
    py::list labels;
    for (const auto& v : s.cluster_sim->variants) labels.append(v.label);
    d["variant_labels"] = labels;
    return d;
  }
  d["instance"] = s.cluster.instance_name;
  d["device"] = s.cluster.device.name;
  d["accelerators_per_node"] = s.cluster.instance.accelerators_per_node;
  d["node_counts"] = s.node_counts();
  if (s.collective) return d;
  d["model"] = s.workload.model_name;
  d["precision"] = models::to_string(s.workload.precision);
  d["plans"] = s.plans().size();
  return d;
}

experiment::SweepSource source_of(const std::string& path, const std::string& text, const std::string& name,
                                  const std::string& base_dir, const std::vector<std::string>& sets) {
  experiment::SweepSource source;
  source.path = path;
  source.text = text;
  source.name = name;
  source.base_dir = base_dir;
  source.set_arguments = sets;
  return source;
}

}  // namespace

py::list table_to_python(const experiment::Table& table) {
  py::list out;
  for (const experiment::TableColumn& c : table.columns) {
    py::object values;
    if (c.type == experiment::TableColumn::Type::text) {
      py::list texts;
      for (const std::string& t : c.texts) texts.append(py::str(t));
      values = texts;
    } else if (c.type == experiment::TableColumn::Type::integer) {
      py::array_t<std::int64_t> a(static_cast<py::ssize_t>(c.numbers.size()));
      auto* data = a.mutable_data();
      for (std::size_t i = 0; i < c.numbers.size(); ++i) data[i] = static_cast<std::int64_t>(c.numbers[i]);
      values = a;
    } else {
      py::array_t<double> a(static_cast<py::ssize_t>(c.numbers.size()));
      std::copy(c.numbers.begin(), c.numbers.end(), a.mutable_data());
      values = a;
    }
    out.append(py::make_tuple(c.name, c.unit, c.description, values));
  }
  return out;
}

void bind_experiment(py::module_& m) {
  py::class_<Scenario, std::shared_ptr<Scenario>>(m, "Scenario",
                                                  "A validated scenario (immutable). Build it with dlsim.load or dlsim.Scenario.")
      .def_property_readonly("kind", &Scenario::kind, "training, collective or cluster")
      .def_property_readonly("source", [](const Scenario& s) { return s.source; })
      .def_property_readonly("seed", [](const Scenario& s) { return s.seed; })
      .def_property_readonly("yaml", [](const Scenario& s) { return s.input_yaml; }, "the scenario as given (after overrides)")
      .def_property_readonly("resolved_yaml", &experiment::resolved_yaml, "every default, catalog figure and unit resolved (SI)")
      .def("summary", &summary_of, "what the scenario describes, as a dict");

  m.def("load_file", [](const std::string& path, const std::vector<std::string>& sets) {
          return std::make_shared<Scenario>(experiment::load_scenario(path, sets));
        },
        py::arg("path"), py::arg("sets") = std::vector<std::string>{});
  m.def("load_text",
        [](const std::string& text, const std::string& name, const std::vector<std::string>& sets, const std::string& base_dir) {
          return std::make_shared<Scenario>(experiment::load_scenario_text(text, name, sets, base_dir));
        },
        py::arg("text"), py::arg("name"), py::arg("sets"), py::arg("base_dir"));

  py::class_<Results, std::shared_ptr<Results>>(m, "RunResult", "The results of one run, as the C++ core holds them")
      .def_property_readonly("kind", [](const Results& r) { return r.kind; })
      .def_property_readonly("dlsim_version", [](const Results& r) { return r.dlsim_version; })
      .def_property_readonly("seed", [](const Results& r) { return r.seed; })
      .def_property_readonly("scenario_source", [](const Results& r) { return r.scenario_source; })
      .def_property_readonly("scenario_yaml", [](const Results& r) { return r.scenario_yaml; })
      .def_property_readonly("resolved_yaml", [](const Results& r) { return r.resolved_yaml; })
      .def("tables", [](const Results& r) {
             py::list out;
             out.append(py::make_tuple("results", table_to_python(r.table)));
             for (const auto& [name, table] : r.extra_tables) out.append(py::make_tuple(name, table_to_python(table)));
             return out;
           }, "[(name, [(column, unit, description, values)])], the HDF5 file's tables in its order")
      .def("printed_table", [](const Results& r) {
             std::ostringstream out;
             experiment::print_table(out, r);
             return out.str();
           }, "the table `dlsim run` prints")
      .def("write_hdf5", [](const Results& r, const std::string& path) {
             py::gil_scoped_release release;
             experiment::write_hdf5(path, r);
           }, py::arg("path"))
      .def("write_csv", [](const Results& r, const std::string& path) {
             py::gil_scoped_release release;
             experiment::write_csv(path, r);
           }, py::arg("path"));

  m.def("run", [](std::shared_ptr<const Scenario> scenario) {
          if (scenario->serving) {
            throw experiment::ConfigError({scenario->source, 0, 0}, "serving",
                                          "the scenario serves requests (serving:): run it with dlsim.serve");
          }
          return run_interruptibly([scenario](const sim::InterruptFlag* flag) {
            return std::make_shared<Results>(experiment::run(*scenario, flag));
          });
        },
        py::arg("scenario"), "Runs every configuration of the scenario (GIL released; Ctrl-C stops it).");

  m.def("sweep",
        [](const std::string& path, const std::string& text, const std::string& name, const std::string& base_dir,
           const std::vector<std::string>& sets, const std::vector<std::pair<std::string, std::vector<std::string>>>& grid,
           int threads) {
          checked_threads(threads);
          std::vector<experiment::SweepAxis> axes;
          for (const auto& [key, values] : grid) axes.push_back({key, values});
          const experiment::SweepSource source = source_of(path, text, name, base_dir, sets);
          // No grid: the variants of the scenario's own sweep section (grid, zip, random).
          std::vector<std::vector<std::string>> variants;
          if (axes.empty()) {
            const Scenario base = path.empty() ? experiment::load_scenario_text(text, name, sets, base_dir)
                                               : experiment::load_scenario(path, sets);
            if (base.sweep.variants.empty()) {
              throw experiment::ConfigError({base.source, 0, 0}, "sweep", "nothing to sweep: give a grid, or sweep.grid, zip or random in the scenario");
            }
            variants = experiment::expand(base.sweep.variants);
          } else {
            variants = experiment::grid_variants(axes);
          }
          const experiment::SweepResults r = run_interruptibly([&source, &variants, threads](const sim::InterruptFlag* flag) {
            return experiment::run_sweep_variants(source, variants, threads, flag);
          });
          py::dict out;
          out["kind"] = r.kind;
          out["variants"] = r.variants;
          out["table"] = table_to_python(r.table);
          return out;
        },
        py::arg("path"), py::arg("text"), py::arg("name"), py::arg("base_dir"), py::arg("sets"), py::arg("grid"),
        py::arg("threads"), "Runs a grid of overrides over one scenario on threads (GIL released; Ctrl-C stops it).");

  m.def("plan",
        [](const std::string& path, const std::string& text, const std::string& name, const std::string& base_dir,
           const std::vector<std::string>& sets, int threads) {
          experiment::PlanOptions options;
          options.threads = checked_threads(threads);
          const std::vector<Scenario> scenarios = path.empty() ? experiment::load_plan_scenarios_text(text, name, base_dir, sets)
                                                               : experiment::load_plan_scenarios(path, sets);
          const experiment::PlanResults r = run_interruptibly([&scenarios, &options](const sim::InterruptFlag* flag) {
            return experiment::search_plans(scenarios, options, flag);
          });
          py::dict counts;
          const experiment::PlanCounts& n = r.counts;
          for (const auto& [key, value] : {std::pair{"enumerated", n.enumerated}, {"no_fit", n.no_fit}, {"pruned", n.pruned},
                                           {"simulated", n.simulated}, {"deadline", n.deadline}, {"budget", n.budget},
                                           {"feasible", n.feasible}, {"memoized", n.memoized}, {"unfinished", n.unfinished},
                                           {"spot_runs", n.spot_runs}}) {
            counts[key] = value;
          }
          py::dict out;
          out["table"] = table_to_python(experiment::plan_table(r));
          out["counts"] = counts;
          out["best"] = r.best ? py::cast(*r.best) : py::none();
          out["front"] = r.front;
          out["objective"] = r.objective == experiment::PlanObjective::cheapest ? "cheapest" : "fastest";
          return out;
        },
        py::arg("path"), py::arg("text"), py::arg("name"), py::arg("base_dir"), py::arg("sets"), py::arg("threads"),
        "Searches instance types, node counts and plans of a plan scenario (GIL released; Ctrl-C stops it).");

  m.def("serve",
        [](const std::string& path, const std::string& text, const std::string& name, const std::string& base_dir,
           const std::vector<std::string>& sets) {
          const Scenario s = path.empty() ? experiment::load_scenario_text(text, name, sets, base_dir) : experiment::load_scenario(path, sets);
          if (!s.serving) throw experiment::ConfigError({s.source, 0, 0}, "serving", "not a serving scenario (no serving: section): use dlsim.run");
          if (!s.sweep.variants.empty()) {
            throw experiment::ConfigError(s.sweep.variants.where, "sweep", "the scenario sweeps variants (sweep.grid, zip or random): use dlsim.sweep");
          }
          experiment::ServingResults r;
          {
            py::gil_scoped_release release;  // a whole trace takes under a second
            r = experiment::run_serving(s);
          }
          const std::size_t n = r.served.size();
          std::vector<double> arrival(n), first(n), finish(n), transfer(n);
          std::vector<int> prompt(n), output(n), replica(n), decode_replica(n), preemptions(n);
          std::vector<bool> dropped(n);
          for (std::size_t i = 0; i < n; ++i) {
            arrival[i] = r.request_list[i].arrival_s;
            prompt[i] = r.request_list[i].prompt_tokens;
            output[i] = r.request_list[i].output_tokens;
            replica[i] = r.served[i].replica;
            decode_replica[i] = r.served[i].decode_replica;
            dropped[i] = r.served[i].dropped;
            first[i] = r.served[i].first_token_s;
            finish[i] = r.served[i].finish_s;
            transfer[i] = r.served[i].kv_transfer_s;
            preemptions[i] = r.served[i].preemptions;
          }
          py::dict requests;
          requests["arrival_s"] = arrival;
          requests["prompt_tokens"] = prompt;
          requests["output_tokens"] = output;
          requests["replica"] = replica;
          requests["decode_replica"] = decode_replica;
          requests["dropped"] = dropped;
          requests["first_token_s"] = first;
          requests["finish_s"] = finish;
          requests["kv_transfer_s"] = transfer;
          requests["preemptions"] = preemptions;
          const auto percentiles = [](const experiment::Percentiles& p) {
            py::dict d;
            d["p50"] = p.p50;
            d["p90"] = p.p90;
            d["p99"] = p.p99;
            d["mean"] = p.mean;
            return d;
          };
          py::dict summary;
          summary["model"] = r.model;
          summary["instance"] = r.instance;
          summary["device"] = r.device;
          summary["replicas"] = r.replicas;
          summary["tensor"] = r.tensor;
          summary["nodes"] = r.nodes;
          summary["kv_capacity_tokens"] = r.kv_capacity_tokens;
          summary["requests"] = r.requests;
          summary["completed"] = r.completed;
          summary["dropped"] = r.dropped;
          summary["duration_s"] = r.duration_s;
          summary["ttft_s"] = percentiles(r.ttft_s);
          summary["tpot_s"] = percentiles(r.tpot_s);
          summary["itl_s"] = percentiles(r.itl_s);
          summary["e2e_s"] = percentiles(r.e2e_s);
          summary["output_tokens_per_s"] = r.output_tokens_per_s;
          summary["goodput_requests_per_s"] = r.goodput_requests_per_s;
          summary["within_targets"] = r.within_targets;
          summary["kv_utilization"] = r.kv_utilization;
          summary["busy_fraction"] = r.busy_fraction;
          summary["preemptions"] = r.preemptions;
          summary["cold_starts"] = r.cold_starts;
          summary["reclaims"] = r.reclaims;
          summary["resumed_requests"] = r.resumed_requests;
          summary["spot_replica_hours"] = r.spot_replica_hours;
          summary["replica_hours"] = r.replica_hours;
          summary["cost_usd"] = r.cost_usd;
          summary["usd_per_million_output_tokens"] = r.usd_per_million_output_tokens;
          summary["usd_per_million_tokens"] = r.usd_per_million_tokens;
          summary["usd_per_1000_requests"] = r.usd_per_1000_requests;
          summary["requests_per_s"] = r.requests_per_s;
          summary["platform"] = r.function ? "function" : "instances";
          summary["per_sample"] = r.per_sample;
          summary["cold_start_s"] = r.cold_start_s;
          summary["function_vcpus"] = r.function_vcpus;
          summary["billed_gb_seconds"] = r.billed_gb_seconds;
          summary["waited_requests"] = r.waited_requests;
          py::dict out;
          out["requests"] = requests;
          out["summary"] = summary;
          out["replicas_over_time"] = r.replicas_over_time;
          return out;
        },
        py::arg("path"), py::arg("text"), py::arg("name"), py::arg("base_dir"), py::arg("sets"),
        "Runs a serving scenario: per-request records, the summary, replicas over time (GIL released).");

  m.def("validate",
        [](const std::string& folder, bool fast, const std::vector<std::string>& only, int threads) {
          experiment::ValidateOptions options;
          options.fast_only = fast;
          options.only = only;
          options.threads = checked_threads(threads);
          const experiment::ValidationReport r = run_interruptibly([&options, &folder](const sim::InterruptFlag* flag) {
            experiment::ValidateOptions o = options;
            o.interrupt = flag;
            return experiment::validate_folder(folder, o);
          });
          py::dict out;
          out["table"] = table_to_python(experiment::validation_table(r));
          out["mape_measured"] = r.mape_measured;
          out["mape_claims"] = r.mape_claims;
          out["measured_points"] = r.measured_points;
          out["claim_points"] = r.claim_points;
          out["skipped"] = r.skipped;
          out["unexplained"] = r.unexplained;
          out["markdown"] = experiment::format_validation_markdown(r);
          return out;
        },
        py::arg("folder"), py::arg("fast"), py::arg("only"), py::arg("threads"),
        "Runs the published-result scenarios of a folder and compares (GIL released; Ctrl-C stops it).");
}

}  // namespace dlsim::bindings
