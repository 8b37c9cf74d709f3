// weft::Reader / weft::Writer failures: each throws std::system_error with
// the errno as code() and the path in what(); the Writer destructor hands
// what it cannot throw to the error handler (stderr by default).
#include "weft/io/reader.hpp"
#include "weft/io/writer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "error_recorder.hpp"
#include "temp_dir.hpp"

namespace {

using weft::Reader;
using weft::Writer;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// Runs `f`, which must throw std::system_error with errno `err` and a what()
// naming `path`; returns the message.
template <class F>
std::string expect_system_error(F&& f, int err, const std::string& path) {
  try {
    f();
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), err) << e.what();
    EXPECT_EQ(e.code().category(), std::generic_category());
    EXPECT_TRUE(contains(e.what(), "'" + path + "'"));
    EXPECT_TRUE(contains(e.what(), std::error_code(err, std::generic_category()).message()));
    return e.what();
  }
  ADD_FAILURE() << "no std::system_error for " << path;
  return {};
}

TEST(ReaderErrors, MissingFileNamesThePath) {
  weft::test::TempDir dir;
  const std::string path = (dir / "no-such-file").string();
  const std::string what = expect_system_error([&] { Reader r(path); }, ENOENT, path);
  EXPECT_TRUE(contains(what, "weft::Reader"));
}

TEST(ReaderErrors, DirectoryFailsAtOpenWithEisdir) {
  weft::test::TempDir dir;
  const std::string path = dir.path().string();
  expect_system_error([&] { Reader r(path); }, EISDIR, path);
}

TEST(ReaderErrors, FileWithoutPermission) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions are not enforced";
  weft::test::TempDir dir;
  const std::string path = (dir / "locked").string();
  std::ofstream(path) << "secret";
  std::filesystem::permissions(path, std::filesystem::perms::none);
  expect_system_error([&] { Reader r(path); }, EACCES, path);
  expect_system_error([&] { Writer w = Writer::create(path); }, EACCES, path);
}

TEST(ReaderErrors, ReadFailureNamesTheDescriptor) {
  // A write-only descriptor: read(2) fails with EBADF.
  weft::test::TempDir dir;
  Writer w = Writer::create(dir / "f");
  w.close();
  std::ofstream(dir / "g") << "data";
  const int fd = ::open((dir / "g").c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Reader r = Reader::adopt(fd, "write-only input");
  expect_system_error([&] { (void)r.get(); }, EBADF, "write-only input");
}

TEST(ReaderErrors, ZeroBufferSizeIsRejected) {
  weft::test::TempDir dir;
  std::ofstream(dir / "f") << "x";
  EXPECT_THROW(Reader(dir / "f", 0), std::invalid_argument);
  EXPECT_THROW((void)Writer::create(dir / "g", 0), std::invalid_argument);
}

TEST(WriterErrors, MissingDirectoryNamesThePath) {
  weft::test::TempDir dir;
  const std::string path = (dir / "no-such-dir" / "out").string();
  const std::string what = expect_system_error([&] { Writer w = Writer::create(path); }, ENOENT, path);
  EXPECT_TRUE(contains(what, "weft::Writer"));
}

TEST(WriterErrors, CreatingADirectoryFails) {
  weft::test::TempDir dir;
  const std::string path = dir.path().string();
  expect_system_error([&] { (void)Writer::create(path); }, EISDIR, path);
}

TEST(WriterErrors, DevFullFailsWithEnospcAtClose) {
  Writer w = Writer::create("/dev/full");
  w.write(std::string_view("this cannot be stored"));  // buffered: no error yet
  const std::string what = expect_system_error([&] { w.close(); }, ENOSPC, "/dev/full");
  EXPECT_TRUE(contains(what, "errno 28"));
  EXPECT_FALSE(w.is_open());
}

TEST(WriterErrors, DevFullFailsAtFlushAndStaysFailed) {
  Writer w = Writer::create("/dev/full", 16);
  w.put('a');
  expect_system_error([&] { w.flush(); }, ENOSPC, "/dev/full");
  EXPECT_EQ(w.pending(), 0U);  // the undeliverable bytes were dropped
  // Sticky: later writes that reach the file and close() fail the same way.
  expect_system_error([&] { w.write(std::vector<std::byte>(100)); }, ENOSPC, "/dev/full");
  expect_system_error([&] { w.close(); }, ENOSPC, "/dev/full");
}

TEST(WriterErrors, DevFullFailsThroughACursorWhenTheBufferFills) {
  Writer w = Writer::create("/dev/full", 8);
  expect_system_error(
      [&] {
        Writer::Cursor out(w);
        for (int i = 0; i < 100; ++i) out.put('z');
      },
      ENOSPC, "/dev/full");
  expect_system_error([&] { w.close(); }, ENOSPC, "/dev/full");
}

// The error handler (weft/error.hpp) sees what the destructor could not throw.
class WriterDestructor : public ::testing::Test {
 protected:
  std::vector<std::string> reported() const {
    std::vector<std::string> out;
    for (const auto& e : recorder_.entries()) out.push_back(std::to_string(e.code) + " " + e.what);
    return out;
  }

 private:
  weft::test::ErrorRecorder recorder_;
};

TEST_F(WriterDestructor, UnflushedFailureGoesToTheHandler) {
  {
    Writer w = Writer::create("/dev/full");
    w.put('x');
  }
  const auto reported = this->reported();
  ASSERT_EQ(reported.size(), 1U);
  EXPECT_TRUE(contains(reported[0], "28 "));
  EXPECT_TRUE(contains(reported[0], "'/dev/full'"));
  EXPECT_TRUE(contains(reported[0], "No space left on device"));
}

TEST_F(WriterDestructor, FailureAlreadyThrownIsNotReportedTwice) {
  {
    Writer w = Writer::create("/dev/full");
    w.put('x');
    EXPECT_THROW(w.flush(), std::system_error);
  }
  EXPECT_TRUE(reported().empty());
}

TEST_F(WriterDestructor, CleanWriterReportsNothing) {
  weft::test::TempDir dir;
  {
    Writer w = Writer::create(dir / "ok");
    w.write(std::string_view("fine"));
  }
  EXPECT_TRUE(reported().empty());
  EXPECT_EQ(std::filesystem::file_size(dir / "ok"), 4U);
}

TEST_F(WriterDestructor, MoveAssignmentFinishesTheOldFileLikeTheDestructor) {
  weft::test::TempDir dir;
  Writer w = Writer::create("/dev/full");
  w.put('x');
  w = Writer::create(dir / "next");
  const auto reported = this->reported();
  ASSERT_EQ(reported.size(), 1U);
  EXPECT_TRUE(contains(reported[0], "/dev/full"));
  w.close();
}

}  // namespace
