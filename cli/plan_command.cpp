// `dlsim plan scenario.yaml`: the planner (experiment/planner.hpp) on a plan scenario.
#include <iostream>

#include "cli/commands.hpp"
#include "experiment/atomic_file.hpp"
#include "experiment/planner.hpp"
#include "experiment/writers.hpp"

namespace dlsim::cli {

int plan_command(std::ostream& stdout_stream, const ScenarioOptions& o, int threads) {
  std::vector<std::string> sets = o.set_arguments;
  // --output / --csv are shorthands for overrides, so they get the same validation.
  if (!o.output.empty()) sets.push_back("output.results=" + o.output);
  if (!o.csv.empty()) sets.push_back("output.csv=" + o.csv);
  const std::vector<experiment::Scenario> scenarios = experiment::load_plan_scenarios(o.scenario, sets);
  // With an output on standard output ("-"), the report goes to standard error.
  std::ostream& out = scenarios.front().output.to_standard_output() ? std::cerr : stdout_stream;
  experiment::PlanOptions options;
  options.threads = threads;
  const experiment::PlanResults plan = experiment::search_plans(scenarios, options);
  if (!o.quiet) experiment::print_plan(out, scenarios, plan);
  const experiment::Scenario& s = scenarios.front();
  experiment::Results results;
  results.kind = "plan";
  results.dlsim_version = experiment::dlsim_version();
  results.seed = s.seed;
  results.scenario_source = s.source;
  results.scenario_yaml = s.input_yaml;
  results.resolved_yaml = experiment::resolved_yaml(s);
  results.table = experiment::plan_table(plan);
  if (!s.output.results.empty()) {
    experiment::write_hdf5(s.output.results, results);
    if (!o.quiet && !experiment::is_standard_output(s.output.results)) out << "wrote " << s.output.results << "\n";
  }
  if (!s.output.csv.empty()) {
    experiment::write_table_csv(s.output.csv, results.table);
    if (!o.quiet && !experiment::is_standard_output(s.output.csv)) out << "wrote " << s.output.csv << "\n";
  }
  return 0;
}

}  // namespace dlsim::cli
