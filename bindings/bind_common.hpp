// What the bind_<layer>.cpp files share: their entry points, the conversion of result tables to
// Python, and running long work with the GIL released and Ctrl-C honoured.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <future>
#include <utility>

#include "experiment/table.hpp"
#include "sim/interrupt.hpp"

namespace dlsim::bindings {

namespace py = pybind11;

void bind_errors(py::module_& m);       // bind_errors.cpp
void bind_experiment(py::module_& m);   // bind_experiment.cpp
void bind_models(py::module_& m);       // bind_models.cpp
void bind_calibration(py::module_& m);  // bind_calibration.cpp
void bind_kernel(py::module_& m);       // bind_kernel.cpp

// A table as a list of (name, unit, description, values): values a numpy array (float64, or
// int64 for counts) or a list of str. Copies: the Python side owns what it gets.
py::list table_to_python(const experiment::Table& table);

// Runs work(flag) on a worker thread with the GIL released. The calling (main) thread wakes
// every 50 ms to let Python handle signals: on Ctrl-C it sets the flag, waits for the work to
// stop (the work checks the flag and throws sim::Interrupted), and raises KeyboardInterrupt.
// C++ exceptions of the work are rethrown here, with the GIL held, for pybind11 to translate.
template <class Work>
auto run_interruptibly(Work work) {
  sim::InterruptFlag flag{false};
  bool interrupted = false;
  auto future = std::async(std::launch::async, [&work, &flag] { return work(&flag); });
  {
    py::gil_scoped_release release;
    while (future.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire acquire;
      if (!interrupted && PyErr_CheckSignals() != 0) {  // KeyboardInterrupt is now pending
        interrupted = true;
        flag = true;
      }
    }
  }
  if (interrupted) {
    try {
      future.get();
    } catch (...) {  // sim::Interrupted, or whatever the work was doing when it stopped
    }
    throw py::error_already_set();
  }
  return future.get();
}

}  // namespace dlsim::bindings
