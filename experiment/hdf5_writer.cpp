// write_hdf5 (writers.hpp): the results file through the plugin dlsim-hdf5.so, written to a
// temporary file and renamed into place (atomic_file.hpp). The layout is in hdf5/hdf5_plugin.cpp
// and scenarios/README.md.
#include <stdexcept>

#include "experiment/atomic_file.hpp"
#include "experiment/hdf5_plugin_abi.hpp"
#include "experiment/writers.hpp"
#include "sim/shared_library.hpp"

namespace dlsim::experiment {

void write_hdf5(const std::string& path, const Results& results) {
  const std::string plugin = sim::find_plugin(kHdf5PluginFile);
  if (plugin.empty()) {
    throw std::runtime_error("cannot write " + path + ": the HDF5 writer " + kHdf5PluginFile +
                             " is not beside dlsim (build it, or write output.csv instead)");
  }
  const auto write = reinterpret_cast<WriteHdf5Function>(sim::load_plugin_symbol(plugin, kHdf5PluginEntry));
  write_atomically(path, [&](const std::string& temporary) { write(temporary.c_str(), &results); });
}

}  // namespace dlsim::experiment
