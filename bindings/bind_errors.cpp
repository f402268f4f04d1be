// C++ exceptions as Python ones: ConfigError (bad input: file, line, column, key path) and
// CalibrationError as dlsim's own types (dlsim/errors.py), sim::Interrupted as
// KeyboardInterrupt. Others take pybind11's mapping (std::invalid_argument: ValueError,
// std::out_of_range: IndexError, any std::exception: RuntimeError): never a crash.
#include "bindings/bind_common.hpp"
#include "calibration/runner.hpp"
#include "experiment/config_error.hpp"

namespace dlsim::bindings {

void bind_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const experiment::ConfigError& e) {
      const py::object type = py::module_::import("dlsim.errors").attr("ConfigError");
      const auto& w = e.where();
      const py::object error = type(e.what(), w.file, w.line > 0 ? py::int_(w.line) : py::object(py::none()),
                                    w.column > 0 ? py::int_(w.column) : py::object(py::none()), e.key_path(), e.message());
      PyErr_SetObject(type.ptr(), error.ptr());
    } catch (const calibration::UnstableError& e) {
      const py::object type = py::module_::import("dlsim.errors").attr("CalibrationError");
      PyErr_SetObject(type.ptr(), type(e.what()).ptr());
    } catch (const sim::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });
}

}  // namespace dlsim::bindings
