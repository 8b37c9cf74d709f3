// weft::Reader / weft::Writer against files that change under them or run
// out of room: every failure is a std::system_error naming the file, and no
// byte is lost without one.
#include "weft/io/reader.hpp"
#include "weft/io/writer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "temp_dir.hpp"

namespace {

using weft::Reader;
using weft::Writer;
using namespace weft::test;  // TempDir and the file helpers

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::vector<std::byte> read_all(Reader& r) {
  std::vector<std::byte> out;
  for (auto s = r.peek(); !s.empty(); s = r.peek()) {
    out.insert(out.end(), s.begin(), s.end());
    r.consume(s.size());
  }
  return out;
}

void truncate_to(const std::filesystem::path& p, std::uintmax_t size) { std::filesystem::resize_file(p, size); }

// `f` must throw the shrink error for `path` with exactly these counts.
template <class F>
void expect_shrank(F&& f, const std::string& path, std::uint64_t got, std::uint64_t expected) {
  try {
    f();
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::error_code(EIO, std::generic_category())) << e.what();
    const std::string want = "weft::Reader: '" + path + "' shrank while being read: got " + std::to_string(got) +
                             " of " + std::to_string(expected) + " bytes";
    EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0U) << e.what() << "\nwanted: " << want;
    return;
  }
  ADD_FAILURE() << "no shrink error for " << path;
}

TEST(ReaderShrink, BlockReadsThrowWhenTheFileIsTruncated) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  write_file(path, random_bytes(kMiB, 1));
  Reader r(path, 4096);
  ASSERT_EQ(r.read_some().size(), 4096U);
  truncate_to(path, 4096);
  expect_shrank([&] { (void)r.peek(); }, path.string(), 4096, kMiB);
  // Sticky: reading on meets the same end and the same error.
  expect_shrank([&] { (void)r.read_some(); }, path.string(), 4096, kMiB);
}

TEST(ReaderShrink, LargeReadsThatBypassTheBufferThrowToo) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  write_file(path, random_bytes(kMiB, 2));
  Reader r(path, 4096);
  truncate_to(path, 1000);
  std::vector<std::byte> out(kMiB);
  expect_shrank([&] { (void)r.read(out); }, path.string(), 1000, kMiB);
}

