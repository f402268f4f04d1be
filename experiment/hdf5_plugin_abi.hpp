// What the plugin dlsim-hdf5.so exports (experiment/hdf5/hdf5_plugin.cpp), shared by the plugin
// and write_hdf5() (hdf5_writer.cpp), which loads it only when a command writes a results file
// (sim/shared_library.hpp says why). No HDF5 header. The plugin is built from the same sources
// with the same compiler, so Results crosses as it is; errors come back as exceptions.
#pragma once

namespace dlsim::experiment {

struct Results;

inline constexpr const char* kHdf5PluginFile = "dlsim-hdf5.so";
inline constexpr const char* kHdf5PluginEntry = "dlsim_write_hdf5";
// Writes `results` to the file `path` (created or truncated); throws std::runtime_error.
using WriteHdf5Function = void (*)(const char* path, const Results* results);

}  // namespace dlsim::experiment
