// One MPI rank's view of what it was given: writes <dir>/probe.<rank>.json
// with the CPUs weft may use in this process and the worker count of its
// default pool. mpirun_check.py compares it with the rank's `weft topo
// --json`. A file per rank, because the ranks' stdout lines interleave.
#include <mpi.h>

#include <weft/weft.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output dir>\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string path = std::string(argv[1]) + "/probe." + std::to_string(rank) + ".json";
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    std::perror(path.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::string cpus;
  for (const int cpu : weft::process_allowed_cpus()) cpus += (cpus.empty() ? "" : ", ") + std::to_string(cpu);
  std::fprintf(out, "{\"rank\": %d, \"allowed_cpus\": [%s], \"default_pool_workers\": %d}\n", rank, cpus.c_str(),
               weft::default_pool().size());
  const bool written = std::fclose(out) == 0;
  if (!written) std::perror(path.c_str());
  MPI_Finalize();
  return written ? 0 : 1;
}
