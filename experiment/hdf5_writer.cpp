// write_hdf5 (writers.hpp): the results file through the plugin dlsim-hdf5.so, written to a
// temporary file and renamed into place (atomic_file.hpp). The layout is in hdf5/hdf5_plugin.cpp
// and scenarios/README.md.
#include <future>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "experiment/atomic_file.hpp"
#include "experiment/hdf5_plugin_abi.hpp"
#include "experiment/writers.hpp"
#include "sim/shared_library.hpp"

namespace dlsim::experiment {
namespace {

// Finds and loads the plugin; throws with the reason when it cannot.
WriteHdf5Function load_writer() {
  const std::string plugin = sim::find_plugin(kHdf5PluginFile);
  if (plugin.empty()) {
    throw std::runtime_error(std::string("the HDF5 writer ") + kHdf5PluginFile +
                             " is not beside dlsim (build it, or write output.csv instead)");
  }
  return reinterpret_cast<WriteHdf5Function>(sim::load_plugin_symbol(plugin, kHdf5PluginEntry));
}

// The one load of the process, started by preload_hdf5_writer or by the first write. A
// function-local static: its future, destroyed at exit, waits for a load still under way.
std::shared_future<WriteHdf5Function>& writer_load(bool start) {
  static std::mutex mutex;
  static std::shared_future<WriteHdf5Function> load;
  std::lock_guard<std::mutex> lock(mutex);
  if (!load.valid() && start) {
    try {
      load = std::async(std::launch::async, load_writer).share();
    } catch (const std::system_error&) {  // no thread to be had: load when the write asks
      load = std::async(std::launch::deferred, load_writer).share();
    }
  }
  return load;
}

}  // namespace

void preload_hdf5_writer() { writer_load(true); }

void write_hdf5(const std::string& path, const Results& results) {
  WriteHdf5Function write = nullptr;
  try {
    write = writer_load(true).get();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("cannot write " + path + ": " + e.what());
  }
  write_atomically(path, [&](const std::string& temporary) { write(temporary.c_str(), &results); });
}

}  // namespace dlsim::experiment
