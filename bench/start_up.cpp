// Whole-process cost of short dlsim commands, as a user feels it: wall time from fork to exit and
// peak resident memory (the child's ru_maxrss), the median and the largest of --reps runs each.
//   dlsim --version
//   dlsim run scenarios/gpt3-175b-a100.yaml, without its trace (a copy with output.trace removed)
//   dlsim collective: one 1 GiB ring all-reduce over 512 GPUs (64 p4d nodes), the case that
//     ASTRA-sim's analytical backend takes about 3.7 s for on this machine (issue 23)
// Usage: bench_start_up [--reps N] [--dlsim PATH]   (default 21 runs of this build's dlsim)
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Sample {
  double wall_s = 0;
  long max_rss_kib = 0;
  int exit_code = -1;
};

// Runs `args` with stdout and stderr to /dev/null.
Sample run_once(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  Sample s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.max_rss_kib = usage.ru_maxrss;
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The GPT-3 scenario without its iteration trace, results into `dir`.
std::string gpt3_without_trace(const std::filesystem::path& dir) {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100.yaml");
  std::ostringstream out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("trace:") != std::string::npos && line.rfind("  ", 0) == 0) continue;
    out << line << "\n";
  }
  const std::filesystem::path path = dir / "gpt3-175b-a100-no-trace.yaml";
  std::ofstream(path) << out.str();
  return path.string();
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  std::string dlsim = DLSIM_EXECUTABLE;  // --dlsim: another build's, to compare
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--dlsim") dlsim = argv[i + 1];
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dlsim-bench-start-up-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string h5 = (dir / "out.h5").string();
  struct Case {
    std::string name;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases{
      {"dlsim --version", {dlsim, "--version"}},
      {"dlsim run gpt3-175b-a100 (no trace)", {dlsim, "run", gpt3_without_trace(dir), "--output", h5, "--quiet"}},
      {"dlsim collective 512-GPU 1 GiB ring", {dlsim, "collective", "--set", "sweep.nodes=[64]", "--set", "collective.algorithm=ring",
                                              "--set", "collective.sizes=[1GiB]", "--output", h5, "--quiet"}},
  };
  std::printf("%-40s %12s %12s %14s   (%d runs each)\n", "command", "median (ms)", "max (ms)", "peak RSS (MiB)", reps);
  int failed = 0;
  for (const Case& c : cases) {
    std::vector<double> walls;
    long rss = 0;
    run_once(c.args);  // warm the page cache
    for (int r = 0; r < reps; ++r) {
      const Sample s = run_once(c.args);
      if (s.exit_code != 0) {
        std::fprintf(stderr, "%s: exit code %d\n", c.name.c_str(), s.exit_code);
        ++failed;
        break;
      }
      walls.push_back(s.wall_s);
      rss = std::max(rss, s.max_rss_kib);
    }
    if (walls.empty()) continue;
    std::printf("%-40s %12.1f %12.1f %14.1f\n", c.name.c_str(), 1e3 * median(walls), 1e3 * *std::max_element(walls.begin(), walls.end()),
                static_cast<double>(rss) / 1024.0);
  }
  std::filesystem::remove_all(dir);
  return failed == 0 ? 0 : 1;
}
