// docs/guide/cluster.md: MPI between processes, weft inside each. Every
// rank reduces its share of [0, n) with parallel_reduce on weft's default
// pool, which has one worker per CPU that mpirun bound the rank to, and
// MPI_Allreduce adds the ranks' sums. Run it as
//   mpirun -np 2 --bind-to core ./example_mpi_hybrid
#include <mpi.h>

#include <weft/weft.hpp>

#include <cstdio>
#include <functional>

#include "expect.hpp"

namespace {

long sum_of(long lo, long hi) {  // lo + (lo + 1) + ... + (hi - 1), the slow way
  long s = 0;
  for (long i = lo; i < hi; ++i) s += i;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  const long n = 100'000'000;
  const long lo = n / ranks * rank;                                  // this rank's share of [0, n)
  const long hi = rank == ranks - 1 ? n : lo + n / ranks;
  const long mine = weft::parallel_reduce(lo, hi, 0L, std::plus<>{}, sum_of);   // on this rank's CPUs
  long total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  std::printf("rank %d of %d: CPUs %s, %d workers, partial sum %ld, total %ld\n", rank, ranks,
              weft::process_allowed_cpus().to_string().c_str(), weft::default_pool().size(), mine, total);
  expect(total == n * (n - 1) / 2, "the ranks' partial sums add up to n(n-1)/2");
  MPI_Finalize();
}
