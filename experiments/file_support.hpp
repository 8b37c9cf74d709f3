// Files for the experiments that read and write them (io, aio): a
// temporary directory removed with everything in it, a file descriptor
// closed on every path out, a write that finishes, and errors that name
// the path.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <stdlib.h>
#include <string>
#include <system_error>

namespace weft::xp {

[[noreturn]] inline void fail(const std::string& what, const std::string& path, int err = errno) {
  throw std::system_error(err, std::generic_category(), "weft: " + what + " '" + path + "'");
}

// The temporary directory; removed with everything in it when it goes out of
// scope, also when the run throws.
class TempDir {
 public:
  // A new directory "<parent>/<prefix>XXXXXX".
  explicit TempDir(const std::string& parent, const std::string& prefix = "weft-io-") {
    std::string tmpl = parent + "/" + prefix + "XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) fail("cannot create a directory in", parent);
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class Fd {
 public:
  Fd(const std::string& path, int flags) : fd_(::open(path.c_str(), flags | O_CLOEXEC, 0644)), path_(path) {
    if (fd_ < 0) fail("cannot open", path);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot close", path_);
  }

 private:
  int fd_;
  std::string path_;
};

inline void write_all(int fd, const char* data, std::size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path);
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace weft::xp
