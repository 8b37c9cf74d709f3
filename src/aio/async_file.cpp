// weft::AsyncFile (weft/aio/async_file.hpp): the one file that includes
// <liburing.h>. Two backends behind detail::aio::submit():
//   Rings    one io_uring per submitting thread; a worker batches its
//            coroutines' SQEs into one io_uring_enter, and takes the
//            completions already there (a page-cache hit completes inside
//            the submit, so its coroutine goes on in place); one completion
//            thread sleeps in epoll_wait on the rings' eventfds and queues
//            each operation that finishes later on its coroutine's pool;
//   Threads  4 blocking threads running pread/pwrite/fdatasync, for hosts
//            that refuse io_uring (or WEFT_AIO_BACKEND=threads).
#include <fcntl.h>
#include <liburing.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <atomic>
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
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/exec/fault_injection.hpp"
#include "weft/detail/exec/deferred.hpp"
#include "weft/error.hpp"

namespace weft {
namespace detail {
std::atomic<bool> g_aio_signals_lost{false};
}  // namespace detail
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

// A ring has operations left in the kernel after its submitter's drain:
// the completion thread must not sleep without its sweep (Rings::run()).
void note_ring_busy() noexcept;

// One ring per thread that submits: a single shared ring serialized every
// submission (and the page-cache copies a submission does inline) on one
// lock, so 2 workers read no faster than one. A ring outlives its thread
// (operations in flight still complete) and is handed to the next thread
// that needs one.
class Ring {
 public:
  // Throws std::system_error if the kernel refuses a ring.
  explicit Ring(int epoll_fd) {
    if (const int rc = io_uring_queue_init(kRingDepth, &ring_, 0); rc < 0)
      throw std::system_error(-rc, std::generic_category(), "io_uring_queue_init");
    efd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = this;
    if (efd_ < 0 || io_uring_register_eventfd(&ring_, efd_) < 0 || ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, efd_, &ev) < 0) {
      const int e = errno;
      if (efd_ >= 0) ::close(efd_);
      io_uring_queue_exit(&ring_);
      throw std::system_error(e, std::generic_category(), "io_uring completion eventfd");
    }
  }
  ~Ring() {
    io_uring_queue_exit(&ring_);
    ::close(efd_);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // On a worker, the SQE waits for the worker's other coroutines (up to
  // kBatch) and goes in with theirs when the worker runs out of tasks
  // (detail/exec/deferred.hpp): one system call for the batch. Elsewhere it
  // goes in at once, and so does a transfer of kUnbatchedBytes or more,
  // with what waits before it: its copy dwarfs a system call, and a batch
  // of big page-cache reads copies them all before the first coroutine
  // reads its buffer, by then pushed out of the cache by the others (8
  // files read whole in 256 KiB reads on 2 vCPUs of an AMD EPYC: 0.40x
  // the MB/s of 2 threads with pread batched, 0.82-0.92x submitted at
  // once). Either way the submitter then takes the completions already
  // there: a read served from the page cache completes inside
  // io_uring_enter, so its coroutine goes on in place (arm() finds it
  // claimed) or is queued on its pool by this thread.
  void submit(IoOp* op, void (*flush_hook)() noexcept) {
    IoOp* done = nullptr;
    bool busy = false;
    {
      std::lock_guard lock(mu_);
      if (in_kernel_ + prepared_ >= kRingDepth) {  // full: waits in line for a completion
        op->next_op = nullptr;
        (tail_ != nullptr ? tail_->next_op : head_) = op;
        tail_ = op;
        if (prepared_ > 0) done = submit_and_drain();  // what is prepared must go in for the line to move
      } else {
        prepare(op);
        if (on_worker_thread() && prepared_ < kBatch && op->len - op->done < kUnbatchedBytes) {
          t_deferred = flush_hook;
          return;
        }
        done = submit_and_drain();
      }
      busy = in_kernel_ > 0;
    }
    if (busy) note_ring_busy();
    // When our own op is among the finished ones, our coroutine goes on in
    // place after this, and may go on for long: the others (operations
    // that finished in the kernel since the last look) must not wait for
    // it in the hand-off slot, where no other worker can take them. A
    // coroutine reading a cached file whole never suspends (in a probe of
    // 8 files read on 2 workers, reads resumed 4-7 ms late, after another
    // file's whole read).
    bool goes_on = false;
    for (const IoOp* d = done; d != nullptr && !goes_on; d = d->next_op) goes_on = d == op;
    finish_all(done, !goes_on);
  }

  // Submits what this ring holds back and takes the completions there are:
  // the owner's deferred batch, or (from the completion thread, when the
  // eventfd says a completion came) whatever finished in the kernel.
  void flush() noexcept {
    IoOp* done = nullptr;
    bool busy = false;
    {
      std::lock_guard lock(mu_);
      done = submit_and_drain();
      busy = in_kernel_ > 0;
    }
    if (busy) note_ring_busy();
    finish_all(done);
  }

  // The completion thread, when the eventfd is readable.
  void on_event() noexcept {
    std::uint64_t n = 0;
    while (::read(efd_, &n, sizeof n) < 0 && errno == EINTR) {
    }
    flush();
  }
  // Operations in the kernel (the completion thread asks before it sleeps,
  // and its sweep).
  bool busy() noexcept {
    std::lock_guard lock(mu_);
    return in_kernel_ > 0;
  }

 private:
  static constexpr unsigned kBatch = 32;  // SQEs a worker holds back at most
  static constexpr std::size_t kUnbatchedBytes = 64 * 1024;  // a transfer this big goes in at once

  // Under mu_, with room in the rings: the op's SQE, not submitted yet.
  void prepare(IoOp* op) noexcept {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {  // cannot happen with room counted; fail the op rather than lose it
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
    ++prepared_;
  }

  // Under mu_: submits every prepared SQE and takes the completions there
  // are, again while taking them prepared more (the rest of a short write,
  // operations from the line). Returns the finished operations, for
  // finish_all() once the lock is dropped.
  //
  // The eventfd is for completions nobody is here to take, so it is off
  // while this thread submits and drains: a read served from the page cache
  // completes inside io_uring_submit(), and each batch's signal used to wake
  // the completion thread only to find the ring drained (65,536 random
  // reads at depth 32 on 2 CPUs: ~700-1,900 wake-ups of a third thread,
  // each preempting a worker). It is on again before the last look at the
  // ring, so a completion the kernel posts later either finds it on and
  // signals, or is in the ring for that look. (The kernel reads the flag
  // after publishing the completion with no full barrier between: a store
  // and a load that x86 may reorder, so both sides could miss each other in
  // a window of a few instructions. The completion thread's sweep covers
  // that: Rings::run().)
  IoOp* submit_and_drain() noexcept {
    IoOp* done = std::exchange(failed_, nullptr);
    set_eventfd(false);
    for (;;) {
      if (prepared_ > 0) {
        int rc = 0;
        do {
          rc = io_uring_submit(&ring_);
        } while (rc == -EINTR);
        if (rc > 0) {
          in_kernel_ += static_cast<unsigned>(rc);
          prepared_ -= std::min(prepared_, static_cast<unsigned>(rc));
        } else if (rc < 0 && rc != -EAGAIN && rc != -EBUSY) {
          report_error("weft::AsyncFile: io_uring_submit failed",
                       std::make_exception_ptr(std::system_error(-rc, std::generic_category(), "io_uring_submit")));
        }
        // EAGAIN/EBUSY: the SQEs stay queued and go in with the next submit.
      }
      const unsigned before = prepared_;
      drain(done);
      if (prepared_ != before && prepared_ != 0) continue;  // new SQEs to submit
      set_eventfd(true);
      // seq_cst: our flag store before our read of the completion queue's
      // tail (io_uring_cq_ready(): an acquire load), as the kernel's
      // publication of a completion comes before its read of the flag.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (io_uring_cq_ready(&ring_) == 0) return done;
      set_eventfd(false);  // one came meanwhile: take it too
    }
  }

  // Under mu_: turns the kernel's eventfd signals on or off (a flag in the
  // shared completion ring; no system call).
  // A test may have every signal lost (fault_injection.hpp). relaxed: a
  // test sets it before the operations it covers.
  void set_eventfd(bool on) noexcept {
    (void)io_uring_cq_eventfd_toggle(&ring_, on && !g_aio_signals_lost.load(std::memory_order_relaxed));
  }

  // Under mu_: accounts every completion there is, chaining the finished
  // operations onto `done`; prepares the rest of short writes and
  // operations waiting in line.
  void drain(IoOp*& done) noexcept {
    IoOp* again = nullptr;
    unsigned head = 0, seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      auto* op = static_cast<IoOp*>(io_uring_cqe_get_data(cqe));
      // acquire: pairs with prepare()'s release.
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
    while (again != nullptr) prepare(std::exchange(again, again->next_op));
    while (head_ != nullptr && in_kernel_ + prepared_ < kRingDepth) {
      IoOp* op = head_;
      head_ = op->next_op;
      if (head_ == nullptr) tail_ = nullptr;
      prepare(op);
    }
  }

  // Claims the finished operations and resumes the ones that are ours to
  // resume, one task per pool from a thread that is not their worker.
  // `may_hand_off`: as Waiter::resume()'s.
  static void finish_all(IoOp* done, bool may_hand_off = true) noexcept {
    WakeList wake;
    while (done != nullptr) wake.claim(std::exchange(done, done->next_op));  // an op sits in no WaitList
    wake.resume(may_hand_off);
  }

  io_uring ring_{};
  int efd_ = -1;   // signalled by the kernel on each completion
  std::mutex mu_;  // the rings, the counts and the line: the owner and the completion thread
  unsigned in_kernel_ = 0;
  unsigned prepared_ = 0;  // SQEs prepared, not yet submitted
  IoOp* head_ = nullptr;
  IoOp* tail_ = nullptr;
  IoOp* failed_ = nullptr;
};

// The rings and the completion thread: it sleeps in epoll_wait on the
// rings' eventfds (nothing spins) and, when one is readable, takes that
// ring's completions and queues their coroutines on their pools. A page-
// cache hit completes inside its submitter's io_uring_enter, which takes it
// first; the eventfd then wakes this thread once per batch for nothing.
void give_back_ring(Ring* r) noexcept;

// The thread's ring, taken (or made) on its first operation and handed back
// when the thread exits.
struct RingHolder {
  Ring* ring = nullptr;
  ~RingHolder() {
    if (ring != nullptr) give_back_ring(ring);
  }
};
thread_local RingHolder t_ring;

class Rings final : public Backend {
 public:
  Rings() {
    epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
    stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    poke_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event stop{}, poke{};
    stop.events = poke.events = EPOLLIN;
    stop.data.ptr = nullptr;  // the stop
    poke.data.ptr = this;     // a poke (note_busy())
    if (epfd_ < 0 || stop_fd_ < 0 || poke_fd_ < 0 || ::epoll_ctl(epfd_, EPOLL_CTL_ADD, stop_fd_, &stop) < 0 ||
        ::epoll_ctl(epfd_, EPOLL_CTL_ADD, poke_fd_, &poke) < 0) {
      const int e = errno;
      close_fds();
      throw std::system_error(e, std::generic_category(), "epoll/eventfd");
    }
    try {
      free_.push_back(make_ring());  // the probe: throws where io_uring is refused
    } catch (...) {
      all_.clear();
      close_fds();
      throw;
    }
    thread_ = std::thread([this] { run(); });
  }
  ~Rings() override {
    instance = nullptr;  // threads that exit later keep their rings
    const std::uint64_t one = 1;
    (void)::write(stop_fd_, &one, sizeof one);
    thread_.join();
    all_.clear();
    close_fds();
  }
  void submit(IoOp* op) override { mine().submit(op, &flush_mine); }
  const char* name() const noexcept override { return "io_uring"; }

  // A submitter left operations in the kernel: if the completion thread
  // sleeps without a timeout, poke it, so that it sweeps until they are
  // done. seq_cst, against run()'s store of untimed_ before its look at the
  // rings: either that look sees the submitter's operations (counted under
  // the ring's lock before this load), or this load sees the store. The
  // exchange makes one poke per such sleep.
  void note_busy() noexcept {
    if (untimed_.load(std::memory_order_seq_cst) && untimed_.exchange(false, std::memory_order_seq_cst)) {
      const std::uint64_t one = 1;
      (void)::write(poke_fd_, &one, sizeof one);
    }
  }

  static Rings* instance;

  void give_back(Ring* r) noexcept {
    std::lock_guard lock(mu_);
    try {
      free_.push_back(r);
    } catch (...) {  // no room to list it: it stays with all_, unused
    }
  }

 private:
  Ring& mine() {
    if (t_ring.ring == nullptr) {
      std::lock_guard lock(mu_);
      if (free_.empty()) free_.push_back(make_ring());
      t_ring.ring = free_.back();
      free_.pop_back();
    }
    return *t_ring.ring;
  }
  // Under mu_ (or in the constructor).
  Ring* make_ring() {
    all_.push_back(std::make_unique<Ring>(epfd_));
    return all_.back().get();
  }
  static void flush_mine() noexcept {
    if (t_ring.ring != nullptr) t_ring.ring->flush();
  }

  void close_fds() noexcept {
    for (int fd : {poke_fd_, stop_fd_, epfd_})
      if (fd >= 0) ::close(fd);
  }

  // While some ring has operations in the kernel, the completion thread
  // also wakes every kSweepMs and takes whatever completed: the one signal
  // a submitter's toggle can lose (Ring::submit_and_drain()) then costs at
  // most this long, not a coroutine that never resumes. With nothing in
  // the kernel it sleeps until a signal.
  static constexpr int kSweepMs = 10;

  bool any_busy() {
    std::lock_guard lock(mu_);
    return std::any_of(all_.begin(), all_.end(), [](const std::unique_ptr<Ring>& r) { return r->busy(); });
  }

  // Flushes every ring with operations in the kernel. all_ only grows and
  // its rings stay until the destructor has joined this thread, so a ring
  // taken under the lock outlives it; the flush runs without the lock (it
  // resumes coroutines).
  void sweep() {
    for (std::size_t i = 0;; ++i) {
      Ring* r = nullptr;
      {
        std::lock_guard lock(mu_);
        if (i >= all_.size()) return;
        r = all_[i].get();
      }
      if (r->busy()) r->flush();
    }
  }

  void run() {
    epoll_event events[16];
    for (;;) {
      // seq_cst: see note_busy(). relaxed clear: only this thread's own
      // next store of it matters to a submitter that reads false.
      untimed_.store(true, std::memory_order_seq_cst);
      const bool busy = any_busy();
      if (busy) untimed_.store(false, std::memory_order_relaxed);
      const int n = ::epoll_wait(epfd_, events, 16, busy ? kSweepMs : -1);
      if (n == 0) {
        sweep();
        continue;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        report_error("weft::AsyncFile: the completion thread stops",
                     std::make_exception_ptr(std::system_error(errno, std::generic_category(), "epoll_wait")));
        return;
      }
      for (int i = 0; i < n; ++i) {
        if (events[i].data.ptr == nullptr) return;  // the destructor
        if (events[i].data.ptr == this) {           // a poke: the loop looks at the rings again
          std::uint64_t pokes = 0;
          while (::read(poke_fd_, &pokes, sizeof pokes) < 0 && errno == EINTR) {
          }
          continue;
        }
        static_cast<Ring*>(events[i].data.ptr)->on_event();
      }
    }
  }

  int epfd_ = -1;
  int stop_fd_ = -1;
  int poke_fd_ = -1;
  std::atomic<bool> untimed_{false};  // the completion thread sleeps (or is about to) without a timeout
  std::mutex mu_;  // all_ and free_
  std::vector<std::unique_ptr<Ring>> all_;
  std::vector<Ring*> free_;
  std::thread thread_;
};

Rings* Rings::instance = nullptr;

void note_ring_busy() noexcept {
  // A ring outlives the backend only in a thread that exits after it (the
  // destructor's comment): then nobody waits for its completions.
  if (Rings* r = Rings::instance) r->note_busy();
}

void give_back_ring(Ring* r) noexcept {
  if (Rings::instance == nullptr) return;
  r->flush();  // nothing it holds back waits for the next thread to take it
  Rings::instance->give_back(r);
}

std::unique_ptr<Backend> make_backend() {
  const char* forced = std::getenv("WEFT_AIO_BACKEND");
  if (forced != nullptr && std::strcmp(forced, "threads") == 0) {
    report_error("weft::AsyncFile: io_uring not used (WEFT_AIO_BACKEND=threads); file operations run on 4 "
                 "blocking threads",
                 std::make_exception_ptr(std::system_error(ENOSYS, std::generic_category(), "io_uring_setup")));
    return std::make_unique<Threads>();
  }
  try {
    auto rings = std::make_unique<Rings>();
    Rings::instance = rings.get();
    return rings;
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
