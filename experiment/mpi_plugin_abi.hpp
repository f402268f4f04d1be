// What the plugin dlsim-mpi.so exports (experiment/mpi/mpi_plugin.cpp): the few MPI calls a
// sweep needs, behind plain C functions, so that only the plugin links Open MPI and only
// `dlsim sweep` under mpirun loads it (sim/shared_library.hpp says why). Shared by the plugin
// and MpiSession (sweep_mpi.cpp); no MPI header.
#pragma once

namespace dlsim::experiment {

inline constexpr const char* kMpiPluginFile = "dlsim-mpi.so";
inline constexpr const char* kMpiPluginEntry = "dlsim_mpi_api";

// Every rank of MPI_COMM_WORLD; byte messages with a tag. A failed MPI call aborts the job
// (MPI's default error handler), as it did when dlsim called MPI directly.
struct MpiApi {
  // MPI_Init_thread (funneled: only the calling thread uses MPI), then this rank and the size.
  void (*init)(int* argc, char*** argv, int* rank, int* size);
  void (*finalize)();
  void (*abort)(int code);
  void (*send)(const char* bytes, int size, int to, int tag);
  // Non-blocking probe for a message from `source` (-1: any rank): 1 with its source, tag and
  // size when one is waiting, else 0.
  int (*probe)(int source, int* from, int* tag, int* size);
  // Receives the message a probe announced.
  void (*receive)(char* bytes, int size, int from, int tag);
};

using MpiApiFunction = const MpiApi* (*)();

}  // namespace dlsim::experiment
