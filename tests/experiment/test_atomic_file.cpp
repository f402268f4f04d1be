// write_atomically (issue 19): a symbolic link is written through, FIFOs, devices and folders are
// refused untouched, and temporary files left by killed runs are removed.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "experiment/atomic_file.hpp"

namespace dlsim::experiment {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& target, const std::string& text) {
  write_atomically(target, [&](const std::string& temporary) { std::ofstream(temporary) << text; });
}

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("dlsim-atomic-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AtomicFile, WritesThroughASymbolicLink) {
  std::ofstream(dir_ / "real.csv") << "old";
  fs::create_symlink("real.csv", dir_ / "link.csv");
  write_text((dir_ / "link.csv").string(), "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "link.csv")));
  EXPECT_EQ(read(dir_ / "real.csv"), "new");
  EXPECT_EQ(resolve_output((dir_ / "link.csv").string()), (dir_ / "real.csv").string());
}

TEST_F(AtomicFile, WritesThroughADanglingLinkChain) {
  fs::create_directories(dir_ / "sub");
  fs::create_symlink("sub/b.csv", dir_ / "a.csv");
  fs::create_symlink("c.csv", dir_ / "sub" / "b.csv");  // relative to its own folder
  write_text((dir_ / "a.csv").string(), "x");
  EXPECT_EQ(read(dir_ / "sub" / "c.csv"), "x");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "sub" / "b.csv")));
}

TEST_F(AtomicFile, RefusesFifoDeviceAndFolderUntouched) {
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  fs::create_symlink(dir_ / "pipe", dir_ / "to-pipe");
  fs::create_directories(dir_ / "folder");
  bool called = false;
  const auto write = [&](const std::string&) { called = true; };
  for (const auto& [target, why] : {std::pair{(dir_ / "pipe").string(), "FIFO"}, std::pair{(dir_ / "to-pipe").string(), "FIFO"},
                                    std::pair{std::string("/dev/null"), "device"}, std::pair{(dir_ / "folder").string(), "folder"}}) {
    EXPECT_NE(unwritable_reason(target).find(why), std::string::npos) << target;
    try {
      write_atomically(target, write);
      ADD_FAILURE() << "wrote to " << target;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(called);
  EXPECT_EQ(fs::status(dir_ / "pipe").type(), fs::file_type::fifo);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "to-pipe")));
  EXPECT_EQ(fs::status("/dev/null").type(), fs::file_type::character);
  EXPECT_EQ(unwritable_reason((dir_ / "new.csv").string()), "");
}

// A process that has exited is gone once reaped: its pid names a stale temporary file.
pid_t exited_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST_F(AtomicFile, RemovesTemporariesOfDeadRunsOnly) {
  const fs::path target = dir_ / "out.csv";
  const fs::path stale = target.string() + ".tmp-" + std::to_string(exited_pid());
  const fs::path live = target.string() + ".tmp-" + std::to_string(::getppid());  // a running process
  const fs::path other = dir_ / "other.csv.tmp-1";
  for (const auto& p : {stale, live, other}) std::ofstream(p) << "partial";
  write_text(target.string(), "done");
  EXPECT_EQ(read(target), "done");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

TEST_F(AtomicFile, FailedWriteLeavesTargetAndNoTemporary) {
  const fs::path target = dir_ / "out.csv";
  std::ofstream(target) << "old";
  EXPECT_THROW(write_atomically(target.string(),
                                [](const std::string& temporary) {
                                  std::ofstream(temporary) << "half";
                                  throw std::runtime_error("disk full");
                                }),
               std::runtime_error);
  EXPECT_EQ(read(target), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace dlsim::experiment
