/// @file
/// weft/io/writer.hpp — buffered, unlocked writing to a file descriptor.
///
/// The counterpart of weft::Reader (see reader.hpp for why the fast
/// interfaces hand the cursor to the caller):
///
///   auto s = w.reserve();  fill(s.first(n));  w.commit(n);   // blocks
///   weft::Writer::Cursor out{w};  out.put(b);                 // bytes
///
/// Errors throw std::system_error whose code() is the errno and whose what()
/// names the path, e.g. "weft::Writer: cannot write '/dev/full' (errno 28):
/// No space left on device". A short write is retried; EINTR is retried.
///
/// Failure is sticky: after a write fails, the buffered bytes are dropped and
/// every later flush(), close() or write that reaches the file throws the
/// same error again.
///
/// Nothing is lost silently: the first write(2) that fails throws (a full
/// disk: ENOSPC, from the write, flush or close that hands the bytes over),
/// and written() then says exactly how many bytes reached the file, partial
/// writes included, so a caller can tell what survived.
///
/// FIFOs and pipes: create() on a FIFO blocks until a reader opens the other
/// end, as fopen() does; a writer that must not wait opens it itself with
/// O_NONBLOCK (which fails with ENXIO while there is no reader) and adopts the
/// descriptor. Writing to a pipe whose reader has gone raises SIGPIPE, which
/// kills the process unless it is ignored; ignored, the write throws EPIPE.
///
/// Errors at destruction. close() flushes, closes and throws on any failure:
/// call it when the data matters. The destructor flushes and closes too but
/// must not throw, so a failure it meets (one not already thrown to the
/// caller) goes to weft's error handler (weft/error.hpp): by default one
/// line on stderr naming the path and the error. It is never dropped.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "weft/detail/io/buffered_fd.hpp"

namespace weft {

/// A file written through its own buffer, without stdio's locks; every
/// error names the file (this file's opening comment has the contract).
class Writer : private detail::BufferedFd<std::byte> {
 public:
  static constexpr std::size_t kDefaultBufferSize = std::size_t{64} * 1024;  ///< 64 KiB

  /// A closed Writer; writing to it throws std::logic_error.
  Writer() noexcept = default;
  /// Creates `path` (mode 0666 & ~umask) or truncates it. buffer_size > 0.
  /// A named factory, not a constructor, so that the call says what happens
  /// to an existing file: create() truncates it, append() keeps it.
  static Writer create(const std::filesystem::path& path, std::size_t buffer_size = kDefaultBufferSize);
  /// Opens `path` for appending, creating it if missing.
  static Writer append(const std::filesystem::path& path, std::size_t buffer_size = kDefaultBufferSize);
  /// Takes ownership of `fd`; `name` is what error messages call it.
  static Writer adopt(int fd, std::string name, std::size_t buffer_size = kDefaultBufferSize);

  /// Takes over `other`'s file and buffer; `other` is left closed.
  Writer(Writer&& other) noexcept;
  /// Finishes this writer as the destructor would, then takes `other`'s file.
  Writer& operator=(Writer&& other) noexcept;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  /// Whether a file is open.
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  /// The file descriptor; -1 when closed.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// What error messages call the file (its path, or the name given to adopt()).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The buffer's capacity in bytes.
  [[nodiscard]] std::size_t buffer_size() const noexcept { return capacity_; }
  /// Bytes buffered and not yet handed to the kernel.
  [[nodiscard]] std::size_t pending() const noexcept { return static_cast<std::size_t>(pos_ - buffer_.get()); }
  /// Bytes this Writer has handed to the kernel (write(2) accepted them).
  /// After a failure: exactly the bytes that reached the file.
  [[nodiscard]] std::uint64_t written() const noexcept { return written_; }

  ///@{
  /// Appends one byte to the buffer (flushing it when full). Convenient;
  /// Cursor::put() is faster.
  void put(std::byte b) {
    if (pos_ == end_) [[unlikely]] overflow();
    *pos_++ = b;
  }
  void put(char c) { put(static_cast<std::byte>(c)); }
  ///@}
  ///@{
  /// Appends `data`. Large writes bypass the buffer (after flushing it, to keep the order).
  void write(std::span<const std::byte> data);
  void write(std::string_view text) { write(std::as_bytes(std::span<const char>(text.data(), text.size()))); }
  ///@}

  /// Free buffer space, at least `min_size` bytes (flushing to make room);
  /// fill a prefix of it and commit() that many. min_size <= buffer_size().
  std::span<std::byte> reserve(std::size_t min_size = 1);
  /// Marks the first `n` bytes of the last reserve() as written. n <= its size.
  void commit(std::size_t n) noexcept {
    assert(n <= static_cast<std::size_t>(end_ - pos_));
    pos_ += n;
  }

  /// Hands the buffered bytes to the kernel (write(2); no fsync).
  void flush();
  /// flush() + close(2); throws the first failure (the descriptor is closed
  /// either way). Idempotent once it succeeded or threw.
  void close();

  /// The byte cursor: the buffer pointers live in the Cursor (a local, so in
  /// registers). While it is alive use the Writer only through it; its
  /// destructor hands the position back.
  class Cursor {
   public:
    /// Takes over `w`'s position until destroyed (or sync()).
    explicit Cursor(Writer& w) noexcept : writer_(&w), pos_(w.pos_), end_(w.end_) {}
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    ~Cursor() { sync(); }

    ///@{
    /// Appends one byte (making room when the buffer is full).
    void put(std::byte b) {
      if (pos_ == end_) [[unlikely]] make_room();
      *pos_++ = b;
    }
    void put(char c) { put(static_cast<std::byte>(c)); }
    ///@}
    /// Writes the position back to the Writer (the destructor does it too).
    void sync() noexcept {
      if (pos_ != nullptr) writer_->pos_ = pos_;
    }

   private:
    void make_room() {
      sync();
      // If overflow() throws, this cursor holds nothing to hand back.
      pos_ = end_ = nullptr;
      const std::span<std::byte> s = writer_->overflow();
      pos_ = s.data();
      end_ = s.data() + s.size();
    }

    Writer* writer_;
    std::byte* pos_;
    std::byte* end_;
  };

 private:
  Writer(int fd, std::string name, std::size_t buffer_size);
  static Writer open(const std::filesystem::path& path, int flags, std::string_view action, std::size_t buffer_size);
  // Flushes a full buffer; returns the whole (now empty) buffer.
  std::span<std::byte> overflow();
  void write_all(const std::byte* data, std::size_t size);
  void check_usable() const;
  // The destructor's flush + close; failures go to the handler.
  void finish() noexcept;

  int error_ = 0;  // errno of the first failed write; sticky
  std::uint64_t written_ = 0;
};

}  // namespace weft
