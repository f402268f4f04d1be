// What the bind_<layer>.cpp files share: their entry points, the conversion of result tables to
// Python, and running long work with the GIL released and Ctrl-C honoured.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <future>
#include <thread>
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

// The works in progress of run_interruptibly, so that the interpreter's exit can stop them: a
// work left running in a daemon thread would go on while exit() destroys the statics it uses.
// Process-wide state by nature (there is one interpreter), hence the one function-local static.
class RunningWorks {
 public:
  static RunningWorks& instance() {
    static RunningWorks works;
    return works;
  }
  // False when the interpreter is exiting (no new work then).
  bool add(sim::InterruptFlag* flag) {
    std::lock_guard lock(mutex_);
    if (exiting_) return false;
    flags_.insert(flag);
    return true;
  }
  void remove(sim::InterruptFlag* flag) {
    std::lock_guard lock(mutex_);
    flags_.erase(flag);
    changed_.notify_all();
  }
  // True once the interpreter's exit has begun (stop_all): a thread must not take the GIL again.
  bool exiting() {
    std::lock_guard lock(mutex_);
    return exiting_;
  }
  // Called by Python's atexit (bind_module.cpp), before finalization: stops every work and waits
  // until each has ended (a run notices its flag within 4,096 events).
  void stop_all() {
    std::unique_lock lock(mutex_);
    exiting_ = true;
    for (sim::InterruptFlag* f : flags_) *f = true;
    changed_.wait(lock, [this] { return flags_.empty(); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<sim::InterruptFlag*> flags_;
  bool exiting_ = false;
};

// Runs work(flag) on a worker thread with the GIL released. The calling thread wakes every
// 50 ms; the main thread then takes the GIL to let Python handle signals: on Ctrl-C it sets the
// flag, waits for the work to stop (the work checks the flag and throws sim::Interrupted), and
// raises KeyboardInterrupt. A thread the interpreter exits under (a daemon thread) stops the work
// and never returns to Python.
// C++ exceptions of the work are rethrown here, with the GIL held, for pybind11 to translate.
template <class Work>
auto run_interruptibly(Work work) {
  sim::InterruptFlag flag{false};
  bool interrupted = false;
  const py::module_ threading = py::module_::import("threading");
  const bool main_thread = threading.attr("current_thread")().is(threading.attr("main_thread")());
  if (!RunningWorks::instance().add(&flag)) throw std::runtime_error("the Python interpreter is exiting");
  auto future = std::async(std::launch::async, [&work, &flag] {
    struct Done {  // however the work ends
      sim::InterruptFlag* flag;
      ~Done() { RunningWorks::instance().remove(flag); }
    } done{&flag};
    return work(&flag);
  });
  {
    py::gil_scoped_release release;
    // The interpreter is exiting under this thread: taking the GIL now ends the thread by
    // pthread_exit, whose unwinding through gil_scoped_release's noexcept destructor aborts the
    // process. So the thread never touches Python again: it stops the work and waits for the
    // process to end. Exiting starts at atexit (stop_all), before _Py_IsFinalizing turns true:
    // a work stopped there ends while finalization has not begun, and a thread that then waited
    // for the GIL would get it only inside finalization (the abort this test guards against:
    // tests/python/test_hardening.py).
    const auto park_if_finalizing = [&] {
      if (!_Py_IsFinalizing() && !RunningWorks::instance().exiting()) return;
      flag = true;
      future.wait();
      release.disarm();
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    };
    while (future.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      park_if_finalizing();
      if (!main_thread) continue;  // signals are delivered to the main thread only
      py::gil_scoped_acquire acquire;
      if (!interrupted && PyErr_CheckSignals() != 0) {  // KeyboardInterrupt is now pending
        interrupted = true;
        flag = true;
      }
    }
    park_if_finalizing();
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
