// dlsim: the command line. Thin over experiment/: parses arguments, calls, maps failures to
// exit codes: 0 success, 2 bad input (scenario, --set, usage), 1 any other failure.
#include <boost/program_options.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "calibration/runner.hpp"
#include "cli/commands.hpp"
#include "experiment/calibrate.hpp"
#include "experiment/calibrate_import.hpp"
#include "experiment/config_error.hpp"

namespace po = boost::program_options;
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
    "  catalog [devices|instances|models]  list what scenarios can name\n"
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
    "options of run, check and collective:\n"
    "  --set key.path=value   override a scenario value (repeatable), e.g. --set cluster.nodes=8\n"
    "  --output FILE          write the HDF5 results to FILE (overrides output.results)\n"
    "  --csv FILE             also write the results as CSV (overrides output.csv)\n"
    "  --quiet                print no table (run)\n";

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "version" || command == "--version") return cli::version_command(std::cout);
  // Python parses plot's arguments (and answers --help).
  if (command == "plot") return cli::plot_command(std::vector<std::string>(argv + 2, argv + argc), std::cerr);

  po::options_description options;
  cli::ScenarioOptions o;
  options.add_options()
      ("scenario", po::value<std::string>(&o.scenario))
      ("set", po::value<std::vector<std::string>>(&o.set_arguments)->composing())
      ("output", po::value<std::string>(&o.output))
      ("csv", po::value<std::string>(&o.csv))
      ("quiet", po::bool_switch(&o.quiet))
      ("what", po::value<std::string>(&o.what));
  experiment::CalibrateOptions calibrate;
  options.add_options()
      ("backend", po::value<std::string>(&calibrate.backend))
      ("out", po::value<std::string>(&calibrate.out))
      ("validate", po::value<std::string>(&calibrate.validate))
      ("quick", po::bool_switch(&calibrate.quick))
      ("repeats", po::value<int>(&calibrate.repeats))
      ("max-spread", po::value<double>(&calibrate.max_spread))
      ("device", po::value<std::string>(&calibrate.device))
      ("import", po::value<std::vector<std::string>>(&calibrate.import_tables)->composing())
      ("gpu", po::value<std::string>(&calibrate.gpu));
  cli::SweepFlags sweep;
  options.add_options()
      ("jobs,j", po::value<int>(&sweep.threads))
      ("resume", po::bool_switch(&sweep.resume));
  cli::ValidateFlags validate;
  options.add_options()
      ("fast", po::bool_switch(&validate.fast))
      ("only", po::value<std::vector<std::string>>(&validate.only)->composing())
      ("format", po::value<std::string>(&validate.format))
      ("kernels", po::bool_switch(&validate.kernels))
      ("collectives", po::value<std::string>(&validate.collectives))
      ("rows", po::bool_switch(&validate.rows));
  cli::KernelFlags kernel;  // --device, --gpu and --output are the options above
  options.add_options()
      ("input", po::value<std::string>(&kernel.input))
      ("gemm", po::value<std::string>(&kernel.gemm))
      ("precision", po::value<std::string>(&kernel.precision))
      ("layout", po::value<std::string>(&kernel.layout))
      ("batch", po::value<std::string>(&kernel.batch))
      ("memory", po::value<std::string>(&kernel.memory))
      ("bytes", po::value<std::string>(&kernel.bytes));
  po::positional_options_description positional;
  positional.add(command == "catalog" ? "what" : "scenario", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc - 1, argv + 1).options(options).positional(positional).run(), vm);
  po::notify(vm);

  if (command == "catalog") return cli::catalog_command(std::cout, o.what);
  if (command == "calibrate") {
    if (!o.scenario.empty()) throw po::error("calibrate takes no positional argument ('" + o.scenario + "')");
    if (calibrate.repeats < 0 || calibrate.repeats > 10000) throw po::error("--repeats must be in 1..10000");
    if (!calibrate.import_tables.empty()) {
      if (!calibrate.backend.empty() || !calibrate.validate.empty()) throw po::error("--import fits measured tables: it takes no --backend or --validate");
      return experiment::import_kernel_tables(calibrate, std::cout, std::cerr);
    }
    return calibrate.validate.empty() ? experiment::calibrate(calibrate, std::cout, std::cerr)
                                      : experiment::validate_profile(calibrate, std::cout, std::cerr);
  }
  if (command == "collective") return cli::collective_command(std::cout, o);
  if (command == "kernel") {
    if (!o.scenario.empty()) throw po::error("kernel takes no positional argument ('" + o.scenario + "')");
    kernel.output = o.output;
    kernel.device = calibrate.device;
    kernel.gpu = calibrate.gpu;
    return cli::kernel_command(std::cout, kernel);
  }
  if (sweep.threads < 0 || sweep.threads > 4096) throw po::error("-j must be in 1..4096");
  if (command == "validate") {
    if (!o.set_arguments.empty() || !o.output.empty()) throw po::error("validate takes no --set or --output (the scenarios are run as published)");
    validate.folder = o.scenario;
    validate.threads = sweep.threads;
    validate.csv = o.csv;
    validate.quiet = o.quiet;
    return cli::validate_command(std::cout, std::cerr, validate);
  }
  if (command == "plan") {
    if (o.scenario.empty()) throw po::error("plan needs the scenario file");
    return cli::plan_command(std::cout, o, sweep.threads);
  }
  if (command == "sweep") {
    if (o.scenario.empty()) throw po::error("sweep needs the scenario file");
    return cli::sweep_command(std::cout, std::cerr, o, sweep, argc, argv);
  }
  if (command != "run" && command != "check") {
    std::cerr << "dlsim: unknown command '" << command << "'\n\n" << kUsage;
    return 2;
  }
  if (o.scenario.empty()) {
    std::cerr << "dlsim " << command << ": missing the scenario file\n\n" << kUsage;
    return 2;
  }
  return command == "run" ? cli::run_command(std::cout, o) : cli::check_command(std::cout, o);
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
  } catch (const po::error& e) {
    std::cerr << "dlsim: " << e.what() << "\n\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
