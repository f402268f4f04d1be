#include "experiment/sweep_mpi.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "experiment/mpi_plugin_abi.hpp"
#include "experiment/results.hpp"
#include "experiment/sweep_journal.hpp"
#include "sim/shared_library.hpp"

namespace dlsim::experiment {

bool MpiSession::launched() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

bool MpiSession::built() { return !sim::find_plugin(kMpiPluginFile).empty(); }

MpiSession::MpiSession(int& argc, char**& argv) {
  const std::string path = sim::find_plugin(kMpiPluginFile);
  if (path.empty()) throw std::runtime_error("this dlsim was built without MPI (install libopenmpi-dev and rebuild)");
  // Global symbols: Open MPI loads components of its own that look for libmpi's symbols.
  const auto api = reinterpret_cast<MpiApiFunction>(sim::load_plugin_symbol(path, kMpiPluginEntry, true));
  api_ = api();
  api_->init(&argc, &argv, &rank_, &size_);
}

MpiSession::~MpiSession() { api_->finalize(); }

void MpiSession::abort(int code) const {
  api_->abort(code);
  std::exit(code);  // MPI_Abort does not return; this tells the compiler so
}

void MpiSession::send(const std::string& bytes, int to, int tag) const {
  api_->send(bytes.data(), static_cast<int>(bytes.size()), to, tag);
}

std::optional<MpiSession::Message> MpiSession::probe(int source) const {
  Message m;
  if (api_->probe(source, &m.from, &m.tag, &m.size) == 0) return std::nullopt;
  return m;
}

std::string MpiSession::receive(const Message& message) const {
  std::string bytes(static_cast<std::size_t>(message.size), '\0');
  api_->receive(bytes.data(), message.size, message.from, message.tag);
  return bytes;
}

namespace {

enum Tag : int { kReady = 1, kResult = 2, kError = 3, kWork = 4, kStop = 5 };
constexpr int kAnyRank = -1;

std::string index_bytes(std::uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); }
std::uint64_t index_of(const std::string& bytes) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

// What the coordinator's local thread hands back to the MPI thread.
struct LocalOutcome {
  std::size_t variant = 0;
  Table table;
  std::string error;  // non-empty: the variant failed
};

}  // namespace

void mpi_coordinate(const MpiSession& mpi, const std::vector<Scenario>& scenarios, const std::vector<std::size_t>& todo,
                    const std::function<void(std::size_t, Table&&)>& finished) {
  const int ranks = mpi.size();
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
    const std::optional<MpiSession::Message> message = workers > 0 ? mpi.probe(kAnyRank) : std::nullopt;
    if (message) {
      idle = false;
      const std::string bytes = mpi.receive(*message);
      if (message->tag == kResult) {
        finished(static_cast<std::size_t>(index_of(bytes)), deserialize_table(bytes.substr(8)));
      } else if (message->tag == kError && first_error.empty()) {
        first_error = "sweep variant " + std::to_string(index_of(bytes)) + " on rank " + std::to_string(message->from) + ": " + bytes.substr(8);
      }
      const long long v = take();
      if (v >= 0) {
        mpi.send(index_bytes(static_cast<std::uint64_t>(v)), message->from, kWork);
      } else {
        mpi.send("", message->from, kStop);
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

std::size_t mpi_work(const MpiSession& mpi, const SweepSource& source, const std::vector<std::vector<std::string>>& variants) {
  std::size_t ran = 0;
  mpi.send("", 0, kReady);
  for (;;) {
    // Wait for rank 0 without spinning (a blocking probe busy-polls in Open MPI, taking a core
    // from the ranks that compute on the same machine).
    std::optional<MpiSession::Message> message;
    while (!(message = mpi.probe(0))) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const std::string bytes = mpi.receive(*message);
    if (message->tag == kStop) return ran;
    const std::uint64_t v = index_of(bytes);
    try {
      if (v >= variants.size()) throw std::runtime_error("no such variant");
      const Scenario scenario = load_variant(source, variants[static_cast<std::size_t>(v)], static_cast<std::size_t>(v));
      mpi.send(index_bytes(v) + serialize_table(run(scenario).table), 0, kResult);
      ++ran;
    } catch (const std::exception& e) {
      mpi.send(index_bytes(v) + e.what(), 0, kError);
    }
  }
}

}  // namespace dlsim::experiment
