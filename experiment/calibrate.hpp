// `dlsim calibrate`: measure micro-kernels with a backend, fit a profile, write it
// (profile_yaml.hpp); and `dlsim calibrate --validate`: predict held-out kernels from a profile
// and compare with measurements on this machine. The CLI only parses arguments and calls these.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "sim/interrupt.hpp"

namespace dlsim::experiment {

struct CalibrateOptions {
  std::string backend;        // "cpu" or "cuda"; validate: "" means the profile's backend
  std::string out;            // profile to write
  std::string validate;       // profile to validate (instead of calibrating)
  bool quick = false;         // the CI grid
  int repeats = 0;            // 0: 15 (7 with quick)
  double max_spread = 0.5;    // (p90 - p10) / median above which a case is unstable
  bool progress = true;       // progress bar on `err`
  std::string device;         // the catalog device this GPU is (e.g. H100-SXM): its datasheet
                              // peaks and its name in the profile; "" = found by description
  const sim::InterruptFlag* interrupt = nullptr;  // set: stop before the next case (sim::Interrupted)
  std::vector<std::string> import_tables;  // --import: measured kernel tables to fit (calibrate_import.hpp)
  std::string gpu;            // --gpu: which GPU of the tables (their gpu column)
  std::string layout_reference;  // --layout-reference: a table of every layout, for the layout
                                 // factors the imported tables cannot give (calibrate_import.hpp)
};

// Both return the exit code; bad options throw ConfigError, unstable runs UnstableError.
int calibrate(const CalibrateOptions& options, std::ostream& out, std::ostream& err);
int validate_profile(const CalibrateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlsim::experiment
