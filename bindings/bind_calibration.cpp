// Calibration from Python: experiment::calibrate and experiment::validate_profile, their report
// returned as text (no progress bar), interruptible with Ctrl-C.
#include <sstream>

#include "bindings/bind_common.hpp"
#include "experiment/calibrate.hpp"

namespace dlsim::bindings {
namespace {

using Command = int (*)(const experiment::CalibrateOptions&, std::ostream&, std::ostream&);

// Runs `command` with the options, off the GIL; returns (exit code, report).
std::pair<int, std::string> report_of(Command command, experiment::CalibrateOptions o) {
  o.progress = false;
  return run_interruptibly([command, o](const sim::InterruptFlag* flag) mutable {
    o.interrupt = flag;
    std::ostringstream report;
    const int code = command(o, report, report);
    return std::make_pair(code, report.str());
  });
}

}  // namespace

void bind_calibration(py::module_& m) {
  m.def("calibrate",
        [](const std::string& backend, const std::string& out, bool quick, int repeats, double max_spread, const std::string& device) {
          experiment::CalibrateOptions o;
          o.backend = backend;
          o.out = out;
          o.quick = quick;
          o.repeats = repeats;
          o.max_spread = max_spread;
          o.device = device;
          return report_of(&experiment::calibrate, o);
        },
        py::arg("backend"), py::arg("out"), py::arg("quick"), py::arg("repeats"), py::arg("max_spread"), py::arg("device"),
        "Measures micro-kernels, fits and writes a profile; returns (exit code, report).");
  m.def("validate_profile",
        [](const std::string& profile, const std::string& backend, int repeats, double max_spread) {
          experiment::CalibrateOptions o;
          o.validate = profile;
          o.backend = backend;
          o.repeats = repeats;
          o.max_spread = max_spread;
          return report_of(&experiment::validate_profile, o);
        },
        py::arg("profile"), py::arg("backend"), py::arg("repeats"), py::arg("max_spread"),
        "Predicts held-out kernels from a profile, measures them here; returns (exit code, report).");
}

}  // namespace dlsim::bindings
