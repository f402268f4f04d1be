// Optional parts of dlsim that pull in large system libraries live in shared objects of their
// own ("plugins"), loaded only by the command that needs them: the CUDA calibration backend
// (cuBLAS, cuBLASLt and the CUDA runtime map about 200 MiB and take about 70 ms to load, even
// for `dlsim --version`) and the MPI transport of `dlsim sweep` under mpirun. Every other command
// starts without them.
//
// A plugin of this build is looked for, in order: in $DLSIM_PLUGIN_DIR when it is set; beside the
// running executable; beside the shared object that holds this code (the Python module); in the
// build folder it was built in. Loaded plugins are never unloaded: objects they made may live
// until the process ends (and unloading the CUDA runtime at exit is known to crash).
#pragma once
#include <string>

namespace dlsim::sim {

// The path of plugin `file_name` (e.g. "dlsim-cuda.so"), or "" when no such file exists: this
// build did not make it (CUDA or MPI was not found at configure time).
std::string find_plugin(const std::string& file_name);

// Loads the plugin at `path` and returns the address of its C symbol `symbol`; throws
// std::runtime_error with the loader's reason (a missing library, a missing symbol).
// `export_symbols`: make the plugin's libraries visible to objects loaded after it (RTLD_GLOBAL;
// Open MPI loads its own components that way).
void* load_plugin_symbol(const std::string& path, const std::string& symbol, bool export_symbols = false);

}  // namespace dlsim::sim
