// weft::AsyncFile: reads, writes and syncs from coroutines on io_uring (or
// the thread fallback, tests/unit/aio/async_file_fallback_test.cpp runs the
// same checks there), errors naming the path, short reads returned.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "async_file_checks.hpp"
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

TEST(AsyncFile, WritesSyncsAndReadsBack) { weft::test::check_write_sync_read(); }
TEST(AsyncFile, AShortReadAtTheEndIsReturned) { weft::test::check_short_reads(); }
TEST(AsyncFile, ManyConcurrentReadsGetTheirOwnBytes) { weft::test::check_concurrent_reads(300); }
TEST(AsyncFile, ErrorsNameThePathAndTheOperation) { weft::test::check_errors(); }
TEST(AsyncFile, AStopBeforeSubmissionCancels) { weft::test::check_stop(); }

}  // namespace
