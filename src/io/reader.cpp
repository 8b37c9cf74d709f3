#include "weft/io/reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>
#include <stdexcept>
#include <utility>

#include "io_error.hpp"

namespace weft {

namespace {

constexpr std::string_view kReader = "Reader";

}  // namespace

Reader::Reader(int fd, std::string name, std::size_t buffer_size)
    : BufferedFd(std::move(name), buffer_size, fd) {
  buffer_ = detail::io_buffer(fd_, buffer_size, kReader, name_);
  pos_ = end_ = buffer_.get();
}

// The name is built before the file is opened: were it built after, a
// failed allocation would leave the open descriptor to no one.
Reader::Reader(const std::filesystem::path& path, std::size_t buffer_size)
    : BufferedFd(path.string(), buffer_size, -1) {
  fd_ = detail::io_open(name_, O_RDONLY, kReader, "open");
  buffer_ = detail::io_buffer(fd_, buffer_size, kReader, name_);
  pos_ = end_ = buffer_.get();
  // read(2) on a directory fails only at the first read, with a bare EISDIR;
  // say so at open, where the caller knows which path it was.
  struct stat st{};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    close();
    detail::io_throw(err, kReader, "stat", name_);
  }
  if (S_ISDIR(st.st_mode)) {
    close();
    detail::io_throw(EISDIR, kReader, "read", name_);
  }
  if (S_ISREG(st.st_mode)) {
    // A hint for the kernel's readahead; failure changes nothing.
    (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    size_at_open_ = static_cast<std::uint64_t>(st.st_size);
    check_shrink_ = true;
  }
}

Reader Reader::adopt(int fd, std::string name, std::size_t buffer_size) {
  return Reader(fd, detail::io_fd_name(fd, std::move(name)), buffer_size);
}

Reader::Reader(Reader&& other) noexcept
    : BufferedFd(std::move(other)),
      bytes_read_(std::exchange(other.bytes_read_, 0)),
      size_at_open_(std::exchange(other.size_at_open_, 0)),
      check_shrink_(std::exchange(other.check_shrink_, false)) {}

Reader& Reader::operator=(Reader&& other) noexcept {
  if (this != &other) {
    close();
    BufferedFd::operator=(std::move(other));
    bytes_read_ = std::exchange(other.bytes_read_, 0);
    size_at_open_ = std::exchange(other.size_at_open_, 0);
    check_shrink_ = std::exchange(other.check_shrink_, false);
  }
  return *this;
}

Reader::~Reader() { close(); }

void Reader::close() noexcept {
  if (fd_ >= 0) {
    // No retry on EINTR: on Linux the descriptor is gone either way, and an
    // error closing a read-only file loses nothing.
    (void)::close(fd_);
    fd_ = -1;
  }
  pos_ = end_ = buffer_.get();
}

std::span<const std::byte> Reader::refill() {
  if (fd_ < 0) throw std::logic_error("weft::Reader: read from a closed Reader");
  std::byte* const buf = buffer_.get();
  pos_ = end_ = buf;
  for (;;) {
    const ssize_t n = ::read(fd_, buf, capacity_);
    if (n >= 0) {
      if (n == 0) check_eof();
      bytes_read_ += static_cast<std::uint64_t>(n);
      end_ = buf + n;
      return {pos_, end_};
    }
    if (errno != EINTR) detail::io_throw(errno, kReader, "read", name_);
  }
}

void Reader::check_eof() {
  if (!check_shrink_ || bytes_read_ >= size_at_open_) return;
  struct stat st{};
  if (::fstat(fd_, &st) != 0) detail::io_throw(errno, kReader, "stat", name_);
  if (static_cast<std::uint64_t>(st.st_size) >= size_at_open_) {
    // Not truncated: a pseudo file whose size is not its length (sysfs).
    // Its end is where read(2) says; stop asking.
    check_shrink_ = false;
    return;
  }
  throw std::system_error(EIO, std::generic_category(),
                          "weft::Reader: '" + name_ + "' shrank while being read: got " +
                              std::to_string(bytes_read_) + " of " + std::to_string(size_at_open_) + " bytes");
}

int Reader::underflow_get() {
  if (refill().empty()) return kEof;
  return std::to_integer<int>(*pos_++);
}

std::size_t Reader::read(std::span<std::byte> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    if (pos_ != end_) {
      const std::size_t n = std::min(out.size() - done, static_cast<std::size_t>(end_ - pos_));
      std::memcpy(out.data() + done, pos_, n);
      pos_ += n;
      done += n;
      continue;
    }
    const std::size_t left = out.size() - done;
    if (left >= capacity_ && fd_ >= 0) {
      // Straight into the caller's memory: no point copying through ours.
      const ssize_t n = ::read(fd_, out.data() + done, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        detail::io_throw(errno, kReader, "read", name_);
      }
      if (n == 0) {
        check_eof();
        break;
      }
      bytes_read_ += static_cast<std::uint64_t>(n);
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (refill().empty()) break;
  }
  return done;
}

}  // namespace weft
