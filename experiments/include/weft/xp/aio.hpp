// weft/xp/aio.hpp — coroutines that wait on time, on each other and on the
// disk without holding a worker (weft/aio/).
//
// Workloads, each against the peers that do the same job:
//   timers       N coroutines each sleeping a seeded random 1-10 ms: weft
//                sleep_until on a pool, Boost.Asio steady_timer awaitables
//                on an io_context run by as many threads. Lateness (median,
//                p99) and process CPU.
//   pingpong     two coroutines bouncing a message through two Channel<int>
//                of capacity 1; two threads doing the same through
//                weft::MpmcQueue (spin, then park) and through a
//                mutex+condition-variable queue. ns per message.
//   fanin        P producers, one consumer, capacity 256: coroutines with a
//                Channel, threads with MpmcQueue and with the mutex+condvar
//                queue. ns per message and process CPU.
//   random-read  4 KiB reads at seeded random offsets of one file, `depth`
//                reads in flight: weft AsyncFile coroutines (io_uring), a
//                thread per read in flight with pread, a pool of `workers`
//                threads with pread. MB/s and CPU seconds per GB.
//   seq-read     K files of S MiB read whole in 256 KiB chunks: AsyncFile
//                (a coroutine per file), a thread per file with pread, a
//                pool of `workers` threads with pread, weft::Reader on one
//                thread. MB/s and CPU seconds per GB.
// Files are read from the page cache (warm: read once before timing), or
// with --cold after POSIX_FADV_DONTNEED, whose effect is checked with
// mincore and stated. Every answer is checked (lateness never negative, the
// sums of the messages, a word of every block read).
#pragma once

#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

const std::vector<std::string>& aio_variants();
const std::vector<std::string>& aio_workloads();

struct AioParams {
  std::vector<std::string> workloads = aio_workloads();
  int timers = 10'000;      // coroutines per timers run
  int messages = 200'000;   // per pingpong / fanin run
  int producers = 4;        // fanin
  int reads = 32'768;       // 4 KiB reads per random-read run
  int depth = 32;           // reads in flight
  int file_mb = 128;        // the random-read file
  int files = 8;            // seq-read
  int seq_file_mb = 16;     // each seq-read file
  bool cold = false;        // drop the files' pages before each file run
  std::string dir;          // where the files go; empty: the temp directory
  std::vector<int> workers; // empty: available_parallelism()
  std::vector<std::string> variants = aio_variants();
  int reps = 5;
};

Result run_aio(const AioParams& p);

}  // namespace weft::xp
