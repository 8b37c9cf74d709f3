// weft/detail/io/buffered_fd.hpp — what weft::Reader and weft::Writer hold
// alike (their private base; not a public name).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

namespace weft {

namespace detail {

// What Reader and Writer (weft/io/writer.hpp) hold alike: the descriptor,
// the name their errors give it, and the buffer with the cursor's two
// pointers into it (Byte is const for Reader). Moving takes all of it and
// leaves the source as a default-built one: closed, with no buffer.
template <class Byte>
class BufferedFd {
 protected:
  BufferedFd() noexcept = default;
  BufferedFd(std::string&& name, std::size_t capacity, int fd) noexcept
      : name_(std::move(name)), capacity_(capacity), fd_(fd) {}
  BufferedFd(BufferedFd&& other) noexcept
      : name_(std::move(other.name_)),
        buffer_(std::move(other.buffer_)),
        capacity_(std::exchange(other.capacity_, 0)),
        pos_(std::exchange(other.pos_, nullptr)),
        end_(std::exchange(other.end_, nullptr)),
        fd_(std::exchange(other.fd_, -1)) {}
  // The caller has closed this one first (what it held is dropped here)
  // and made sure `other` is not this.
  BufferedFd& operator=(BufferedFd&& other) noexcept {
    name_ = std::move(other.name_);
    buffer_ = std::move(other.buffer_);
    capacity_ = std::exchange(other.capacity_, 0);
    pos_ = std::exchange(other.pos_, nullptr);
    end_ = std::exchange(other.end_, nullptr);
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~BufferedFd() = default;

  std::string name_;
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_ = 0;
  Byte* pos_ = nullptr;  // Reader: next unread byte; Writer: end of the buffered bytes
  Byte* end_ = nullptr;  // Reader: end of the bytes read into the buffer; Writer: end of the buffer
  int fd_ = -1;
};

}  // namespace detail

}  // namespace weft
