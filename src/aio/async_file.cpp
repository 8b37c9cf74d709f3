// weft::AsyncFile (weft/aio/async_file.hpp): the one file that includes
// <liburing.h>. Two backends behind detail::aio::submit():
//   Ring     one io_uring per process; a submitter prepares its SQE under a
//            lock, submits, and takes the completions already there (a
//            page-cache hit completes inside the submit, so its coroutine
//            goes on in place); a completion thread sleeps on a condition
//            variable while nothing is in the kernel, else in
//            io_uring_wait_cqe, and queues each finished operation's
//            coroutine on its pool;
//   Threads  4 blocking threads running pread/pwrite/fdatasync, for hosts
//            that refuse io_uring (or WEFT_AIO_BACKEND=threads).
#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "weft/aio/async_file.hpp"
#include "weft/error.hpp"

namespace weft {
namespace detail::aio {
namespace {

constexpr unsigned kRingDepth = 256;  // operations in the kernel at once
constexpr int kFallbackThreads = 4;

const char* verb(IoKind k) noexcept {
  switch (k) {
    case IoKind::read: return "read";
    case IoKind::write: return "write";
    case IoKind::sync: return "sync";
  }
  return "?";
}

int fd_of(const IoOp& op) noexcept { return op.file->native_handle(); }

// Records a result of `res` (bytes or -errno) and says whether the op is
// finished (a short write is not: the caller resubmits the rest).
bool account(IoOp& op, long res) noexcept {
  if (res < 0) {
    op.error = static_cast<int>(-res);
    return true;
  }
  op.done += static_cast<std::size_t>(res);
  if (op.kind != IoKind::write || op.done == op.len) return true;
  if (res == 0) {  // no progress: the device refuses more
    op.error = ENOSPC;
    return true;
  }
  return false;
}

void finish(IoOp& op) noexcept {
  if (op.claim()) op.resume();
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual void submit(IoOp* op) = 0;
  virtual const char* name() const noexcept = 0;
};

// ---- the thread fallback ------------------------------------------------------

class Threads final : public Backend {
 public:
  Threads() {
    for (int i = 0; i < kFallbackThreads; ++i) threads_.emplace_back([this] { run(); });
  }
  ~Threads() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void submit(IoOp* op) override {
    {
      std::lock_guard lock(mu_);
      op->next_op = nullptr;
      (tail_ != nullptr ? tail_->next_op : head_) = op;
      tail_ = op;
    }
    cv_.notify_one();
  }
  const char* name() const noexcept override { return "threads"; }

