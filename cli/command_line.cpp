#include "cli/command_line.hpp"

#include <boost/program_options.hpp>

#include <sstream>
#include <vector>

namespace dlsim::cli {
namespace po = boost::program_options;
namespace {

struct Command {
  const char* name;
  const char* usage;    // after "usage: dlsim "
  const char* summary;  // what it does
  int min_positional;
  int max_positional;
  const char* positional_name;  // what the positional argument is, for messages
};

const Command kCommands[] = {
    {"run", "run <scenario.yaml> [--set key.path=value]... [--output FILE] [--csv FILE] [--quiet]",
     "simulate the scenario, print the result table, write its output files", 1, 1, "the scenario file"},
    {"check", "check <scenario.yaml> [--set key.path=value]... [--output FILE] [--csv FILE]",
     "validate the scenario (every variant of its sweep) without running it or writing anything", 1, 1,
     "the scenario file"},
    {"collective", "collective [scenario.yaml] [--set key.path=value]... [--output FILE] [--csv FILE] [--quiet]",
     "run a collective sweep (nccl-tests style table); without a file: all-reduce 8 B..1 GiB on\n"
     "aws/p4d.24xlarge, changed with --set",
     0, 1, "the scenario file"},
    {"catalog", "catalog [devices|instances|models|storage]", "list what scenarios can name", 0, 1, "the listing"},
    {"calibrate",
     "calibrate --backend cpu|cuda --out profile.yaml [--quick] [--repeats N] [--max-spread X] [--device NAME]\n"
     "       dlsim calibrate --validate profile.yaml [--backend cpu|cuda]\n"
     "       dlsim calibrate --import TABLE.csv [--import ...] [--gpu LABEL] [--device NAME] [--layout-reference TABLE.csv] --out profile.yaml",
     "measure micro-kernels here and fit a device profile; or predict held-out kernels from a profile\n"
     "and compare with measurements (--validate); or fit the kernel model to measured kernel tables\n"
     "(--import: vidur, DeepBench, dlsim's CUDA tables), with its held-out errors",
     0, 0, ""},
    {"kernel",
     "kernel (--device NAME | --gpu LABEL) --gemm MxNxK [--precision fp16] [--layout nt|nn|tn] [--batch N]\n"
     "       dlsim kernel (--device NAME | --gpu LABEL) --memory CLASS --bytes N\n"
     "       dlsim kernel --input TABLE.csv --output OUT.csv",
     "time one GEMM or memory-bound kernel with the device's kernel model (tile, split-K, waves, the\n"
     "profile's error band), or predict every row of a measured kernel table (predicted_ms appended)",
     0, 0, ""},
    {"sweep", "sweep <scenario.yaml> [-j N] [--output store.h5] [--resume] [--set key.path=value]... [--quiet]",
     "run every variant of the scenario's sweep.grid/zip/random on N threads (default: all cores), or\n"
     "across machines under mpirun -n N; one HDF5 store (default results/<name>-sweep.h5), written as\n"
     "variants finish; --resume runs only unfinished ones",
     1, 1, "the scenario file"},
    {"plan", "plan <scenario.yaml> [-j N] [--set key.path=value]... [--output FILE] [--csv FILE] [--quiet]",
     "search instance types, node counts and parallel plans for the cheapest or fastest way to train the\n"
     "scenario's workload within its deadline and budget (its plan: section): the Pareto front of time\n"
     "against cost, the best point, and why each rejected candidate was rejected",
     1, 1, "the scenario file"},
    {"validate",
     "validate [folder] [--fast] [--only PREFIX]... [-j N] [--format text|markdown] [--csv FILE] [--quiet]\n"
     "       dlsim validate --kernels [--format text|markdown]\n"
     "       dlsim validate --collectives TABLE.csv [folder] [--rows] [--format text|markdown]",
     "compare the published-result scenarios of the folder (default scenarios/published) with their\n"
     "published figures; or the shipped kernel profiles' held-out errors (--kernels); or collective\n"
     "times against a measured table (--collectives)",
     0, 1, "the folder"},
    {"version", "version", "print the dlsim version", 0, 0, ""},
};

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

void add_set(po::options_description& d, CommandLine& c) {
  d.add_options()("set", po::value<std::vector<std::string>>(&c.scenario.set_arguments)->composing()->value_name("key.path=value"),
                  "override a scenario value (repeatable), e.g. --set cluster.nodes=8");
}

// The options `command` takes, bound to `c`; the same table gives the parse and the --help text.
po::options_description options_of(const std::string& command, CommandLine& c) {
  po::options_description d("options", 100, 50);
  d.add_options()("help,h", po::bool_switch(&c.help), "print this help");
  ScenarioOptions& s = c.scenario;
  if (command == "run" || command == "check" || command == "collective") {
    add_set(d, c);
    d.add_options()("output", po::value<std::string>(&s.output)->value_name("FILE"),
                    "write the HDF5 results to FILE (overrides output.results)")(
        "csv", po::value<std::string>(&s.csv)->value_name("FILE"), "also write the results as CSV (overrides output.csv)");
    if (command != "check") d.add_options()("quiet", po::bool_switch(&s.quiet), "print no table");
  } else if (command == "sweep") {
    add_set(d, c);
    d.add_options()("output", po::value<std::string>(&s.output)->value_name("FILE"),
                    "the HDF5 store (default results/<name>-sweep.h5)")(
        "jobs,j", po::value<int>(&c.sweep.threads)->value_name("N"), "local threads (default: one per core)")(
        "resume", po::bool_switch(&c.sweep.resume), "run only the variants the journal lacks")(
        "quiet", po::bool_switch(&s.quiet), "print nothing but errors");
  } else if (command == "plan") {
    add_set(d, c);
    d.add_options()("output", po::value<std::string>(&s.output)->value_name("FILE"),
                    "write every candidate to FILE as HDF5 (overrides output.results)")(
        "csv", po::value<std::string>(&s.csv)->value_name("FILE"), "also write every candidate as CSV (overrides output.csv)")(
        "jobs,j", po::value<int>(&c.sweep.threads)->value_name("N"), "threads (default: one per core)")(
        "quiet", po::bool_switch(&s.quiet), "print no table");
  } else if (command == "calibrate") {
    experiment::CalibrateOptions& k = c.calibrate;
    d.add_options()("backend", po::value<std::string>(&k.backend)->value_name("cpu|cuda"), "where to measure")(
        "out", po::value<std::string>(&k.out)->value_name("FILE"), "the profile to write")(
        "validate", po::value<std::string>(&k.validate)->value_name("FILE"), "the profile to validate instead")(
        "quick", po::bool_switch(&k.quick), "the small grid (CI)")(
        "repeats", po::value<int>(&k.repeats)->value_name("N"), "measurements per case, 1..10000 (default 15, 7 with --quick)")(
        "max-spread", po::value<double>(&k.max_spread)->value_name("X"),
        "(p90 - p10) / median above which a case is unstable (default 0.5)")(
        "device", po::value<std::string>(&k.device)->value_name("NAME"), "the catalog device this GPU is, e.g. H100-SXM")(
        "import", po::value<std::vector<std::string>>(&k.import_tables)->composing()->value_name("TABLE.csv"),
        "a measured kernel table to fit (repeatable)")(
        "gpu", po::value<std::string>(&k.gpu)->value_name("LABEL"), "which GPU of the tables (their gpu column)")(
        "layout-reference", po::value<std::string>(&k.layout_reference)->value_name("TABLE.csv"),
        "with --import: a table of the same device with every GEMM layout, for the layout factors the imported tables lack");
  } else if (command == "kernel") {
    KernelFlags& k = c.kernel;
    d.add_options()("device", po::value<std::string>(&k.device)->value_name("NAME"), "a catalog device, e.g. A100-80GB")(
        "gpu", po::value<std::string>(&k.gpu)->value_name("LABEL"), "a measured tables' GPU label: A100, H100, A40, V100, P100")(
        "gemm", po::value<std::string>(&k.gemm)->value_name("MxNxK"), "one GEMM")(
        "precision", po::value<std::string>(&k.precision)->value_name("P"), "the GEMM's precision (default fp16)")(
        "layout", po::value<std::string>(&k.layout)->value_name("nt|nn|tn"), "the GEMM's layout (default nt)")(
        "batch", po::value<std::string>(&k.batch)->value_name("N"), "batched GEMMs (default 1)")(
        "memory", po::value<std::string>(&k.memory)->value_name("CLASS"), "one memory-bound kernel (stream, rms_norm, ...)")(
        "bytes", po::value<std::string>(&k.bytes)->value_name("N"), "the memory-bound kernel's bytes, e.g. 64MiB")(
        "input", po::value<std::string>(&k.input)->value_name("TABLE.csv"), "predict every row of this table")(
        "output", po::value<std::string>(&k.output)->value_name("OUT.csv"), "with --input: the table with predicted_ms");
  } else if (command == "validate") {
    ValidateFlags& v = c.validate;
    d.add_options()("fast", po::bool_switch(&v.fast), "only the scenarios marked validation.fast")(
        "only", po::value<std::vector<std::string>>(&v.only)->composing()->value_name("PREFIX"),
        "only scenarios whose file name starts so (repeatable)")(
        "jobs,j", po::value<int>(&c.sweep.threads)->value_name("N"), "threads (default: one per core)")(
        "format", po::value<std::string>(&v.format)->value_name("text|markdown"), "the report's format (default text)")(
        "csv", po::value<std::string>(&v.csv)->value_name("FILE"), "also write the report as CSV")(
        "quiet", po::bool_switch(&v.quiet), "no progress bar")(
        "kernels", po::bool_switch(&v.kernels), "the shipped kernel profiles' held-out errors instead")(
        "collectives", po::value<std::string>(&v.collectives)->value_name("TABLE.csv"),
        "collective times against this measured table instead")(
        "rows", po::bool_switch(&v.rows), "with --collectives: every size too");
  }
  return d;
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

// The commands that take `option` (as the user typed it, "--quick" or "-j").
std::vector<std::string> commands_taking(const std::string& option) {
  std::string name = option;
  while (!name.empty() && name.front() == '-') name.erase(0, 1);
  if (const auto eq = name.find('='); eq != std::string::npos) name.resize(eq);
  std::vector<std::string> names;
  for (const Command& command : kCommands) {
    CommandLine scratch;
    const po::options_description d = options_of(command.name, scratch);
    if (d.find_nothrow(name, false) || d.find_nothrow("-" + name, false)) names.emplace_back(command.name);
  }
  return names;
}

// `--set key value` (two arguments) would set nothing and pass `value` on as a positional
// argument: say what was meant.
void check_set_arguments(const std::string& command, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] != "--set" || args[i + 1].find('=') != std::string::npos) continue;
    const bool value_follows = i + 2 < args.size() && args[i + 2].rfind("-", 0) != 0;
    throw UsageError(command, "--set takes key.path=value as one argument: " +
                                  (value_follows ? "did you mean --set " + args[i + 1] + "=" + args[i + 2] + "?"
                                                 : "'" + args[i + 1] + "' has no '=value'"));
  }
}

}  // namespace

