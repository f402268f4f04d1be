// `dlsim sweep scenario.yaml [-j N] [--output store.h5] [--resume] [--set ...] [--quiet]`, alone
// or under `mpirun -n N`. Under MPI only rank 0 prints; a failure on any rank ends them all
// (MpiSession::abort), so that no rank waits forever for one that is gone.
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "experiment/config_error.hpp"
#include "experiment/progress.hpp"
#include "experiment/results.hpp"
#include "experiment/sweep_store.hpp"

namespace dlsim::cli {

int sweep_command(std::ostream& out, std::ostream& err, const ScenarioOptions& o, const SweepFlags& flags, int& argc, char**& argv) {
  experiment::SweepStoreOptions options;
  options.scenario = o.scenario;
  options.set_arguments = o.set_arguments;
  options.store = o.output;
  options.resume = flags.resume;
  options.threads = flags.threads;
  options.progress = !o.quiet && experiment::stderr_is_terminal();
  std::optional<experiment::MpiSession> mpi;
  if (experiment::MpiSession::launched() && experiment::MpiSession::built()) mpi.emplace(argc, argv);
  const bool lead = !mpi || mpi->rank() == 0;
  try {
    const experiment::SweepStoreReport r = run_sweep_store(options, mpi ? &*mpi : nullptr, err);
    if (lead && !o.quiet) {
      out << "dlsim " << experiment::dlsim_version() << ": swept " << r.variants << " variant" << (r.variants == 1 ? "" : "s") << " of "
          << o.scenario << " (" << r.kind << ")";
      if (mpi && mpi->size() > 1) out << " on " << mpi->size() << " MPI ranks";
      out << "\n";
      if (flags.resume) out << "resumed: " << r.resumed << " finished before, " << r.ran << " run now\n";
      out << "wrote " << r.store;
      if (!r.journal.empty()) out << " (journal: " << r.journal << ")";
      out << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    if (!mpi || mpi->size() == 1) throw;  // main() reports it
    if (lead) err << "error: " << e.what() << "\n" << std::flush;
    mpi->abort(dynamic_cast<const experiment::ConfigError*>(&e) ? 2 : 1);
    return 1;  // not reached
  }
}

}  // namespace dlsim::cli
