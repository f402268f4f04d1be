// dlsim: the command line. Thin over experiment/: parses arguments, calls, maps failures to
// exit codes: 0 success, 2 bad input (scenario, --set, usage), 1 any other failure.
#include <iostream>
#include <string>
#include <vector>

#include "calibration/runner.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "experiment/calibrate.hpp"
#include "experiment/calibrate_import.hpp"
#include "experiment/config_error.hpp"

using namespace dlsim;

namespace {

const char* const kUsage =
    "usage: dlsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run <scenario.yaml>    simulate the scenario, print the result table, write its output files\n"
    "  check <scenario.yaml>  validate the scenario without running it\n"
    "  collective [scenario.yaml]  run a collective sweep (nccl-tests style table); without a\n"
    "                         file: all-reduce 8 B..1 GiB on aws/p4d.24xlarge, change it with --set\n"
    "  catalog [devices|instances|models|storage]  list what scenarios can name\n"
    "  calibrate --backend cpu|cuda --out profile.yaml [--quick] [--repeats N] [--max-spread X]\n"
    "            [--device CATALOG-NAME]   (cuda: which catalog device this GPU is, e.g. H100-SXM)\n"
    "                         measure micro-kernels here, fit a device profile, write it\n"
    "  calibrate --validate profile.yaml [--backend cpu|cuda]\n"
    "                         predict held-out kernels from the profile, measure them, compare\n"
    "  calibrate --import TABLE.csv [--import ...] [--gpu LABEL] [--device CATALOG-NAME] --out profile.yaml\n"
    "                         fit the kernel model to measured kernel tables (vidur, DeepBench,\n"
    "                         dlsim's CUDA tables): a profile, with its held-out errors\n"
    "  kernel (--device CATALOG-NAME | --gpu LABEL) --gemm MxNxK [--precision fp16] [--layout nt|nn|tn]\n"
    "         [--batch N]     time one GEMM with the device's kernel model: tile, split-K, waves,\n"
    "                         memory- or compute-bound, and the profile's error band\n"
    "  kernel (--device CATALOG-NAME | --gpu LABEL) --memory CLASS --bytes N\n"
    "                         time one memory-bound kernel (stream, rms_norm, softmax, ...)\n"
    "  kernel --input TABLE.csv --output OUT.csv\n"
    "                         predict every row of a measured kernel table (vidur GEMM or\n"
    "                         element-wise, DeepBench GEMM): the rows with predicted_ms appended\n"
    "  plot <results.h5> [--out DIR]  write every plot of a results file as PNG into DIR\n"
    "                         (default: <stem>-plots/ beside the file), with /usr/bin/python3\n"
    "  plan <scenario.yaml> [-j N] [--output FILE] [--csv FILE]\n"
    "                         search instance types, node counts and parallel plans for the\n"
    "                         cheapest or fastest way to train the workload (plan: section)\n"
    "  sweep <scenario.yaml> [-j N] [--output store.h5] [--resume]\n"
    "                         run every variant of the scenario's sweep.grid/zip/random on N\n"
    "                         threads (default: all cores), or across machines under\n"
    "                         mpirun -n N; one HDF5 store (default results/<name>-sweep.h5),\n"
    "                         written as variants finish; --resume runs only unfinished ones\n"
    "  plan <scenario.yaml> [-j N] [--csv FILE] [--output FILE.h5]\n"
    "                         search instance type x node count x parallel plan for the\n"
    "                         scenario's plan: section (objective, deadline, budget): the Pareto\n"
    "                         front of time to train against cost, the best point, every\n"
    "                         candidate with its status in the CSV / HDF5 file\n"
    "  validate [folder] [--fast] [--only PREFIX] [-j N] [--format text|markdown] [--csv FILE]\n"
    "                         run the published-result scenarios of the folder (default\n"
    "                         scenarios/published) and compare each prediction with the\n"
    "                         published figure: error, why they differ, overall error\n"
    "  validate --kernels [--format text|markdown]\n"
    "                         the held-out errors of the shipped kernel profiles, per device,\n"
    "                         kernel family and size range\n"
    "  validate --collectives TABLE.csv [folder] [--rows] [--format text|markdown]\n"
    "                         dlsim's collective times against a measured table (e.g.\n"
    "                         ../shared/reference/kernels/collectives_vidur.csv), each system run\n"
    "                         on folder/nccl-vidur-<system>.yaml: errors per series, fit vs held out\n"
    "  version                print the dlsim version\n"
    "\n"
    "'dlsim <command> --help' prints the command's own usage and options.\n";

// A usage error or an out-of-range flag: the command's usage line and where its help is.
[[noreturn]] void usage_error(const std::string& command, const std::string& why) { throw cli::UsageError(command, why); }

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    if (argc > 2 && cli::is_parsed_command(argv[2])) {
      std::cout << cli::command_help(argv[2]);
    } else {
      std::cout << kUsage;
    }
    return 0;
  }
  if (command == "--version") return cli::version_command(std::cout);
  // Python parses plot's arguments (and answers --help).
  if (command == "plot") return cli::plot_command(std::vector<std::string>(argv + 2, argv + argc), std::cerr);
  if (!cli::is_parsed_command(command)) {
    std::cerr << "dlsim: unknown command '" << command << "'\n\n" << kUsage;
    return 2;
  }
  cli::CommandLine c = cli::parse_command_line(command, argc - 2, argv + 2);
  if (c.help) {
    std::cout << cli::command_help(command);
    return 0;
  }
  if (command == "version") return cli::version_command(std::cout);
  if (command == "catalog") return cli::catalog_command(std::cout, c.scenario.what);
  if (command == "calibrate") {
    experiment::CalibrateOptions& calibrate = c.calibrate;
    if (calibrate.repeats < 0 || calibrate.repeats > 10000) usage_error(command, "--repeats must be in 1..10000");
    if (!calibrate.import_tables.empty()) {
      if (!calibrate.backend.empty() || !calibrate.validate.empty()) {
        usage_error(command, "--import fits measured tables: it takes no --backend or --validate");
      }
      return experiment::import_kernel_tables(calibrate, std::cout, std::cerr);
    }
    if (!calibrate.layout_reference.empty()) usage_error(command, "--layout-reference goes with --import");
    return calibrate.validate.empty() ? experiment::calibrate(calibrate, std::cout, std::cerr)
                                      : experiment::validate_profile(calibrate, std::cout, std::cerr);
  }
  if (command == "collective") return cli::collective_command(std::cout, c.scenario);
  if (command == "kernel") return cli::kernel_command(std::cout, c.kernel);
  if (c.sweep.threads < 0 || c.sweep.threads > 4096) usage_error(command, "-j must be in 1..4096");
  if (command == "validate") return cli::validate_command(std::cout, std::cerr, c.validate);
  if (command == "sweep") return cli::sweep_command(std::cout, std::cerr, c.scenario, c.sweep, argc, argv);
  if (command == "plan") return cli::plan_command(std::cout, c.scenario, c.sweep.threads);
  return command == "run" ? cli::run_command(std::cout, c.scenario) : cli::check_command(std::cout, c.scenario);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const experiment::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const calibration::UnstableError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const cli::UsageError& e) {
    std::cerr << "dlsim " << e.command << ": " << e.what() << "\n" << cli::command_usage(e.command) << "\n('dlsim "
              << e.command << " --help' lists its options)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