 private:
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || head_ != nullptr; });
      if (head_ == nullptr) return;  // stopping, nothing left
      IoOp* op = head_;
      head_ = op->next_op;
      if (head_ == nullptr) tail_ = nullptr;
      lock.unlock();
      perform(*op);
      finish(*op);
      lock.lock();
    }
  }
  static void perform(IoOp& op) noexcept {
    for (;;) {
      long res = 0;
      switch (op.kind) {
        case IoKind::read: res = ::pread(fd_of(op), op.buf, op.len, static_cast<off_t>(op.offset)); break;
        case IoKind::write:
          res = ::pwrite(fd_of(op), op.buf + op.done, op.len - op.done, static_cast<off_t>(op.offset + op.done));
          break;
        case IoKind::sync: res = ::fdatasync(fd_of(op)); break;
      }
      if (res < 0 && errno == EINTR) continue;
      if (account(op, res < 0 ? -errno : res)) return;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  IoOp* head_ = nullptr;
  IoOp* tail_ = nullptr;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// ---- io_uring -------------------------------------------------------------------

class Ring final : public Backend {
 public:
  // Throws std::system_error if the kernel refuses a ring.
  Ring() {
    if (const int rc = io_uring_queue_init(kRingDepth, &ring_, 0); rc < 0)
      throw std::system_error(-rc, std::generic_category(), "io_uring_queue_init");
    reaper_ = std::thread([this] { run(); });
  }
  ~Ring() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      // A no-op with no operation behind it wakes the completion thread if
      // it sleeps in the kernel.
      if (io_uring_sqe* sqe = io_uring_get_sqe(&ring_)) {
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data(sqe, nullptr);
        ++in_kernel_;
        io_uring_submit(&ring_);
      }
    }
    cv_.notify_one();
    reaper_.join();
    io_uring_queue_exit(&ring_);
  }

  // Submits, then takes the completions already there: a read served from
  // the page cache completes inside io_uring_enter, so its coroutine goes
  // on in place (arm() finds it claimed) and nobody is woken.
  void submit(IoOp* op) override {
    IoOp* done = nullptr;
    bool wake_reaper = false;
    {
      std::lock_guard lock(mu_);
      if (in_kernel_ >= kRingDepth) {  // full: waits in line for a completion
        op->next_op = nullptr;
        (tail_ != nullptr ? tail_->next_op : head_) = op;
        tail_ = op;
        return;
      }
      start(op);
      done = drain();
      wake_reaper = in_kernel_ > 0 && !reaper_armed_;
    }
    if (wake_reaper) cv_.notify_one();
    finish_all(done);
  }
  const char* name() const noexcept override { return "io_uring"; }

 private:
  // Under mu_, with room in the kernel.
  void start(IoOp* op) noexcept {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // cannot happen with in_kernel_ < depth; fail the op rather than lose it
      op->error = EAGAIN;
      op->next_op = failed_;
      failed_ = op;
      return;
    }
    switch (op->kind) {
      case IoKind::read: io_uring_prep_read(sqe, fd_of(*op), op->buf, static_cast<unsigned>(op->len), op->offset); break;
      case IoKind::write:
        io_uring_prep_write(sqe, fd_of(*op), op->buf + op->done, static_cast<unsigned>(op->len - op->done),
                            op->offset + op->done);
        break;
      case IoKind::sync: io_uring_prep_fsync(sqe, fd_of(*op), IORING_FSYNC_DATASYNC); break;
    }
    io_uring_sqe_set_data(sqe, op);
    // release: the op's fields, written on this thread, before the thread
    // that takes its completion reads them (the kernel orders it anyway;
    // this makes the order visible to ThreadSanitizer for one store).
    op->handed.store(true, std::memory_order_release);
    ++in_kernel_;
    for (;;) {
      const int rc = io_uring_submit(&ring_);
      if (rc >= 0 || rc != -EINTR) {
        if (rc < 0 && rc != -EAGAIN && rc != -EBUSY) {
          report_error("weft::AsyncFile: io_uring_submit failed",
                       std::make_exception_ptr(std::system_error(-rc, std::generic_category(), "io_uring_submit")));
        }
        // EAGAIN/EBUSY: the SQE stays queued and goes in with the next submit.
        return;
      }
    }
  }

  // Under mu_: accounts every completion there is and returns the finished
  // operations (to finish_all() once the lock is dropped); resubmits the
  // rest of short writes and starts operations waiting in line.
  IoOp* drain() noexcept {
    IoOp* done = std::exchange(failed_, nullptr);
    IoOp* again = nullptr;
    unsigned head = 0, seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      auto* op = static_cast<IoOp*>(io_uring_cqe_get_data(cqe));
      if (op == nullptr) continue;  // the destructor's wake-up
      // acquire: pairs with start()'s release.
      (void)op->handed.load(std::memory_order_acquire);
      if (account(*op, cqe->res)) {
        op->next_op = done;
        done = op;
      } else {
        op->next_op = again;
        again = op;
      }
    }
    io_uring_cq_advance(&ring_, seen);
    in_kernel_ -= seen;
    while (again != nullptr) start(std::exchange(again, again->next_op));
    while (head_ != nullptr && in_kernel_ < kRingDepth) {
      IoOp* op = head_;
      head_ = op->next_op;
      if (head_ == nullptr) tail_ = nullptr;
      start(op);
    }
    return done;
  }

  static void finish_all(IoOp* done) noexcept {
    while (done != nullptr) finish(*std::exchange(done, done->next_op));
  }

  // The completion thread, for what does not complete at submission (a
  // read from the disk, a write, a sync): it sleeps on a condition
  // variable while nothing is in the kernel, else in io_uring_wait_cqe.
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return in_kernel_ > 0 || stopping_; });
      if (in_kernel_ == 0) return;  // stopping, and nothing is left
      reaper_armed_ = true;
      lock.unlock();
      // Returns once a completion is there; a submitter may take it first,
      // and then drain() below finds nothing, which is harmless. The raw
      // enter, not io_uring_wait_cqe(): that one reads the completion
      // queue's head outside mu_, and only drain() (under mu_) may.
      const int rc = io_uring_enter(static_cast<unsigned>(ring_.ring_fd), 0, 1, IORING_ENTER_GETEVENTS, nullptr);
      lock.lock();
      reaper_armed_ = false;
      if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        report_error("weft::AsyncFile: the completion thread stops",
                     std::make_exception_ptr(std::system_error(-rc, std::generic_category(), "io_uring_enter")));
        return;
      }
      IoOp* done = drain();
      lock.unlock();
      finish_all(done);
      lock.lock();
    }
  }

  io_uring ring_{};
  std::mutex mu_;  // the submission and completion queues, in_kernel_ and the line
  std::condition_variable cv_;
  unsigned in_kernel_ = 0;
  bool reaper_armed_ = false;  // the completion thread is (about to be) in io_uring_wait_cqe
  IoOp* head_ = nullptr;
  IoOp* tail_ = nullptr;
  IoOp* failed_ = nullptr;
  bool stopping_ = false;
  std::thread reaper_;
};

