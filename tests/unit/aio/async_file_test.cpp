// weft::AsyncFile: reads, writes and syncs from coroutines on io_uring (or
// the thread fallback, tests/unit/aio/async_file_fallback_test.cpp runs the
// same checks there), errors naming the path, short reads returned.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "async_file_checks.hpp"
#include "future_support.hpp"
#include "temp_dir.hpp"
#include "watchdog.hpp"
#include "weft/detail/exec/fault_injection.hpp"
#include "error_recorder.hpp"

namespace {

TEST(AsyncFile, UsesIoUringWhereTheKernelAllowsIt) {
  // A host that refuses io_uring falls back, saying so once: both are right.
  weft::test::ErrorRecorder errors;
  const std::string_view b = weft::AsyncFile::backend();
  if (b == "threads") {
    GTEST_SKIP() << "io_uring is refused here; the fallback test covers this host";
  }
  EXPECT_EQ(b, "io_uring");
  EXPECT_TRUE(errors.entries().empty());
}

TEST(AsyncFile, AWaitOnTheWorkerSubmitsTheReadsItHeldBack) {
  // One worker: a coroutine's read is held back for the worker's batch,
  // and the worker's next task blocks in Future::get() on that coroutine.
  // The helping wait must submit the batch (detail/exec/deferred.hpp), or
  // the read never reaches the kernel and the wait never ends.
  weft::test::Watchdog dog("a helping wait on a held-back read", std::chrono::seconds(60));
  weft::test::TempDir dir;
  const std::string path = (dir / "h.bin").string();
  { std::ofstream(path, std::ios::binary) << "held back"; }
  weft::ThreadPool pool(weft::test::workers(1));
  auto file = weft::AsyncFile::open(path, weft::AsyncFile::read_only);
  auto read = [&]() -> weft::Task<std::size_t> {
    std::vector<std::byte> buf(64);
    co_return co_await file.read_at(std::span<std::byte>(buf), 0);
  };
  // The outer task runs on the worker (spawn never runs in place) and waits
  // there, helping: its helping runs the read, which holds its SQE back.
  auto outer = [&]() -> weft::Task<std::size_t> { co_return pool.spawn(read()).get(); };
  for (int i = 0; i < 20; ++i) EXPECT_EQ(pool.spawn(outer()).get(), 9U) << "round " << i;
}

TEST(AsyncFile, ACompletionTakenWhileAnotherCoroutineGoesOnIsNotHeldBehindIt) {
  // One worker runs coroutine b, whose read of an empty pipe waits in the
  // kernel, and then coroutine a, whose 64 KiB reads of a cached file
  // complete inside their submissions, so that a never suspends. b's
  // completion comes in at one of a's submissions. b must go where the
  // other worker can take it; a's worker's hand-off slot would keep it
  // until a had made every read.
  if (weft::AsyncFile::backend() != "io_uring") GTEST_SKIP() << "the thread fallback has no submissions to share";
  weft::test::Watchdog dog("a completion behind a coroutine that goes on", std::chrono::seconds(60));
  weft::test::TempDir dir;
  const std::string data = (dir / "d.bin").string();
  const std::string fifo = (dir / "p").string();
  { std::ofstream(data, std::ios::binary) << std::string(64 * 1024, 'x'); }
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  weft::ThreadPool pool(weft::test::workers(2));
  auto file = weft::AsyncFile::open(data, weft::AsyncFile::read_only);
  auto pipe = weft::AsyncFile::open(fifo, weft::AsyncFile::read_write);  // O_RDWR: the open does not wait for a writer
  constexpr int kReads = 5000;
  // Each flag: set by one thread, read by others; release/acquire order
  // what was done before it.
  std::atomic<bool> a_started{false};
  std::atomic<int> a_reads{0};
  std::atomic<int> reads_when_b_went_on{-1};
  // The other worker is held until a starts, so that b and a both start on
  // the worker that takes the root.
  pool.post([&] {
    while (!a_started.load(std::memory_order_acquire)) std::this_thread::yield();
  });
  auto b = [&]() -> weft::Task<> {
    std::vector<std::byte> one(1);
    EXPECT_EQ(co_await pipe.read_at(std::span<std::byte>(one), 0), 1U);
    reads_when_b_went_on.store(a_reads.load(std::memory_order_acquire), std::memory_order_release);
  };
  auto a = [&]() -> weft::Task<> {
    a_started.store(true, std::memory_order_release);
    std::vector<std::byte> buf(64 * 1024);
    for (int i = 0; i < kReads; ++i) {
      EXPECT_EQ(co_await file.read_at(std::span<std::byte>(buf), 0), buf.size());
      a_reads.fetch_add(1, std::memory_order_release);
    }
  };
  // when_all runs b in place and queues a: both on this worker.
  auto root = [&]() -> weft::Task<> { co_await weft::when_all(b(), a()); };
  weft::Future<void> done = pool.spawn(root());
  while (!a_started.load(std::memory_order_acquire)) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // b's read reaches the kernel with a's first ones
  const int w = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(w, 0);
  ASSERT_EQ(::write(w, "!", 1), 1);
  ::close(w);
  done.get();
  const int seen = reads_when_b_went_on.load(std::memory_order_acquire);
  ASSERT_GE(seen, 0);
  EXPECT_LT(seen, kReads) << "b went on only after a's last read";
}

TEST(AsyncFile, WritesSyncsAndReadsBack) { weft::test::check_write_sync_read(); }

TEST(AsyncFile, CompletionsWhoseSignalsAreLostAreTakenByTheSweep) {
  // With every eventfd signal lost, an fsync (io_uring runs it on a kernel
  // worker, so it completes after its submitter has left the ring) and
  // anything else the submitting worker does not take itself reach their
  // coroutines only through the completion thread's periodic sweep; without
  // the sweep this hangs and the watchdog fails it.
  if (weft::AsyncFile::backend() != "io_uring") GTEST_SKIP() << "io_uring is refused here: no eventfd to lose";
  struct Lost {
    // relaxed: set before the pool below exists, cleared after it is gone.
    Lost() { weft::detail::g_aio_signals_lost.store(true, std::memory_order_relaxed); }
    ~Lost() { weft::detail::g_aio_signals_lost.store(false, std::memory_order_relaxed); }
  } lost;
  weft::test::check_write_sync_read();
  weft::test::check_concurrent_reads(100);
}
TEST(AsyncFile, AShortReadAtTheEndIsReturned) { weft::test::check_short_reads(); }
TEST(AsyncFile, ManyConcurrentReadsGetTheirOwnBytes) { weft::test::check_concurrent_reads(300); }
TEST(AsyncFile, BigReadsAmongHeldBackSmallOnesGetTheirOwnBytes) {
  weft::test::check_concurrent_reads(300, true);
}
TEST(AsyncFile, ErrorsNameThePathAndTheOperation) { weft::test::check_errors(); }
TEST(AsyncFile, AStopBeforeSubmissionCancels) { weft::test::check_stop(); }

}  // namespace
