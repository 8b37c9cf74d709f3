// weft/error.hpp: the one handler for errors that no caller can be told of.
// Each source (ThreadPool, TaskGroup, Writer destructors) reaches an
// installed handler; the default writes one line per error to stderr.
#include "weft/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "error_recorder.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/io/writer.hpp"

namespace {

weft::PoolOptions two_workers() {
  weft::PoolOptions o;
  o.workers = 2;
  return o;
}

void destroy_pool_with_unrethrown_posts() {
  weft::ThreadPool pool(two_workers());
  pool.post([] { throw std::runtime_error("posted task failed"); });
  pool.post([] { throw std::runtime_error("posted task failed"); });
}

void destroy_group_with_unwaited_exception() {
  weft::ThreadPool pool(two_workers());
  weft::TaskGroup g(pool);
  g.run([] { throw std::logic_error("group task failed"); });
}

void destroy_writer_with_unflushed_failure() {
  weft::Writer w = weft::Writer::create("/dev/full");
  w.put('x');
}

TEST(ErrorHandler, ThreadPoolDestructorReportsAPostedException) {
  weft::test::ErrorRecorder recorder;
  destroy_pool_with_unrethrown_posts();
  const auto got = recorder.entries();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_NE(got[0].where.find("weft::ThreadPool"), std::string::npos) << got[0].where;
  EXPECT_NE(got[0].where.find("(1 more dropped)"), std::string::npos) << got[0].where;
  EXPECT_EQ(got[0].what, "posted task failed");
}

TEST(ErrorHandler, TaskGroupDestructorReportsAnUnwaitedException) {
  weft::test::ErrorRecorder recorder;
  destroy_group_with_unwaited_exception();
  const auto got = recorder.entries();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_NE(got[0].where.find("weft::TaskGroup"), std::string::npos) << got[0].where;
  EXPECT_EQ(got[0].what, "group task failed");
}

TEST(ErrorHandler, WriterDestructorReportsAFailedFlush) {
  weft::test::ErrorRecorder recorder;
  destroy_writer_with_unflushed_failure();
  const auto got = recorder.entries();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_NE(got[0].where.find("weft::Writer"), std::string::npos) << got[0].where;
  EXPECT_EQ(got[0].code, 28);  // ENOSPC
  EXPECT_NE(got[0].what.find("'/dev/full'"), std::string::npos) << got[0].what;
}

TEST(ErrorHandler, NullRestoresTheDefaultAndSetReturnsThePrevious) {
  const weft::ErrorHandler before = weft::set_error_handler(nullptr);
  EXPECT_EQ(before, &weft::print_error);
  const auto mine = [](const weft::UnhandledError&) noexcept {};
  EXPECT_EQ(weft::set_error_handler(mine), &weft::print_error);
  EXPECT_EQ(weft::set_error_handler(nullptr), static_cast<weft::ErrorHandler>(mine));
}

TEST(ErrorHandler, DefaultPrintsOneLinePerErrorNamingWhereAndWhat) {
  ASSERT_EQ(weft::set_error_handler(nullptr), &weft::print_error);
  ::testing::internal::CaptureStderr();
  destroy_pool_with_unrethrown_posts();
  destroy_group_with_unwaited_exception();
  destroy_writer_with_unflushed_failure();
  weft::report_error("my destructor", std::make_exception_ptr(42));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 4) << err;
  EXPECT_NE(err.find("weft::ThreadPool: a posted task threw and no wait_idle() rethrew it (1 more dropped): "
                     "posted task failed\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("weft::TaskGroup destroyed with an exception nobody wait()ed for: group task failed\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("weft::Writer destroyed with an unreported failure: weft::Writer: cannot write '/dev/full'"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("my destructor: an exception not derived from std::exception\n"), std::string::npos) << err;
}

}  // namespace
