/// @file
/// weft/aio/async_file.hpp — file I/O for coroutines over io_uring: a read,
/// a write or a sync suspends the coroutine, never a worker thread.
///
///   weft::AsyncFile f = weft::AsyncFile::open("data.bin", weft::AsyncFile::read_only);
///   std::size_t n = co_await f.read_at(std::span<std::byte>(buf), offset);   // n < size: end of file
///   weft::AsyncFile out = weft::AsyncFile::open("out.bin",
///       weft::AsyncFile::write_only | weft::AsyncFile::create | weft::AsyncFile::truncate);
///   co_await out.write_at(std::span<const std::byte>(bytes), 0);
///   co_await out.sync();                                                      // on the disk now
///
/// Contract
/// - Operations go to an io_uring of the thread that submits them (Debian's
///   liburing); a read the page cache serves completes inside the
///   submission and its coroutine goes on there. One completion thread per
///   process sleeps in the kernel until an operation finishes later
///   (nothing spins; it looks every 10 ms while some are in the kernel) and
///   queues the coroutine back on its pool (a weft::Task's own, else
///   ThreadPool::current(), else the default pool).
///   At most 256 operations are in the kernel at once; more wait in line.
/// - Where io_uring is not available (an old kernel; a container or
///   seccomp policy that refuses io_uring_setup with ENOSYS or EPERM), the
///   same API runs each operation on a bounded set of 4 blocking threads
///   with pread/pwrite/fsync; this is said once, on weft's error handler.
///   WEFT_AIO_BACKEND=threads in the environment forces it (for tests).
///   backend() says which is in use.
/// - read_at returns what the kernel read: less than asked only at the end
///   of the file, and that short count is returned, not hidden. write_at
///   writes every byte (it resubmits the rest of a short write) or throws.
///   sync() is fdatasync's promise for what was written before it began:
///   nothing written is lost after it returns.
/// - Errors are std::system_error naming the operation, the path and the
///   offset; open() names the path and the mode.
/// - A stop token (the one given, else the Task's own) is honoured before
///   the operation is submitted (weft::cancelled); once in the kernel it
///   runs to its end, because the kernel owns the buffer until then.
/// - The buffer and the AsyncFile must outlive the co_await (they do, when
///   the co_await is written in place).
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

#include "weft/detail/aio/waiter.hpp"

namespace weft {

class AsyncFile;

/// @cond internal
namespace detail::aio {

enum class IoKind : unsigned char { read, write, sync };

struct IoOp : Waiter {
  IoKind kind = IoKind::read;
  const AsyncFile* file = nullptr;
  std::byte* buf = nullptr;
  std::size_t len = 0;
  std::uint64_t offset = 0;
  std::size_t done = 0;  // bytes moved so far (a write resubmits the rest)
  int error = 0;         // errno of a failed operation
  IoOp* next_op = nullptr;
  // Set by the submitter just before the kernel gets the op, read by the
  // completion thread first: the kernel orders the two, but a race
  // detector cannot see through it, so this pair makes the order explicit.
  std::atomic<bool> handed{false};
};

// Hands `op` to the backend; its completion claims it (and resumes it).
void submit(IoOp* op);
// Throws the system_error for a failed op.
[[noreturn]] void throw_io_error(const IoOp& op);

struct IoAwaiter {
  IoOp op;
  std::stop_token stop;

  IoAwaiter(IoKind kind, const AsyncFile* file, std::byte* buf, std::size_t len, std::uint64_t offset,
            std::stop_token s) noexcept
      : stop(std::move(s)) {
    op.kind = kind;
    op.file = file;
    op.buf = buf;
    op.len = len;
    op.offset = offset;
  }

  bool await_ready() const noexcept { return false; }
  // No stop callback once submitted: an operation in the kernel is not
  // withdrawn.
  template <class P>
  bool await_suspend(std::coroutine_handle<P> coro) {
    return op.suspend(
        coro, stop,
        [&] {
          submit(&op);
          return true;
        },
        false);
  }
  std::size_t await_resume() const {
    op.check_cancelled();
    if (op.error != 0) throw_io_error(op);
    return op.done;
  }
};

}  // namespace detail::aio
/// @endcond

/// A file opened for coroutine I/O; move-only. See above.
class AsyncFile {
 public:
  /// How open() opens: one of read_only, write_only, read_write, with
  /// create and truncate or'ed in as wanted.
  enum Mode : unsigned {
    read_only = 1,   ///< O_RDONLY
    write_only = 2,  ///< O_WRONLY
    read_write = 3,  ///< O_RDWR
    create = 4,      ///< O_CREAT (with `permissions`)
    truncate = 8,    ///< O_TRUNC
  };

  /// Opens `path`; throws std::system_error naming the path and the mode,
  /// std::invalid_argument for a mode with no access (or unknown bits).
  static AsyncFile open(const std::string& path, unsigned mode, unsigned permissions = 0644);

  /// A closed file (is_open() false).
  AsyncFile() = default;
  ///@{
  /// Moves the open file; `o` is left closed. Assigning over an open file
  /// closes it first (a failed close goes to weft's error handler).
  AsyncFile(AsyncFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}
  AsyncFile& operator=(AsyncFile&& o) noexcept;
  ///@}
  AsyncFile(const AsyncFile&) = delete;
  AsyncFile& operator=(const AsyncFile&) = delete;
  /// Closes; a failed close goes to weft's error handler (close() reports it).
  ~AsyncFile();

  /// Closes now; a failure is std::system_error naming the path.
  void close();
  /// True between open() and close().
  bool is_open() const noexcept { return fd_ >= 0; }
  /// The path given to open().
  const std::string& path() const noexcept { return path_; }
  /// The file's size now (fstat); std::system_error on failure.
  std::uint64_t size() const;

  /// co_await read_at(buf, offset): reads up to buf.size() bytes at
  /// `offset`; yields the count (short only at the end of the file).
  detail::aio::IoAwaiter read_at(std::span<std::byte> buf, std::uint64_t offset, std::stop_token stop = {}) const;
  /// co_await write_at(bytes, offset): writes them all at `offset`; yields
  /// bytes.size().
  detail::aio::IoAwaiter write_at(std::span<const std::byte> bytes, std::uint64_t offset,
                                  std::stop_token stop = {}) const;
  /// co_await sync(): what was written is on the disk (fdatasync).
  detail::aio::IoAwaiter sync(std::stop_token stop = {}) const;

  /// "io_uring" or "threads": the backend this process uses (starting it).
  static std::string_view backend();

  /// The file descriptor (-1 when closed).
  int native_handle() const noexcept { return fd_; }

 private:
  detail::aio::IoAwaiter make(detail::aio::IoKind kind, std::byte* buf, std::size_t len, std::uint64_t offset,
                              std::stop_token stop) const;
  int fd_ = -1;
  std::string path_;
};

/// Combines AsyncFile modes: `AsyncFile::write_only | AsyncFile::create`.
constexpr unsigned operator|(AsyncFile::Mode a, AsyncFile::Mode b) noexcept {
  return static_cast<unsigned>(a) | static_cast<unsigned>(b);
}
/// Combines a combination with one more mode.
constexpr unsigned operator|(unsigned a, AsyncFile::Mode b) noexcept { return a | static_cast<unsigned>(b); }

}  // namespace weft