bool is_parsed_command(const std::string& command) { return find_command(command) != nullptr; }

CommandLine parse_command_line(const std::string& command, int argc, char** argv) {
  const Command* spec = find_command(command);
  if (!spec) throw UsageError(command, "unknown command");
  const std::vector<std::string> args(argv, argv + argc);
  CommandLine c;
  c.command = command;
  po::options_description options = options_of(command, c);
  std::vector<std::string> positional;
  po::options_description hidden;
  hidden.add_options()("positional", po::value<std::vector<std::string>>(&positional));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description p;
  p.add("positional", -1);
  po::variables_map vm;
  try {
    // No guessing from prefixes: an option is one of this command's, spelled out, or refused.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(all).positional(p).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    const std::vector<std::string> owners = commands_taking(e.get_option_name());
    throw UsageError(command, e.get_option_name() + " is not an option of " + command +
                                  (owners.empty() ? "" : " (it is one of " + join(owners) + ")"));
  } catch (const po::error& e) {
    throw UsageError(command, e.what());
  }
  if (c.help) return c;
  check_set_arguments(command, args);
  if (static_cast<int>(positional.size()) > spec->max_positional) {
    const std::string extra = positional[spec->max_positional];
    throw UsageError(command, spec->max_positional == 0 ? "takes no positional argument ('" + extra + "')"
                                                        : "unexpected argument '" + extra + "' after " + spec->positional_name);
  }
  if (static_cast<int>(positional.size()) < spec->min_positional) {
    throw UsageError(command, std::string("missing ") + spec->positional_name);
  }
  if (!positional.empty()) {
    if (command == "catalog") c.scenario.what = positional[0];
    else if (command == "validate") c.validate.folder = positional[0];
    else c.scenario.scenario = positional[0];
  }
  c.validate.threads = c.sweep.threads;
  return c;
}

std::string command_usage(const std::string& command) {
  const Command* spec = find_command(command);
  return spec ? std::string("usage: dlsim ") + spec->usage : "usage: dlsim <command> [options]";
}

std::string command_help(const std::string& command) {
  const Command* spec = find_command(command);
  if (!spec) return command_usage(command) + "\n";
  CommandLine scratch;
  std::ostringstream s;
  s << command_usage(command) << "\n\n" << spec->summary << "\n\n" << options_of(command, scratch);
  return s.str();
}

}  // namespace dlsim::cli
