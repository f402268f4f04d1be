// `dlsim plot`: the plots are drawn by the Python package (dlsim.plot_command, matplotlib); this
// runs it as a child process, without a shell, with the package's folder first on PYTHONPATH.
// DLSIM_PYTHON (the interpreter) and DLSIM_PYTHONPATH (the build's copy of the package) are set
// in cli/CMakeLists.txt.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/commands.hpp"

#ifndef DLSIM_PYTHON
#define DLSIM_PYTHON "/usr/bin/python3"
#endif
#ifndef DLSIM_PYTHONPATH
#define DLSIM_PYTHONPATH "python"
#endif

extern char** environ;

namespace dlsim::cli {
namespace {

// This process's environment with `folder` put first on PYTHONPATH.
std::vector<std::string> environment_with_pythonpath(const std::string& folder) {
  std::vector<std::string> environment;
  std::string previous;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (text.rfind("PYTHONPATH=", 0) == 0) {
      previous = text.substr(std::strlen("PYTHONPATH="));
    } else {
      environment.push_back(text);
    }
  }
  environment.push_back("PYTHONPATH=" + folder + (previous.empty() ? "" : ":" + previous));
  return environment;
}

// argv/envp arrays for exec: pointers into `strings`, null-terminated.
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

int plot_command(const std::vector<std::string>& arguments, std::ostream& err) {
  const std::string package = DLSIM_PYTHONPATH;
  if (!std::filesystem::exists(std::filesystem::path(package) / "dlsim" / "plot_command.py")) {
    err << "error: the dlsim Python package is not in " << package << " (build the Python bindings first)\n";
    return 1;
  }
  std::vector<std::string> argv = {DLSIM_PYTHON, "-m", "dlsim.plot_command"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<std::string> environment = environment_with_pythonpath(package);
  std::vector<char*> argv_pointers = c_strings(argv);
  std::vector<char*> environment_pointers = c_strings(environment);
  pid_t child = 0;
  const int failed = posix_spawn(&child, DLSIM_PYTHON, nullptr, nullptr, argv_pointers.data(), environment_pointers.data());
  if (failed != 0) {
    err << "error: cannot start " << DLSIM_PYTHON << ": " << std::strerror(failed) << "\n";
    return 1;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      err << "error: waiting for " << DLSIM_PYTHON << ": " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  err << "error: " << DLSIM_PYTHON << " -m dlsim.plot_command ended by signal " << WTERMSIG(status) << "\n";
  return 1;
}

}  // namespace dlsim::cli
