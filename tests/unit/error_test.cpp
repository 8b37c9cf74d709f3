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

// Each source, what its report's `where` names, and what its what() holds.
struct Source {
  void (*destroy)();
  const char* where;
  const char* what;
};
constexpr Source kSources[] = {
    {destroy_pool_with_unrethrown_posts, "weft::ThreadPool: a posted task threw and no wait_idle() rethrew it (1 more dropped)",
     "posted task failed"},
    {destroy_group_with_unwaited_exception, "weft::TaskGroup destroyed with an exception nobody wait()ed for",
     "group task failed"},
    {destroy_writer_with_unflushed_failure, "weft::Writer destroyed with an unreported failure",
     "weft::Writer: cannot write '/dev/full' (errno 28)"},
};

TEST(ErrorHandler, EachSourceReachesTheInstalledHandlerOnce) {
  for (const Source& source : kSources) {
    weft::test::ErrorRecorder recorder;
    source.destroy();
    const auto got = recorder.entries();
    ASSERT_EQ(got.size(), 1U) << source.where;
    EXPECT_EQ(got[0].where, source.where);
    EXPECT_NE(got[0].what.find(source.what), std::string::npos) << got[0].what;
  }
}

TEST(ErrorHandler, WriterFailureKeepsItsErrno) {
  weft::test::ErrorRecorder recorder;
  destroy_writer_with_unflushed_failure();
  const auto got = recorder.entries();
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].code, 28);  // ENOSPC
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
  for (const Source& source : kSources) source.destroy();
  weft::report_error("my destructor", std::make_exception_ptr(42));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 4) << err;
  for (const Source& source : kSources) {
    EXPECT_NE(err.find(std::string(source.where) + ": " + source.what), std::string::npos) << err;
  }
  EXPECT_NE(err.find("my destructor: an exception not derived from std::exception\n"), std::string::npos) << err;
}

}  // namespace