std::unique_ptr<Backend> make_backend() {
  const char* forced = std::getenv("WEFT_AIO_BACKEND");
  if (forced != nullptr && std::strcmp(forced, "threads") == 0) {
    report_error("weft::AsyncFile: io_uring not used (WEFT_AIO_BACKEND=threads); file operations run on 4 "
                 "blocking threads",
                 std::make_exception_ptr(std::system_error(ENOSYS, std::generic_category(), "io_uring_setup")));
    return std::make_unique<Threads>();
  }
  try {
    return std::make_unique<Ring>();
  } catch (const std::system_error&) {
    report_error("weft::AsyncFile: io_uring is not available here; file operations run on 4 blocking threads",
                 std::current_exception());
    return std::make_unique<Threads>();
  }
}

Backend& backend() {
  static const std::unique_ptr<Backend> b = make_backend();
  return *b;
}

std::string where(const IoOp& op) {
  std::string s = "weft::AsyncFile: cannot ";
  s += verb(op.kind);
  s += " '" + op.file->path() + "'";
  if (op.kind != IoKind::sync) s += " at offset " + std::to_string(op.offset + op.done);
  return s;
}

}  // namespace

void submit(IoOp* op) { backend().submit(op); }

void throw_io_error(const IoOp& op) { throw std::system_error(op.error, std::generic_category(), where(op)); }

}  // namespace detail::aio

// ---- AsyncFile --------------------------------------------------------------

AsyncFile AsyncFile::open(const std::string& path, unsigned mode, unsigned permissions) {
  int flags = 0;
  const char* what = nullptr;
  switch (mode & 3U) {
    case read_only: flags = O_RDONLY, what = "reading"; break;
    case write_only: flags = O_WRONLY, what = "writing"; break;
    case read_write: flags = O_RDWR, what = "reading and writing"; break;
    default:
      throw std::invalid_argument("weft::AsyncFile::open: '" + path +
                                  "': the mode has no access (read_only, write_only or read_write)");
  }
  if ((mode & ~15U) != 0)
    throw std::invalid_argument("weft::AsyncFile::open: '" + path + "': unknown mode bits " + std::to_string(mode));
  if ((mode & create) != 0) flags |= O_CREAT;
  if ((mode & truncate) != 0) flags |= O_TRUNC;
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, permissions);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    throw std::system_error(errno, std::generic_category(), "weft::AsyncFile: cannot open '" + path + "' for " + what);
  AsyncFile f;
  f.fd_ = fd;
  f.path_ = path;
  return f;
}

AsyncFile& AsyncFile::operator=(AsyncFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) {
      try {
        close();
      } catch (...) {
        report_error("weft::AsyncFile replaced with an unreported close failure", std::current_exception());
      }
    }
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
  }
  return *this;
}

AsyncFile::~AsyncFile() {
  if (fd_ < 0) return;
  try {
    close();
  } catch (...) {
    report_error("weft::AsyncFile destroyed with an unreported close failure", std::current_exception());
  }
}

void AsyncFile::close() {
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  // Linux releases the descriptor even when close fails; never retry.
  if (::close(fd) != 0 && errno != EINTR)
    throw std::system_error(errno, std::generic_category(), "weft::AsyncFile: cannot close '" + path_ + "'");
}

std::uint64_t AsyncFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0)
    throw std::system_error(errno, std::generic_category(), "weft::AsyncFile: cannot stat '" + path_ + "'");
  return static_cast<std::uint64_t>(st.st_size);
}

detail::aio::IoAwaiter AsyncFile::read_at(std::span<std::byte> buf, std::uint64_t offset, std::stop_token stop) const {
  return make(detail::aio::IoKind::read, buf.data(), buf.size(), offset, std::move(stop));
}

detail::aio::IoAwaiter AsyncFile::write_at(std::span<const std::byte> bytes, std::uint64_t offset,
                                           std::stop_token stop) const {
  // The kernel only reads the buffer of a write.
  return make(detail::aio::IoKind::write, const_cast<std::byte*>(bytes.data()), bytes.size(), offset,
              std::move(stop));
}

detail::aio::IoAwaiter AsyncFile::sync(std::stop_token stop) const {
  return make(detail::aio::IoKind::sync, nullptr, 0, 0, std::move(stop));
}

detail::aio::IoAwaiter AsyncFile::make(detail::aio::IoKind kind, std::byte* buf, std::size_t len,
                                       std::uint64_t offset, std::stop_token stop) const {
  if (fd_ < 0) throw std::logic_error("weft::AsyncFile: an operation on a closed file");
  // One SQE moves at most 2^31 - 4096 bytes, as read(2) does; ask for no more.
  constexpr std::size_t kMax = 0x7ffff000;
  if (len > kMax && kind == detail::aio::IoKind::read) len = kMax;
  if (len > kMax && kind == detail::aio::IoKind::write)
    throw std::invalid_argument("weft::AsyncFile::write_at: '" + path_ + "': more than 2 GiB in one write");
  return detail::aio::IoAwaiter(kind, this, buf, len, offset, std::move(stop));
}

std::string_view AsyncFile::backend() { return detail::aio::backend().name(); }

}  // namespace weft
