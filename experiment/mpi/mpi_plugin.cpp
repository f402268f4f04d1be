// The plugin dlsim-mpi.so: MpiApi (../mpi_plugin_abi.hpp) on Open MPI. The only file of dlsim
// that includes mpi.h.
#include <mpi.h>

#include "experiment/mpi_plugin_abi.hpp"

namespace {

using dlsim::experiment::MpiApi;

void init(int* argc, char*** argv, int* rank, int* size) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

void finalize() { MPI_Finalize(); }

void abort_all(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

void send(const char* bytes, int size, int to, int tag) {
  MPI_Send(bytes, size, MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

int probe(int source, int* from, int* tag, int* size) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return 0;
  *from = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  MPI_Get_count(&status, MPI_BYTE, size);
  return 1;
}

void receive(char* bytes, int size, int from, int tag) {
  MPI_Recv(bytes, size, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

const MpiApi kApi{init, finalize, abort_all, send, probe, receive};

}  // namespace

extern "C" const MpiApi* dlsim_mpi_api() { return &kApi; }
