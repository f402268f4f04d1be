// The dlsim command line: which options each command takes, its --help, and the parse of
// `dlsim <command> ...` into the flags of that command alone. An option of another command is
// refused (naming it and the commands it belongs to), never silently accepted.
#pragma once
#include <string>

#include "cli/commands.hpp"
#include "experiment/calibrate.hpp"

namespace dlsim::cli {

struct CommandLine {
  std::string command;
  bool help = false;                       // --help / -h: print command_help(command), exit 0
  ScenarioOptions scenario;                // run, check, collective, sweep; catalog's listing
  experiment::CalibrateOptions calibrate;  // calibrate
  SweepFlags sweep;                        // sweep (-j also for validate)
  ValidateFlags validate;                  // validate
  KernelFlags kernel;                      // kernel
};

// The commands parsed here (plot parses its own arguments in Python; version and help take none).
bool is_parsed_command(const std::string& command);

// Parses the arguments after the command name. Throws UsageError for an option the command does
// not take, a missing or extra positional argument, or `--set key value` (suggesting key=value).
CommandLine parse_command_line(const std::string& command, int argc, char** argv);

// A command-line mistake: main() prints "dlsim <command>: <what>" and the command's usage line.
struct UsageError : std::runtime_error {
  UsageError(std::string command, const std::string& why) : std::runtime_error(why), command(std::move(command)) {}
  std::string command;
};

// "usage: dlsim run <scenario.yaml> [options]" and what the command does, then its options.
std::string command_help(const std::string& command);
// The first line of command_help: what main() prints after a usage error.
std::string command_usage(const std::string& command);

}  // namespace dlsim::cli
