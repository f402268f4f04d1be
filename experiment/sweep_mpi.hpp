// Sweeps across machines on MPI (Open MPI): `mpirun -n N dlsim sweep ...`. Rank 0 validates
// every variant, hands them out one at a time to whichever rank asks (dynamic load balancing),
// runs variants itself on one thread beside that, and gathers every result; the other ranks
// expand the same variant list from the same files, load the variants they are given, and send
// back their result tables (serialize_table): no scenario travels. MPI itself is reached
// through the plugin dlsim-mpi.so (mpi_plugin_abi.hpp), loaded only here; without it (Open MPI
// not found at build time), MpiSession cannot be made.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiment/scenario.hpp"
#include "experiment/sweep.hpp"
#include "experiment/table.hpp"

namespace dlsim::experiment {

struct MpiApi;

class MpiSession {
 public:
  static bool built();     // this build has the MPI plugin
  static bool launched();  // this process was started by mpirun (its environment says so)
  // Loads the plugin, MPI_Init_thread (funneled: only this thread calls MPI); std::runtime_error
  // when there is no plugin or it cannot be loaded.
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  // Ends every rank of the job at once with `code` (MPI_Abort): after a failure, so that no rank
  // waits for one that is gone.
  [[noreturn]] void abort(int code) const;
  int size() const { return size_; }

  // Byte messages between ranks, with a tag.
  struct Message {
    int from = 0, tag = 0, size = 0;
  };
  void send(const std::string& bytes, int to, int tag) const;
  // A message from `source` (-1: any rank) waiting to be received, without waiting for one.
  std::optional<Message> probe(int source) const;
  std::string receive(const Message& message) const;

 private:
  const MpiApi* api_ = nullptr;
  int rank_ = 0, size_ = 1;
};

// Rank 0: runs `todo` across all ranks; calls finished(index, table) on this thread as results
// arrive. Throws std::runtime_error naming the variant and rank when a variant fails (after
// every rank has stopped).
void mpi_coordinate(const MpiSession& mpi, const std::vector<Scenario>& scenarios, const std::vector<std::size_t>& todo,
                    const std::function<void(std::size_t, Table&&)>& finished);
// Ranks > 0: loads and runs the variants rank 0 sends until it says stop, waiting without
// spinning. Returns how many variants it ran.
std::size_t mpi_work(const MpiSession& mpi, const SweepSource& source, const std::vector<std::vector<std::string>>& variants);

}  // namespace dlsim::experiment