TEST(ReaderShrink, CursorThrowsWhenTheFileIsEmptied) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  write_file(path, random_bytes(100'000, 3));
  Reader r(path, 512);
  truncate_to(path, 0);
  expect_shrank(
      [&] {
        Reader::Cursor in{r};
        while (in.get() != Reader::kEof) {
        }
      },
      path.string(), 0, 100'000);
}

TEST(ReaderShrink, MovedReaderKeepsTheCheck) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  write_file(path, random_bytes(10'000, 4));
  Reader first(path, 1000);
  ASSERT_EQ(first.read_some().size(), 1000U);
  Reader r = std::move(first);
  truncate_to(path, 1000);
  expect_shrank([&] { (void)read_all(r); }, path.string(), 1000, 10'000);
}

TEST(ReaderShrink, AdoptedDescriptorsAreNotChecked) {
  // The documented way to read a file that may legitimately shrink.
  weft::test::TempDir dir;
  const auto path = dir / "log";
  const std::vector<std::byte> data = random_bytes(10'000, 5);
  write_file(path, data);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  Reader r = Reader::adopt(fd, "log");
  truncate_to(path, 300);
  const std::vector<std::byte> got = read_all(r);
  EXPECT_EQ(got, std::vector<std::byte>(data.begin(), data.begin() + 300));
}

TEST(ReaderChangingFiles, GrowingFileIsReadToItsNewEnd) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  std::vector<std::byte> data = random_bytes(10'000, 6);
  write_file(path, data);
  Reader r(path, 4096);
  const std::vector<std::byte> more = random_bytes(5'000, 7);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out.write(reinterpret_cast<const char*>(more.data()), static_cast<std::streamsize>(more.size()));
  }
  data.insert(data.end(), more.begin(), more.end());
  EXPECT_EQ(read_all(r), data);
}

TEST(ReaderChangingFiles, UnlinkedFileDeliversEveryByte) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  const std::vector<std::byte> data = random_bytes(kMiB + 123, 8);
  write_file(path, data);
  Reader r(path, 4096);
  std::vector<std::byte> got(5000);
  ASSERT_EQ(r.read(got), got.size());
  ASSERT_TRUE(std::filesystem::remove(path));
  const std::vector<std::byte> rest = read_all(r);
  got.insert(got.end(), rest.begin(), rest.end());
  EXPECT_EQ(got, data);
}

TEST(ReaderChangingFiles, FileReplacedByRenameDeliversTheOriginal) {
  weft::test::TempDir dir;
  const auto path = dir / "f";
  const std::vector<std::byte> data = random_bytes(kMiB, 9);
  write_file(path, data);
  Reader r(path, 4096);
  ASSERT_EQ(r.read_some().size(), 4096U);
  write_file(dir / "new", random_bytes(100, 10));
  std::filesystem::rename(dir / "new", path);
  const std::vector<std::byte> rest = read_all(r);
  EXPECT_EQ(rest, std::vector<std::byte>(data.begin() + 4096, data.end()));
}

TEST(ReaderChangingFiles, PseudoFilesWhoseSizeIsNotTheirLengthAreNoShrink) {
  // sysfs reports 4096 bytes for a few-byte file; /proc reports 0.
  for (const char* p : {"/sys/devices/system/cpu/online", "/proc/self/status"}) {
    struct stat st{};
    if (::stat(p, &st) != 0 || !S_ISREG(st.st_mode)) GTEST_SKIP() << p << " is not a regular file here";
    Reader r(p);
    std::vector<std::byte> got;
    EXPECT_NO_THROW(got = read_all(r)) << p;
    EXPECT_FALSE(got.empty()) << p;
    EXPECT_EQ(got.back(), std::byte{'\n'}) << p << ": the last line is missing";
  }
}

TEST(WriterPipe, ReaderGoneThrowsEpipeWhenSigpipeIsIgnored) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0) << std::strerror(errno);
  ::close(fds[0]);
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous{};
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);
  Writer w = Writer::adopt(fds[1], "the pipe");
  w.write(std::string_view("nobody reads this"));
  try {
    w.close();
    ADD_FAILURE() << "close() did not throw";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::error_code(EPIPE, std::generic_category())) << e.what();
    EXPECT_NE(std::string(e.what()).find("'the pipe'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w.written(), 0U);
  ::sigaction(SIGPIPE, &previous, nullptr);
}

// --- A full file system -------------------------------------------------
//
// A 64 KiB tmpfs, mounted in a private mount namespace by a forked child (so
// nothing outside the child sees it), takes a 1 MiB write through a Writer.
// The child reports on a pipe: "ok", "skip: <why>" or "fail: <why>".

constexpr int kChildOk = 0;
constexpr int kChildSkip = 77;
constexpr int kChildFail = 1;

[[noreturn]] void child_exit(int fd, int code, const std::string& message) {
  (void)!::write(fd, message.data(), message.size());
  ::_exit(code);
}

// The child: returns only through child_exit.
[[noreturn]] void fill_a_tiny_tmpfs(int report, const std::filesystem::path& mount_point) {
  if (::unshare(CLONE_NEWNS) != 0) child_exit(report, kChildSkip, std::string("unshare: ") + std::strerror(errno));
  // Keep the mount from propagating back to the parent's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    child_exit(report, kChildSkip, std::string("making / private: ") + std::strerror(errno));
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0)
    child_exit(report, kChildSkip, std::string("mount: ") + std::strerror(errno));

  const std::string path = (mount_point / "big").string();
  const std::vector<std::byte> data = random_bytes(kMiB, 11);
  constexpr std::size_t kBuffer = 16 * 1024;
  std::uint64_t accepted = 0;  // bytes of write() calls that returned
  std::string error;
  int code = 0;
  std::uint64_t written = 0;
  {
    Writer w = Writer::create(path, kBuffer);
    try {
      // Uneven chunks: some buffered, some straight through.
      for (std::size_t i = 0, n = 1000; i < data.size(); i += n, n = n * 7 % 40'000 + 1) {
        const std::size_t take = std::min(n, data.size() - i);
        w.write(std::span(data).subspan(i, take));
        accepted += take;
      }
      w.close();
    } catch (const std::system_error& e) {
      error = e.what();
      code = e.code().value();
    }
    written = w.written();
    if (code != 0) {
      // Sticky: the Writer does not pretend the rest went well.
      try {
        w.close();
      } catch (const std::system_error&) {
      }
    }
  }
  if (code == 0) child_exit(report, kChildFail, "fail: 1 MiB fit in a 64 KiB tmpfs and nothing threw");
  if (code != ENOSPC) child_exit(report, kChildFail, "fail: expected ENOSPC, got " + error);
  if (error.find("'" + path + "'") == std::string::npos)
    child_exit(report, kChildFail, "fail: the error does not name the path: " + error);
  const std::vector<std::byte> on_disk = file_contents(path);
  if (on_disk.size() != written) {
    child_exit(report, kChildFail,
               "fail: written() says " + std::to_string(written) + " bytes, the file has " +
                   std::to_string(on_disk.size()));
  }
  if (!std::equal(on_disk.begin(), on_disk.end(), data.begin()))
    child_exit(report, kChildFail, "fail: the file is not a prefix of what was written");
  // The error surfaced at the first failed write(2): what the caller was
  // told succeeded is on disk but for at most one buffer that never left.
  if (accepted > written + kBuffer) {
    child_exit(report, kChildFail,
               "fail: " + std::to_string(accepted) + " bytes accepted but only " + std::to_string(written) +
                   " written: the error came late");
  }
  if (written == 0 || written > 64 * 1024)
    child_exit(report, kChildFail, "fail: implausible byte count " + std::to_string(written));
  child_exit(report, kChildOk, "ok: " + std::to_string(written) + " bytes stored, then: " + error);
}

TEST(WriterFullDisk, SmallTmpfsFailsWithEnospcAndLosesNothingSilently) {
  weft::test::TempDir dir;
  const auto mount_point = dir / "mnt";
  std::filesystem::create_directory(mount_point);
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0) << std::strerror(errno);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    ::close(fds[0]);
    fill_a_tiny_tmpfs(fds[1], mount_point);
  }
  ::close(fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    message.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFEXITED(st)) << "child killed by signal " << WTERMSIG(st) << "; said: " << message;
  if (WEXITSTATUS(st) == kChildSkip) GTEST_SKIP() << "cannot mount a tmpfs here: " << message;
  EXPECT_EQ(WEXITSTATUS(st), kChildOk) << message;
  std::printf("%s\n", message.c_str());
}

TEST(WriterFullDisk, DevFullReportsNothingWritten) {
  Writer w = Writer::create("/dev/full", 16);
  w.write(std::string_view("0123456789"));
  EXPECT_THROW(w.close(), std::system_error);
  EXPECT_EQ(w.written(), 0U);
}

}  // namespace
