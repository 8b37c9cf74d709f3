// weft::AsyncFile: reads, writes and syncs from coroutines on io_uring (or
// the thread fallback, tests/unit/aio/async_file_fallback_test.cpp runs the
// same checks there), errors naming the path, short reads returned.
#include <gtest/gtest.h>

#include <cstddef>
#include <chrono>
#include <fstream>
#include <string>
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
