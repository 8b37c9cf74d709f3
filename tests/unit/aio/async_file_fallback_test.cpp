// weft::AsyncFile on its thread fallback, forced as a host that refuses
// io_uring would force it: the same checks as async_file_test.cpp, and the
// fallback said exactly once on the error handler.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "async_file_checks.hpp"
#include "error_recorder.hpp"

namespace {

TEST(AsyncFileFallback, IsSaidOnceAndServesEveryOperation) {
  weft::test::ErrorRecorder errors;
  ::setenv("WEFT_AIO_BACKEND", "threads", 1);  // before the first operation of this process
  EXPECT_EQ(weft::AsyncFile::backend(), "threads");
  weft::test::check_write_sync_read();
  weft::test::check_short_reads();
  weft::test::check_concurrent_reads(100);
  weft::test::check_errors();
  weft::test::check_stop();
  const auto e = errors.entries();
  ASSERT_EQ(e.size(), 1U);
  EXPECT_NE(e[0].where.find("4 blocking threads"), std::string::npos) << e[0].where;
}

}  // namespace
