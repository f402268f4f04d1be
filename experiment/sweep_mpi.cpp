#include "experiment/sweep_mpi.hpp"

#include <cstdlib>
#include <stdexcept>

#ifdef DLSIM_HAVE_MPI
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "experiment/results.hpp"
#include "experiment/sweep_journal.hpp"
#endif

namespace dlsim::experiment {

bool MpiSession::launched() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

#ifndef DLSIM_HAVE_MPI

bool MpiSession::built() { return false; }
MpiSession::MpiSession(int&, char**&) { throw std::runtime_error("this dlsim was built without MPI (install libopenmpi-dev and rebuild)"); }
MpiSession::~MpiSession() = default;
void MpiSession::abort(int code) const { std::exit(code); }
void mpi_coordinate(const std::vector<Scenario>&, const std::vector<std::size_t>&, const std::function<void(std::size_t, Table&&)>&) {
  throw std::runtime_error("this dlsim was built without MPI");
}
std::size_t mpi_work(const SweepSource&, const std::vector<std::vector<std::string>>&) {
  throw std::runtime_error("this dlsim was built without MPI");
}

#else

namespace {

enum Tag : int { kReady = 1, kResult = 2, kError = 3, kWork = 4, kStop = 5 };

std::string index_bytes(std::uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); }
std::uint64_t index_of(const std::string& bytes) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

void send(const std::string& bytes, int to, int tag) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

// Receives the message `status` announced.
std::string receive(const MPI_Status& status) {
  int size = 0;
  MPI_Get_count(&status, MPI_BYTE, &size);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  MPI_Recv(bytes.data(), size, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

// What the coordinator's local thread hands back to the MPI thread.
struct LocalOutcome {
  std::size_t variant = 0;
  Table table;
  std::string error;  // non-empty: the variant failed
};

}  // namespace

bool MpiSession::built() { return true; }

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);  // MPI_Abort does not return; this tells the compiler so
}

void mpi_coordinate(const std::vector<Scenario>& scenarios, const std::vector<std::size_t>& todo,
                    const std::function<void(std::size_t, Table&&)>& finished) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::size_t next = 0;  // into todo; taken only by this thread
  std::mutex lock;
  std::deque<LocalOutcome> outcomes;
  std::string first_error;
  // The local thread runs one variant at a time, taking them from this thread under the lock.
  std::atomic<bool> local_busy{false};
  std::thread local;
  const auto take = [&]() -> long long { return next < todo.size() && first_error.empty() ? static_cast<long long>(todo[next++]) : -1; };
  const auto start_local = [&] {
    const long long v = take();
    if (v < 0) return;
    local_busy = true;
    if (local.joinable()) local.join();
    local = std::thread([&, v] {
      LocalOutcome o;
      o.variant = static_cast<std::size_t>(v);
      try {
        o.table = run(scenarios[o.variant]).table;
      } catch (const std::exception& e) {
        o.error = e.what();
      }
      const std::lock_guard<std::mutex> guard(lock);
      outcomes.push_back(std::move(o));
      local_busy = false;
    });
  };
  start_local();
  int workers = ranks - 1;  // ranks still to be told to stop
  const auto local_pending = [&] {
    const std::lock_guard<std::mutex> guard(lock);
    return local_busy || !outcomes.empty();
  };
  while (workers > 0 || local_pending()) {
    bool idle = true;
    int flag = 0;
    MPI_Status status;
    if (workers > 0) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (flag) {
      idle = false;
      const std::string bytes = receive(status);
      if (status.MPI_TAG == kResult) {
        finished(static_cast<std::size_t>(index_of(bytes)), deserialize_table(bytes.substr(8)));
      } else if (status.MPI_TAG == kError && first_error.empty()) {
        first_error = "sweep variant " + std::to_string(index_of(bytes)) + " on rank " + std::to_string(status.MPI_SOURCE) + ": " + bytes.substr(8);
      }
      const long long v = take();
      if (v >= 0) {
        send(index_bytes(static_cast<std::uint64_t>(v)), status.MPI_SOURCE, kWork);
      } else {
        send("", status.MPI_SOURCE, kStop);
        --workers;
      }
    }
    std::deque<LocalOutcome> ready;
    {
      const std::lock_guard<std::mutex> guard(lock);
      ready.swap(outcomes);
    }
    for (LocalOutcome& o : ready) {
      idle = false;
      if (!o.error.empty()) {
        if (first_error.empty()) first_error = "sweep variant " + std::to_string(o.variant) + " on rank 0: " + o.error;
      } else {
        finished(o.variant, std::move(o.table));
      }
    }
    if (!ready.empty()) start_local();  // the local thread finished its variant
    if (idle) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (local.joinable()) local.join();
  if (!first_error.empty()) throw std::runtime_error(first_error);
}

std::size_t mpi_work(const SweepSource& source, const std::vector<std::vector<std::string>>& variants) {
  std::size_t ran = 0;
  send("", 0, kReady);
  for (;;) {
    // Wait for rank 0 without spinning (a blocking probe busy-polls in Open MPI, taking a core
    // from the ranks that compute on the same machine).
    MPI_Status status;
    for (int flag = 0;;) {
      MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (flag) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const std::string bytes = receive(status);
    if (status.MPI_TAG == kStop) return ran;
    const std::uint64_t v = index_of(bytes);
    try {
      if (v >= variants.size()) throw std::runtime_error("no such variant");
      const Scenario scenario = load_variant(source, variants[static_cast<std::size_t>(v)], static_cast<std::size_t>(v));
      send(index_bytes(v) + serialize_table(run(scenario).table), 0, kResult);
      ++ran;
    } catch (const std::exception& e) {
      send(index_bytes(v) + e.what(), 0, kError);
    }
  }
}

#endif

}  // namespace dlsim::experiment
