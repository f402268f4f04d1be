// The extension module dlsim._core. Users import `dlsim`, whose Python modules wrap it
// (bindings/python/dlsim/); everything here is thin over experiment/.
#include "bindings/bind_common.hpp"
#include "experiment/results.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "dlsim's C++ core: scenario loading, runs, sweeps, catalog, calibration (use the dlsim package)";
  m.attr("__version__") = dlsim::experiment::dlsim_version();
  dlsim::bindings::bind_errors(m);
  dlsim::bindings::bind_experiment(m);
  dlsim::bindings::bind_models(m);
  dlsim::bindings::bind_calibration(m);
  dlsim::bindings::bind_kernel(m);
  // At the interpreter's exit, before finalization: stop runs and sweeps still going in daemon
  // threads, and wait for them (bind_common.hpp), without the GIL so that they can end.
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    py::gil_scoped_release release;
    dlsim::bindings::RunningWorks::instance().stop_all();
  }));
}
