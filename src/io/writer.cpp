#include "weft/io/writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "io_error.hpp"
#include "weft/error.hpp"

namespace weft {

namespace {

constexpr std::string_view kWriter = "Writer";
constexpr std::string_view kUnreported = "weft::Writer destroyed with an unreported failure";

}  // namespace

Writer::Writer(int fd, std::string name, std::size_t buffer_size)
    : BufferedFd(std::move(name), buffer_size, fd) {
  buffer_ = detail::io_buffer(fd_, buffer_size, kWriter, name_);
  pos_ = buffer_.get();
  end_ = pos_ + capacity_;
}

// The name is built before the file is opened: were it built after (the
// order of a call's arguments is unspecified), a failed allocation would
// leave the open descriptor to no one. Moving it cannot throw.
Writer Writer::open(const std::filesystem::path& path, int flags, std::string_view action, std::size_t buffer_size) {
  std::string name = path.string();
  const int fd = detail::io_open(name, flags, kWriter, action);
  return Writer(fd, std::move(name), buffer_size);
}

Writer Writer::create(const std::filesystem::path& path, std::size_t buffer_size) {
  return open(path, O_WRONLY | O_CREAT | O_TRUNC, "create", buffer_size);
}

Writer Writer::append(const std::filesystem::path& path, std::size_t buffer_size) {
  return open(path, O_WRONLY | O_CREAT | O_APPEND, "open for append", buffer_size);
}

Writer Writer::adopt(int fd, std::string name, std::size_t buffer_size) {
  return Writer(fd, detail::io_fd_name(fd, std::move(name)), buffer_size);
}

Writer::Writer(Writer&& other) noexcept
    : BufferedFd(std::move(other)),
      error_(std::exchange(other.error_, 0)),
      written_(std::exchange(other.written_, 0)) {}

Writer& Writer::operator=(Writer&& other) noexcept {
  if (this != &other) {
    finish();
    BufferedFd::operator=(std::move(other));
    error_ = std::exchange(other.error_, 0);
    written_ = std::exchange(other.written_, 0);
  }
  return *this;
}

Writer::~Writer() { finish(); }

void Writer::check_usable() const {
  if (fd_ < 0) throw std::logic_error("weft::Writer: write to a closed Writer");
  if (error_ != 0) detail::io_throw(error_, kWriter, "write", name_);
}

void Writer::write_all(const std::byte* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      // The data is lost either way; dropping it keeps later calls from
      // writing a hole-ridden tail after the failure.
      pos_ = buffer_.get();
      detail::io_throw(error_, kWriter, "write", name_);
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
}

void Writer::flush() {
  check_usable();
  std::byte* const buf = buffer_.get();
  const auto n = static_cast<std::size_t>(pos_ - buf);
  if (n == 0) return;
  write_all(buf, n);
  pos_ = buf;
}

std::span<std::byte> Writer::overflow() {
  flush();
  return {pos_, end_};
}

void Writer::write(std::span<const std::byte> data) {
  auto room = static_cast<std::size_t>(end_ - pos_);
  if (data.size() <= room) [[likely]] {
    if (!data.empty()) std::memcpy(pos_, data.data(), data.size());
    pos_ += data.size();
    return;
  }
  check_usable();
  if (data.size() < capacity_) {
    // Top the buffer up, so a stream of medium writes makes full-size
    // write(2) calls.
    std::memcpy(pos_, data.data(), room);
    pos_ += room;
    data = data.subspan(room);
    flush();
    std::memcpy(pos_, data.data(), data.size());
    pos_ += data.size();
    return;
  }
  flush();
  write_all(data.data(), data.size());
}

std::span<std::byte> Writer::reserve(std::size_t min_size) {
  if (static_cast<std::size_t>(end_ - pos_) < min_size) {
    if (min_size > capacity_ && fd_ >= 0) {
      throw std::length_error("weft::Writer: reserve(" + std::to_string(min_size) + ") exceeds the buffer size of '" +
                              name_ + "'");
    }
    flush();
  }
  return {pos_, end_};
}

void Writer::close() {
  if (fd_ < 0) return;
  std::optional<std::system_error> failure;
  try {
    flush();
  } catch (const std::system_error& e) {
    failure = e;
  }
  if (::close(fd_) != 0 && errno != EINTR && !failure) {
    // EINTR: Linux has closed the descriptor anyway and there is nothing to
    // retry; other errors (EIO, ENOSPC, EDQUOT on network file systems) mean
    // data did not make it.
    failure = detail::io_error(errno, kWriter, "close", name_);
  }
  fd_ = -1;
  buffer_.reset();
  pos_ = end_ = nullptr;
  if (failure) throw *failure;
}

void Writer::finish() noexcept {
  if (fd_ < 0) return;
  // A failure already thrown to the caller (error_ set) was reported then;
  // the handler is for failures nobody has seen.
  if (error_ == 0) {
    try {
      close();
    } catch (...) {
      report_error(kUnreported, std::current_exception());
    }
    return;
  }
  (void)::close(fd_);
  fd_ = -1;
  buffer_.reset();
  pos_ = end_ = nullptr;
}

}  // namespace weft
