// libFuzzer harness for the scenario loader (issue 19): any bytes in, and out either a loaded
// Scenario or a ConfigError located in the file. A finding is anything else: a crash, a
// sanitizer report, a hang, an exception of another type (a message with no file, line or key),
// or a loaded scenario whose configurations then fail to plan (what `dlsim check` does next).
// Built by tools/fuzz.sh (clang, -DDLSIM_FUZZ=ON); README.md "Robustness" has the figures.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "experiment/config_error.hpp"
#include "experiment/load.hpp"
#include "models/memory_model.hpp"

namespace {

constexpr const char* kName = "fuzz.yaml";

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Relative paths inside a scenario (catalogs, traces) resolve in an empty folder.
const std::string& empty_folder() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / "dlsim-fuzz-empty";
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

// What `dlsim check` does with a loaded training scenario: each configuration's plan and memory.
// With several configurations a point that cannot run is a row saying why (std::invalid_argument
// from plan_for, as `dlsim check` prints it); a lone configuration the loader accepted must plan.
void plan_every_configuration(const dlsim::experiment::Scenario& s) {
  // A plan search's candidates may not fit by design; a serving scenario has no training plan
  // (the loader already built its replica: serving_problem).
  if (s.cluster_sim || s.collective || s.search || s.serving) return;
  const bool several = s.node_counts().size() * s.plans().size() > 1;
  int configurations = 0;
  for (int nodes : s.node_counts()) {
    for (int i = 0; i < static_cast<int>(s.plans().size()); ++i) {
      if (++configurations > 64) return;  // enough: a sweep's configurations are validated alike
      try {
        const dlsim::models::ParallelPlan plan = s.plan_for(nodes, i);
        (void)dlsim::models::peak_memory(s.workload.model, plan);
      } catch (const std::invalid_argument&) {
        if (!several) throw;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const dlsim::experiment::Scenario s = dlsim::experiment::load_scenario_text(text, kName, {}, empty_folder());
    try {
      plan_every_configuration(s);
    } catch (const std::exception& e) {
      finding("a loaded scenario failed to plan", e.what());
    }
  } catch (const dlsim::experiment::ConfigError& e) {
    if (std::string(e.what()).rfind(std::string(kName) + ":", 0) != 0) finding("error not located in the file", e.what());
  } catch (const std::exception& e) {
    finding("unlocated exception", e.what());
  }
  return 0;
}
