/// @file
/// weft/io/reader.hpp — buffered, unlocked reading from a file descriptor.
///
/// stdio's getc() takes the FILE lock for every byte; Reader has no lock at
/// all (one Reader belongs to one thread at a time) and keeps its own buffer.
///
/// Speed comes from where the cursor lives. A byte loop that goes through the
/// object (`r.get()`) must reload the object's pointers after every byte it
/// stores elsewhere, since a byte store may alias anything; a loop whose
/// cursor is in local variables keeps it in registers and runs ~2x faster.
/// So the fast interfaces hand the cursor to the caller:
///
///   for (auto s = r.peek(); !s.empty(); s = r.peek()) {  // blocks
///     use(s);
///     r.consume(s.size());
///   }
///   weft::Reader::Cursor in{r};                          // bytes
///   for (int c; (c = in.get()) != weft::Reader::kEof;) ...
///
/// Errors throw std::system_error whose code() is the errno and whose what()
/// names the path (or the name given to adopt()), e.g.
///   "weft::Reader: cannot open '/no/such' (errno 2): No such file or directory".
/// Opening a directory fails at open with EISDIR.
///
/// Files that change while being read. A Reader opened by path on a regular
/// file records the file's size at open. If it then meets end of file having
/// read fewer bytes than that, someone truncated the file under it, and
/// whatever it hands on (a copy, a checksum) would be silently short; so it
/// throws std::system_error (code EIO) instead, e.g.
///   "weft::Reader: '/tmp/x' shrank while being read: got 4096 of 1048576
///    bytes: Input/output error"
/// and throws it again at every later attempt to read past the end. Before
/// throwing it checks (fstat) that the file is now smaller than at open:
/// pseudo files whose size lies (sysfs says 4096 for a 4-byte file, /proc
/// says 0) are read to their real end without complaint.
/// - A file that grows is read until read(2) returns 0, so bytes appended
///   before that are delivered too; the size at open is only a floor.
/// - A file unlinked, or replaced by a rename, after open is still read
///   whole: the Reader holds the original inode, which lives until it closes.
/// - To read a file that may legitimately shrink (a log truncated by
///   rotation), open it yourself and adopt() the descriptor: adopted
///   descriptors are not checked, since the Reader does not know where their
///   offset started or what the caller expects of them.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "weft/detail/io/buffered_fd.hpp"

namespace weft {

/// A file read through its own buffer, without stdio's locks; every error
/// names the file (this file's opening comment has the contract).
class Reader : private detail::BufferedFd<const std::byte> {
 public:
  static constexpr std::size_t kDefaultBufferSize = std::size_t{64} * 1024;  ///< 64 KiB
  static constexpr int kEof = -1;  ///< what get() returns at end of file

  /// A closed Reader; reading from it throws std::logic_error.
  Reader() noexcept = default;
  /// Opens `path` read-only. `buffer_size` must be > 0. A constructor, as
  /// std::ifstream has: reading leaves the file as it was, so there is no
  /// mode to name (Writer, which can truncate, has named factories).
  explicit Reader(const std::filesystem::path& path, std::size_t buffer_size = kDefaultBufferSize);
  /// Takes ownership of `fd` (it is closed by close() or the destructor).
  /// `name` is what error messages call it.
  static Reader adopt(int fd, std::string name, std::size_t buffer_size = kDefaultBufferSize);

  ///@{
  /// Takes over `other`'s file and buffer; `other` is left closed.
  Reader(Reader&& other) noexcept;
  Reader& operator=(Reader&& other) noexcept;
  ///@}
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader();

  /// Whether a file is open.
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  /// The file descriptor; -1 when closed.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// What error messages call the file (its path, or the name given to adopt()).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The buffer's capacity in bytes.
  [[nodiscard]] std::size_t buffer_size() const noexcept { return capacity_; }
  /// Closes the descriptor; buffered bytes are dropped. Idempotent.
  void close() noexcept;

  /// The next byte as 0..255, or kEof. Convenient; Cursor::get() is faster.
  int get() {
    if (pos_ != end_) [[likely]] return std::to_integer<int>(*pos_++);
    return underflow_get();
  }

  /// The bytes buffered now, reading more first if there are none. Empty at
  /// end of file. Valid until the next call that reads or consumes.
  std::span<const std::byte> peek() {
    if (pos_ == end_) refill();
    return {pos_, end_};
  }
  /// Marks the first `n` bytes of peek() as read. n <= peek().size().
  void consume(std::size_t n) noexcept {
    assert(n <= static_cast<std::size_t>(end_ - pos_));
    pos_ += n;
  }
  /// peek() + consume(all): the next block of the file; empty at end of file.
  std::span<const std::byte> read_some() {
    const std::span<const std::byte> s = peek();
    pos_ = end_;
    return s;
  }
  /// Fills `out` unless the file ends first; returns the number of bytes read.
  /// Large reads bypass the buffer.
  std::size_t read(std::span<std::byte> out);

  /// Calls f(std::byte) for every remaining byte, with the cursor in locals.
  /// If f throws, the bytes of the block being walked count as read.
  template <class F>
  void for_each_byte(F&& f) {
    for (std::span<const std::byte> s = read_some(); !s.empty(); s = read_some()) {
      for (const std::byte b : s) f(b);
    }
  }

  /// A byte cursor that keeps the buffer pointers in itself (and so, as a
  /// local variable, in registers). While a Cursor is alive, use the Reader
  /// only through it; its destructor hands the position back.
  class Cursor {
   public:
    /// Takes over `r`'s position until destroyed (or sync()).
    explicit Cursor(Reader& r) noexcept : reader_(&r), pos_(r.pos_), end_(r.end_) {}
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    ~Cursor() { sync(); }

    /// The next byte as 0..255, or kEof.
    int get() {
      if (pos_ != end_) [[likely]] return std::to_integer<int>(*pos_++);
      return refill_get();
    }
    /// Writes the position back to the Reader (the destructor does it too).
    void sync() noexcept {
      if (pos_ != nullptr) reader_->pos_ = pos_;
    }

   private:
    int refill_get() {
      sync();
      // If refill() throws, this cursor holds nothing to hand back.
      pos_ = end_ = nullptr;
      const std::span<const std::byte> s = reader_->refill();
      pos_ = s.data();
      end_ = s.data() + s.size();
      if (pos_ == end_) return kEof;
      return std::to_integer<int>(*pos_++);
    }

    Reader* reader_;
    const std::byte* pos_;
    const std::byte* end_;
  };

 private:
  Reader(int fd, std::string name, std::size_t buffer_size);
  // Reads into the (fully consumed) buffer; returns what is now buffered,
  // empty at end of file. Out of line and by value so cursors stay local.
  std::span<const std::byte> refill();
  int underflow_get();
  // read(2) returned 0: throws if the file shrank below its size at open.
  void check_eof();

  std::uint64_t bytes_read_ = 0;     // returned by read(2) since open
  std::uint64_t size_at_open_ = 0;   // the floor check_eof() enforces
  bool check_shrink_ = false;        // opened by path on a regular file
};

}  // namespace weft
