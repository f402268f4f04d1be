// `dlsim sweep`: the variants of a scenario's sweep section run on local threads or across MPI
// ranks, each finished variant appended to a journal at once (sweep_journal.hpp) and the HDF5
// store rewritten from it as variants finish (at most every write_interval_s, and at the end).
// The store is a results file (the HDF5 layout of `dlsim run`): /results holds every row of
// every variant after its variant index and swept values, /variants lists each variant's
// overrides and whether it finished. A killed sweep restarted with resume runs only the variants
// the journal does not hold. Local and MPI runs, with any thread or rank count, write the same
// bytes.
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "experiment/sweep_mpi.hpp"

namespace dlsim::experiment {

struct SweepStoreOptions {
  std::string scenario;                    // the scenario file
  std::vector<std::string> set_arguments;  // --set, before the variants' own overrides
  std::string store;                       // HDF5 path; "": output.results, else results/<scenario stem>-sweep.h5
  bool resume = false;
  int threads = 0;                         // local run: 0 = one per core; under MPI one per rank
  bool progress = false;                   // a progress bar on `err`
  double write_interval_s = 1.0;
};

struct SweepStoreReport {
  std::size_t variants = 0;
  std::size_t resumed = 0;  // already in the journal when the run began
  std::size_t ran = 0;      // by this process (rank 0: by all ranks)
  std::string store;
  std::string journal;  // "" once removed: every variant finished and is in the store
  std::string kind;
};

// Throws ConfigError for a bad scenario or variant (before anything runs) or a scenario without
// sweep.grid/zip/random; std::runtime_error for a journal of another sweep or a failed variant.
SweepStoreReport run_sweep_store(const SweepStoreOptions& options, const MpiSession* mpi, std::ostream& err);

// The store path a scenario gets without --output.
std::string default_store_path(const std::string& scenario);

}  // namespace dlsim::experiment
