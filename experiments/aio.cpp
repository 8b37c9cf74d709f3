// `weft aio`: timers, channels and file I/O for coroutines against the
// peers that do the same job with threads or with Asio (weft/xp/aio.hpp).
#include "weft/xp/aio.hpp"

// Boost 1.74 enables its C++20 awaitables for g++ only; clang 14 has them
// too, with libstdc++'s <coroutine>. Asio's std::exchange needs <utility>.
#include <utility>
#if defined(__clang__) && !defined(BOOST_ASIO_HAS_CO_AWAIT)
#define BOOST_ASIO_HAS_CO_AWAIT 1
#define BOOST_ASIO_HAS_STD_COROUTINE 1
#endif
// clang 14 under AddressSanitizer cannot emit Asio's coroutine templates
// ("cannot represent a difference across sections"): no asio row there.
#if defined(WEFT_HAVE_ASIO) && defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_AIO_NO_ASIO 1
#endif
#endif
#if defined(WEFT_HAVE_ASIO) && !defined(WEFT_AIO_NO_ASIO)
#define WEFT_AIO_ASIO 1
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "file_support.hpp"
#include "kernels.hpp"
#include "peer_support.hpp"
#include "timed_threads.hpp"
#include "weft/aio/async_file.hpp"
#include "weft/aio/channel.hpp"
#include "weft/aio/sleep.hpp"
#include "weft/exec/coro.hpp"
#include "weft/exec/thread_pool.hpp"
#include "weft/io/reader.hpp"
#include "weft/queue/mpmc_queue.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

#ifdef WEFT_AIO_ASIO
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#endif

namespace weft::xp {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kBlock = 4096;
constexpr std::size_t kChunk = 256 * 1024;
constexpr std::size_t kQueueCapacity = 256;  // fanin's channel and queues

// ---- what a run measures ------------------------------------------------------

struct Sample {
  double primary = 0;    // the workload's first metric
  double secondary = 0;  // its second (timers: p99 lateness; files: CPU s/GB)
  double cpu_ms = 0;     // process CPU over the run
};

struct Files;  // the workload's files, made once per `weft aio` run

struct Ctx {
  const AioParams* p = nullptr;
  int threads = 0;
  const Files* files = nullptr;
};

double seconds_since(std::int64_t t0) { return static_cast<double>(wall_ns() - t0) / 1e9; }

// ---- timers -----------------------------------------------------------------------

// The seeded delays, 1-10 ms, the same for every variant.
std::vector<Clock::duration> timer_delays(int n) {
  std::mt19937_64 rng(2026);
  std::uniform_int_distribution<std::int64_t> us(1000, 10000);
  std::vector<Clock::duration> d(static_cast<std::size_t>(n));
  for (auto& x : d) x = std::chrono::microseconds(us(rng));
  return d;
}

Sample lateness_sample(std::vector<double>& late_us, std::int64_t cpu_ns) {
  for (double l : late_us)
    if (l < 0) throw std::runtime_error(fmt::format("aio timers: a timer fired {:.1f} us early", -l));
  const double median = quantile(late_us, 0.5);
  return {median, quantile(late_us, 0.99), static_cast<double>(cpu_ns) / 1e6};
}

Sample timers_weft(const Ctx& c) {
  const auto delays = timer_delays(c.p->timers);
  std::vector<double> late(delays.size());
  ThreadPool pool(PoolOptions{.workers = c.threads});
  start_workers(pool);
  auto one = [&](std::size_t i) -> Task<> {
    const Clock::time_point deadline = Clock::now() + delays[i];
    co_await sleep_until(deadline);
    late[i] = std::chrono::duration<double, std::micro>(Clock::now() - deadline).count();
  };
  auto all = [&]() -> Task<> {
    std::vector<Task<>> ts;
    ts.reserve(delays.size());
    for (std::size_t i = 0; i < delays.size(); ++i) ts.push_back(one(i));
    co_await when_all(std::move(ts));
  };
  const std::int64_t cpu0 = process_cpu_ns();
  sync_wait(pool, all());
  return lateness_sample(late, process_cpu_ns() - cpu0);
}

#ifdef WEFT_AIO_ASIO
Sample timers_asio(const Ctx& c) {
  namespace asio = boost::asio;
  const auto delays = timer_delays(c.p->timers);
  std::vector<double> late(delays.size());
  asio::io_context ctx(c.threads);
  // The coroutines are made before the threads run them (weft's are made
  // inside its timed run): their CPU is counted here and added.
  const std::int64_t spawn0 = process_cpu_ns();
  for (std::size_t i = 0; i < delays.size(); ++i) {
    asio::co_spawn(
        ctx,
        [&, i]() -> asio::awaitable<void> {
          const Clock::time_point deadline = Clock::now() + delays[i];
          asio::steady_timer t(co_await asio::this_coro::executor, deadline);
          co_await t.async_wait(asio::use_awaitable);
          late[i] = std::chrono::duration<double, std::micro>(Clock::now() - deadline).count();
        },
        asio::detached);
  }
  const std::int64_t spawn_ns = process_cpu_ns() - spawn0;
  const ThreadsTimed run = timed_threads(c.threads, [&](int) { ctx.run(); });
  return lateness_sample(late, spawn_ns + run.cpu_ns);
}
#endif

// ---- message passing ------------------------------------------------------------

// The plain blocking queue a thread-based design starts from.
template <class T>
class CondvarQueue {
 public:
  explicit CondvarQueue(std::size_t cap) : cap_(cap) {}
  void push(T v) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return q_.size() < cap_; });
    q_.push_back(v);
    lock.unlock();
    not_empty_.notify_one();
  }
  T pop() {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !q_.empty(); });
    T v = q_.front();
    q_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return v;
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> q_;
  std::size_t cap_;
};

Sample per_message(double s, std::int64_t messages, std::int64_t cpu_ns) {
  return {s * 1e9 / static_cast<double>(messages), 0, static_cast<double>(cpu_ns) / 1e6};
}

void check_sum(const char* what, std::int64_t got, std::int64_t want) {
  if (got != want) throw std::runtime_error(fmt::format("aio {}: the messages summed to {}, expected {}", what, got, want));
}

Sample pingpong_weft(const Ctx& c) {
  const int n = c.p->messages / 2;  // round trips: two messages each
  ThreadPool pool(PoolOptions{.workers = c.threads});
  start_workers(pool);
  Channel<std::int64_t> ping(1), pong(1);
  std::int64_t sum = 0;
  auto a = [&]() -> Task<> {
    for (std::int64_t i = 0; i < n; ++i) {
      co_await ping.push(i);
      sum += *co_await pong.pop();
    }
  };
  auto b = [&]() -> Task<> {
    for (std::int64_t i = 0; i < n; ++i) co_await pong.push(*co_await ping.pop() + 1);
  };
  auto both = [&]() -> Task<> { co_await when_all(a(), b()); };
  const std::int64_t cpu0 = process_cpu_ns(), t0 = wall_ns();
  sync_wait(pool, both());
  const double s = seconds_since(t0);
  check_sum("pingpong", sum, static_cast<std::int64_t>(n) * (n + 1) / 2);
  return per_message(s, 2LL * n, process_cpu_ns() - cpu0);
}

template <class Queue>
Sample pingpong_threads(const Ctx& c) {
  const int n = c.p->messages / 2;
  Queue ping(1), pong(1);
  std::int64_t sum = 0;
  const ThreadsTimed t = timed_threads(2, [&](int side) {
    for (std::int64_t i = 0; i < n; ++i) {
      if (side == 0) {
        ping.push(i);
        sum += pong.pop();
      } else {
        pong.push(ping.pop() + 1);
      }
    }
  });
  check_sum("pingpong", sum, static_cast<std::int64_t>(n) * (n + 1) / 2);
  return per_message(t.seconds, 2LL * n, t.cpu_ns);
}

std::int64_t fanin_expected(const AioParams& p) {
  const std::int64_t each = p.messages / p.producers;
  return static_cast<std::int64_t>(p.producers) * each * (each - 1) / 2;
}

Sample fanin_weft(const Ctx& c) {
  const int each = c.p->messages / c.p->producers;
  ThreadPool pool(PoolOptions{.workers = c.threads});
  start_workers(pool);
  Channel<std::int64_t> ch(kQueueCapacity);
  std::int64_t sum = 0;
  auto producer = [&]() -> Task<> {
    for (std::int64_t i = 0; i < each; ++i) co_await ch.push(i);
  };
  auto consumer = [&]() -> Task<> {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(each) * c.p->producers; ++i) sum += *co_await ch.pop();
  };
  auto all = [&]() -> Task<> {
    std::vector<Task<>> ts;
    ts.push_back(consumer());
    for (int k = 0; k < c.p->producers; ++k) ts.push_back(producer());
    co_await when_all(std::move(ts));
  };
  const std::int64_t cpu0 = process_cpu_ns(), t0 = wall_ns();
  sync_wait(pool, all());
  const double s = seconds_since(t0);
  check_sum("fanin", sum, fanin_expected(*c.p));
  return per_message(s, static_cast<std::int64_t>(each) * c.p->producers, process_cpu_ns() - cpu0);
}

template <class Queue>
Sample fanin_threads(const Ctx& c) {
  const int producers = c.p->producers;
  const std::int64_t each = c.p->messages / producers;
  Queue q(kQueueCapacity);
  std::int64_t sum = 0;
  // Threads 0 .. P-1 produce, thread P consumes.
  const ThreadsTimed t = timed_threads(producers + 1, [&](int k) {
    if (k < producers) {
      for (std::int64_t i = 0; i < each; ++i) q.push(i);
    } else {
      for (std::int64_t i = 0; i < each * producers; ++i) sum += q.pop();
    }
  });
  check_sum("fanin", sum, fanin_expected(*c.p));
  return per_message(t.seconds, each * producers, t.cpu_ns);
}

// ---- files ---------------------------------------------------------------------------

// Every 8-byte word of every file holds its own offset in the file (plus
// the file's index in the high bits): a read is checked by one word.
std::uint64_t word_at(int file, std::uint64_t offset) { return (static_cast<std::uint64_t>(file) << 48) | offset; }

struct Files {
  TempDir dir;  // removed with the files
  std::string fs_type;
  std::string big;                 // random-read
  std::vector<std::string> seq;    // seq-read
  std::vector<std::uint64_t> offsets;  // random-read's block offsets

  Files(const AioParams& p, bool want_big, bool want_seq)
      : dir(p.dir.empty() ? std::filesystem::temp_directory_path().string() : p.dir, "weft-aio-"),
        fs_type(filesystem_name(dir.path())) {
    if (want_big) {
      big = dir.path() + "/random.bin";
      write_file(big, 0, static_cast<std::uint64_t>(p.file_mb) << 20);
      std::mt19937_64 rng(42);
      const std::uint64_t blocks = (static_cast<std::uint64_t>(p.file_mb) << 20) / kBlock;
      offsets.resize(static_cast<std::size_t>(p.reads));
      for (auto& o : offsets) o = (rng() % blocks) * kBlock;
    }
    if (want_seq) {
      for (int f = 0; f < p.files; ++f) {
        seq.push_back(dir.path() + fmt::format("/seq{}.bin", f));
        write_file(seq.back(), f, static_cast<std::uint64_t>(p.seq_file_mb) << 20);
      }
    }
  }

  static void write_file(const std::string& path, int index, std::uint64_t bytes) {
    Fd out(path, O_WRONLY | O_CREAT | O_TRUNC);
    std::vector<std::uint64_t> buf(kChunk / 8);
    for (std::uint64_t off = 0; off < bytes; off += kChunk) {
      for (std::size_t w = 0; w < buf.size(); ++w) buf[w] = word_at(index, off + w * 8);
      write_all(out.get(), reinterpret_cast<const char*>(buf.data()),
                static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, bytes - off)), path);
    }
    if (::fsync(out.get()) != 0) fail("cannot sync", path);
    out.close();
  }

  static std::string filesystem_name(const std::string& p) {
    struct statfs s {};
    if (::statfs(p.c_str(), &s) != 0) return "unknown";
    switch (static_cast<unsigned long>(s.f_type)) {
      case 0x01021994UL: return "tmpfs";
      case 0xEF53UL: return "ext4";
      case 0x58465342UL: return "xfs";
      case 0x9123683EUL: return "btrfs";
      case 0x794c7630UL: return "overlayfs";
      default: return fmt::format("0x{:x}", static_cast<unsigned long>(s.f_type));
    }
  }
};

// Reads `path` whole once (warm), or drops its pages (cold); returns the
// fraction of its pages resident afterwards (mincore), or nothing where it
// cannot be read (mmap or mincore refused).
std::optional<double> prepare_cache(const std::string& path, bool cold) {
  Fd in(path, O_RDONLY);
  struct stat st {};
  if (::fstat(in.get(), &st) != 0) fail("cannot stat", path);
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  if (cold) {
    ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_DONTNEED);
  } else {
    std::vector<char> buf(kChunk);
    for (std::size_t off = 0; off < size; off += kChunk) (void)::pread(in.get(), buf.data(), kChunk, static_cast<off_t>(off));
  }
  std::optional<double> resident;
  if (void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, in.get(), 0); m != MAP_FAILED) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> vec((size + page - 1) / page);
    if (::mincore(m, size, vec.data()) == 0) {
      std::size_t pages_in = 0;
      for (unsigned char v : vec) pages_in += v & 1U;
      resident = static_cast<double>(pages_in) / static_cast<double>(vec.size());
    }
    ::munmap(m, size);
  }
  return resident;
}

void check_word(int file, std::uint64_t offset, const std::byte* data) {
  std::uint64_t w = 0;
  std::memcpy(&w, data, 8);
  if (w != word_at(file, offset))
    throw std::runtime_error(fmt::format("aio: file {} at offset {} holds {:#x}, expected {:#x}", file, offset, w,
                                         word_at(file, offset)));
}

// Checks one word of every 4 KiB block of `n` bytes read at `offset`.
void check_chunk(int file, std::uint64_t offset, const std::byte* data, std::size_t n) {
  for (std::size_t b = 0; b < n; b += kBlock) check_word(file, offset + b, data + b);
}

Sample io_sample(double s, std::uint64_t bytes, std::int64_t cpu_ns) {
  const double gb = static_cast<double>(bytes) / 1e9;
  return {gb * 1e3 / s, static_cast<double>(cpu_ns) / 1e9 / gb, static_cast<double>(cpu_ns) / 1e6};
}

Sample random_weft(const Ctx& c) {
  const Files& f = *c.files;
  ThreadPool pool(PoolOptions{.workers = c.threads});
  start_workers(pool);
  AsyncFile file = AsyncFile::open(f.big, AsyncFile::read_only);
  std::atomic<std::size_t> next{0};
  auto reader = [&]() -> Task<> {
    std::array<std::byte, kBlock> buf;
    // relaxed: a ticket; the reads are independent.
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < f.offsets.size();) {
      const std::size_t n = co_await file.read_at(std::span<std::byte>(buf), f.offsets[i]);
      if (n != kBlock) throw std::runtime_error(fmt::format("aio: a 4 KiB read returned {}", n));
      check_word(0, f.offsets[i], buf.data());
    }
  };
  auto all = [&]() -> Task<> {
    std::vector<Task<>> ts;
    for (int d = 0; d < c.p->depth; ++d) ts.push_back(reader());
    co_await when_all(std::move(ts));
  };
  const std::int64_t cpu0 = process_cpu_ns(), t0 = wall_ns();
  sync_wait(pool, all());
  const double s = seconds_since(t0);
  return io_sample(s, f.offsets.size() * kBlock, process_cpu_ns() - cpu0);
}

// `threads` threads taking the next offset until none is left.
Sample random_pread(const Ctx& c, int threads) {
  const Files& f = *c.files;
  Fd in(f.big, O_RDONLY);
  std::atomic<std::size_t> next{0};
  const ThreadsTimed t = timed_threads(threads, [&](int) {
    std::array<std::byte, kBlock> buf;
    // relaxed: a ticket, as above.
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < f.offsets.size();) {
      if (::pread(in.get(), buf.data(), kBlock, static_cast<off_t>(f.offsets[i])) != static_cast<ssize_t>(kBlock))
        fail("a 4 KiB pread came short or failed in", f.big);
      check_word(0, f.offsets[i], buf.data());
    }
  });
  return io_sample(t.seconds, f.offsets.size() * kBlock, t.cpu_ns);
}

Sample random_pread_threads(const Ctx& c) { return random_pread(c, c.p->depth); }
Sample random_pread_pool(const Ctx& c) { return random_pread(c, c.threads); }

std::uint64_t seq_bytes(const AioParams& p) { return static_cast<std::uint64_t>(p.files) * (static_cast<std::uint64_t>(p.seq_file_mb) << 20); }

Sample seq_weft(const Ctx& c) {
  const Files& f = *c.files;
  ThreadPool pool(PoolOptions{.workers = c.threads});
  start_workers(pool);
  auto one = [&](int k) -> Task<> {
    AsyncFile file = AsyncFile::open(f.seq[static_cast<std::size_t>(k)], AsyncFile::read_only);
    std::vector<std::byte> buf(kChunk);
    for (std::uint64_t off = 0;; off += kChunk) {
      const std::size_t n = co_await file.read_at(std::span<std::byte>(buf), off);
      check_chunk(k, off, buf.data(), n);
      if (n < kChunk) break;
    }
  };
  auto all = [&]() -> Task<> {
    std::vector<Task<>> ts;
    for (int k = 0; k < c.p->files; ++k) ts.push_back(one(k));
    co_await when_all(std::move(ts));
  };
  const std::int64_t cpu0 = process_cpu_ns(), t0 = wall_ns();
  sync_wait(pool, all());
  const double s = seconds_since(t0);
  return io_sample(s, seq_bytes(*c.p), process_cpu_ns() - cpu0);
}

void read_whole_pread(const std::string& path, int k) {
  Fd in(path, O_RDONLY);
  std::vector<std::byte> buf(kChunk);
  for (std::uint64_t off = 0;; off += kChunk) {
    const ssize_t n = ::pread(in.get(), buf.data(), kChunk, static_cast<off_t>(off));
    if (n < 0) fail("cannot pread", path);
    check_chunk(k, off, buf.data(), static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < kChunk) break;
  }
}

// `threads` threads, file k on thread k % threads.
Sample seq_threads(const Ctx& c, int threads) {
  const Files& f = *c.files;
  const ThreadsTimed t = timed_threads(threads, [&](int i) {
    for (int k = i; k < c.p->files; k += threads) read_whole_pread(f.seq[static_cast<std::size_t>(k)], k);
  });
  return io_sample(t.seconds, seq_bytes(*c.p), t.cpu_ns);
}

Sample seq_pread_threads(const Ctx& c) { return seq_threads(c, c.p->files); }
Sample seq_pread_pool(const Ctx& c) { return seq_threads(c, c.threads); }

Sample seq_reader(const Ctx& c) {
  const Files& f = *c.files;
  const std::int64_t cpu0 = process_cpu_ns(), t0 = wall_ns();
  std::vector<std::byte> buf(kChunk);
  for (int k = 0; k < c.p->files; ++k) {
    Reader r(f.seq[static_cast<std::size_t>(k)]);
    for (std::uint64_t off = 0;; off += kChunk) {
      const std::size_t n = r.read(std::span<std::byte>(buf));
      check_chunk(k, off, buf.data(), n);
      if (n < kChunk) break;
    }
  }
  const double s = seconds_since(t0);
  return io_sample(s, seq_bytes(*c.p), process_cpu_ns() - cpu0);
}

// ---- the plan ------------------------------------------------------------------------

using RunFn = Sample (*)(const Ctx&);

#ifdef WEFT_AIO_NO_ASIO
constexpr harness::Peer kAsioAwaitables{"a build of Boost.Asio's awaitables (clang 14's AddressSanitizer cannot)", false};
#else
constexpr harness::Peer kAsioAwaitables = kAsio;
#endif
#ifdef WEFT_AIO_ASIO
#define WEFT_AIO_IF_ASIO(runner) runner
#else
#define WEFT_AIO_IF_ASIO(runner) nullptr
#endif

struct Impl {
  std::string_view workload;
  harness::Variant<RunFn> variant;
  std::string_view note;  // how the variant does the job
};

// The variants' names, in the order --variant lists them (each workload's
// runners are in kImpls).
struct Name {
  std::string_view name;
};
constexpr std::array<Name, 7> kNames{{
    {"weft"}, {"asio"}, {"mpmc-threads"}, {"mutex-condvar"}, {"pread-threads"}, {"pread-pool"}, {"reader"}}};

// A workload: its figures (the second may be absent) and whether it reads
// the files (then they are made, and warmed or dropped before each run).
struct Workload {
  std::string_view name;
  const char* primary;
  const char* primary_unit;
  const char* secondary;  // nullptr: none
  const char* secondary_unit;
  bool reads_files;
};
constexpr std::array<Workload, 5> kWorkloads{{
    {"timers", "lateness_median_us", "us", "lateness_p99_us", "us", false},
    {"pingpong", "ns_per_message", "ns", nullptr, nullptr, false},
    {"fanin", "ns_per_message", "ns", nullptr, nullptr, false},
    {"random-read", "mb_per_s", "MB/s", "cpu_s_per_gb", "s/GB", true},
    {"seq-read", "mb_per_s", "MB/s", "cpu_s_per_gb", "s/GB", true},
}};

const Workload& workload(std::string_view name) {
  for (const Workload& w : kWorkloads)
    if (w.name == name) return w;
  throw std::invalid_argument("aio: no workload '" + std::string(name) + "'");
}

const std::array<Impl, 15> kImpls{{
    {"timers", {"weft", kBuiltIn, true, timers_weft}, "weft::sleep_until on a pool of `workers`"},
    {"timers", {"asio", kAsioAwaitables, true, WEFT_AIO_IF_ASIO(timers_asio)},
     "steady_timer awaitables (co_spawn) on an io_context run by `workers` threads"},
    {"pingpong", {"weft", kBuiltIn, true, pingpong_weft}, "two coroutines, two Channel<int>(1), a pool of `workers`"},
    {"pingpong", {"mpmc-threads", kBuiltIn, true, pingpong_threads<MpmcQueue<std::int64_t>>},
     "two threads, two MpmcQueue(2) with blocking push/pop (spin, then park)"},
    {"pingpong", {"mutex-condvar", kBuiltIn, true, pingpong_threads<CondvarQueue<std::int64_t>>},
     "two threads, two mutex+condvar queues of capacity 1"},
    {"fanin", {"weft", kBuiltIn, true, fanin_weft}, "P producer coroutines, one consumer, a Channel of 256"},
    {"fanin", {"mpmc-threads", kBuiltIn, true, fanin_threads<MpmcQueue<std::int64_t>>},
     "P producer threads, one consumer thread, an MpmcQueue of 256"},
    {"fanin", {"mutex-condvar", kBuiltIn, true, fanin_threads<CondvarQueue<std::int64_t>>},
     "P producer threads, one consumer thread, a mutex+condvar queue of 256"},
    {"random-read", {"weft", kBuiltIn, true, random_weft}, "`depth` coroutines with AsyncFile::read_at, a pool of `workers`"},
    {"random-read", {"pread-threads", kBuiltIn, true, random_pread_threads}, "`depth` threads with pread: a thread per read in flight"},
    {"random-read", {"pread-pool", kBuiltIn, true, random_pread_pool}, "`workers` threads with pread"},
    {"seq-read", {"weft", kBuiltIn, true, seq_weft}, "a coroutine per file with AsyncFile::read_at, a pool of `workers`"},
    {"seq-read", {"pread-threads", kBuiltIn, true, seq_pread_threads}, "a thread per file with pread"},
    {"seq-read", {"pread-pool", kBuiltIn, true, seq_pread_pool}, "`workers` threads with pread, files dealt round-robin"},
    {"seq-read", {"reader", kBuiltIn, false, seq_reader}, "weft::Reader, one file after another on one thread"},
}};

const Impl* find_impl(std::string_view workload, std::string_view variant) {
  for (const Impl& i : kImpls)
    if (i.workload == workload && i.variant.name == variant) return &i;
  return nullptr;
}

// The goals that compare two variants of one workload on one metric:
// a / b against `goal`.
struct Goal {
  const char* what;
  const char* workload;
  const char* a;
  const char* b;
  const char* metric;
  const char* goal;
};
constexpr std::array<Goal, 6> kGoals{{
    {"timers: weft / asio lateness median", "timers", "weft", "asio", "lateness_median_us", "<= 1.0"},
    {"timers: weft / asio CPU", "timers", "weft", "asio", "cpu_ms", "<= 1.0"},
    {"pingpong: weft channel / MpmcQueue between threads, ns per message", "pingpong", "weft", "mpmc-threads",
     "ns_per_message", "<= 1.0"},
    {"fanin: mutex+condvar / weft channel, ns per message (throughput ratio)", "fanin", "mutex-condvar", "weft",
     "ns_per_message", ">= 2.0"},
    {"random-read: weft / thread per read, MB/s", "random-read", "weft", "pread-threads", "mb_per_s", ">= 1.5"},
    {"random-read: weft / thread per read, CPU per byte", "random-read", "weft", "pread-threads", "cpu_s_per_gb",
     "< 1.0"},
}};

nlohmann::json goal_ratios(const Result& r, const std::vector<int>& workers) {
  nlohmann::json ratios = nlohmann::json::array();
  for (int t : workers) {
    const std::string at = " (" + std::to_string(t) + " workers)";
    for (const Goal& g : kGoals)
      add_ratio(ratios, g.what + at,
                ratio(r, Key(g.a, g.metric, t).workload(g.workload), Key(g.b, g.metric, t).workload(g.workload)),
                goal_at(t, g.goal));
    // The best thread-based way to read the files sequentially.
    std::optional<double> best;
    for (const char* v : {"pread-threads", "pread-pool", "reader"}) {
      const std::optional<int> threads = std::string_view(v) == "reader" ? std::optional<int>() : t;
      const auto m = median(r, Key(v, "mb_per_s", threads).workload("seq-read"));
      if (m && (!best || *m > *best)) best = m;
    }
    const auto w = median(r, Key("weft", "mb_per_s", t).workload("seq-read"));
    add_ratio(ratios, "seq-read: weft / the best thread-based variant, MB/s" + at,
              w && best && *best > 0 ? std::optional<double>(*w / *best) : std::nullopt, goal_at(t, ">= 0.9"));
  }
  return ratios;
}

}  // namespace

const std::vector<std::string>& aio_variants() { return harness::names_of<kNames>(); }
const std::vector<std::string>& aio_workloads() { return harness::names_of<kWorkloads>(); }

Result run_aio(const AioParams& p) {
  const std::vector<int> workers = harness::counts_or_usable(p.workers);
  // The units: per workload, the chosen variants that do its job.
  std::vector<harness::Unit> units;
  std::vector<const Impl*> impls;
  std::vector<std::string> unit_workload;
  for (const std::string& w : p.workloads) {
    std::vector<std::string> chosen;
    for (const std::string& v : p.variants)
      if (find_impl(w, v) != nullptr) chosen.push_back(v);
    std::vector<harness::Variant<RunFn>> table;
    for (const Impl& i : kImpls)
      if (i.workload == w) table.push_back(i.variant);
    for (auto& u : harness::plan_units(table, chosen, workers)) {
      impls.push_back(find_impl(w, u.variant));
      unit_workload.push_back(w);
      units.push_back(std::move(u));
    }
  }
  if (units.empty()) throw BadParam("none of the chosen variants runs any chosen workload");

  const auto wanted = [&](const char* w) { return std::find(p.workloads.begin(), p.workloads.end(), w) != p.workloads.end(); };
  const bool want_big = wanted("random-read");
  const bool want_seq = wanted("seq-read");
  std::unique_ptr<Files> files;
  if (want_big || want_seq) files = std::make_unique<Files>(p, want_big, want_seq);
  // --cold: the largest fraction of a file's pages found resident before a run (mincore),
  // nothing where it could not be read.
  std::vector<std::optional<double>> resident(units.size());

  std::vector<std::vector<Sample>> samples(units.size());
  const harness::PlanOptions plan{p.reps, true};
  harness::interleave(plan, static_cast<int>(units.size()), [&](int i, bool recorded) {
    const std::size_t k = static_cast<std::size_t>(i);
    harness::Unit& u = units[k];
    if (!u.runs()) return;
    if (workload(unit_workload[k]).reads_files) {
      const auto prep = [&](const std::string& path) {
        const std::optional<double> in = prepare_cache(path, p.cold);
        if (p.cold && in && (!resident[k] || *in > *resident[k])) resident[k] = in;
      };
      if (want_big && unit_workload[k] == "random-read") {
        prep(files->big);
      } else {
        for (const auto& s : files->seq) prep(s);
      }
    }
    const Sample s = impls[k]->variant.run(Ctx{&p, u.threads, files.get()});
    if (recorded) samples[k].push_back(s);
    harness::settle();
  });

  Result r;
  r.experiment = "aio";
  r.params = {{"timer_delays", "seeded uniform 1-10 ms"},
              {"fanin_capacity", kQueueCapacity},
              {"read_size", kBlock},
              {"chunk", kChunk},
              {"cache", p.cold ? "cold: POSIX_FADV_DONTNEED before each run (the notes say what stayed resident)"
                               : "warm: each file read whole before each run"},
              {"workers", workers},
              {"aio_backend", std::string(AsyncFile::backend())},
              {"warmup", harness::warmup_text(plan)}};
  if (files) {
    r.params["filesystem"] = files->fs_type;
    r.params["dir"] = std::filesystem::path(files->dir.path()).parent_path().string();
  }
  for (std::size_t k = 0; k < units.size(); ++k) {
    const harness::Unit& u = units[k];
    const Workload& m = workload(unit_workload[k]);
    std::vector<double> first, second, cpu;
    for (const Sample& s : samples[k]) {
      first.push_back(s.primary);
      second.push_back(s.secondary);
      cpu.push_back(s.cpu_ms);
    }
    std::string note = u.runs() ? std::string(impls[k]->note) : u.why_not;
    if (u.runs() && p.cold)
      note += resident[k] ? fmt::format("; cold: {:.0f}% of the pages still resident after POSIX_FADV_DONTNEED", *resident[k] * 100)
                          : std::string("; cold: what stayed resident after POSIX_FADV_DONTNEED is unknown (mincore refused)");
    Row a = make_row(u.variant, u.threads, m.primary, m.primary_unit, std::move(first), u.why_not);
    a.note = note;
    a.labels.workload = unit_workload[k];
    if (m.secondary != nullptr) {
      Row b = with_metric(a, m.secondary, m.secondary_unit, std::move(second));
      r.rows.push_back(std::move(a));
      r.rows.push_back(std::move(b));
    } else {
      r.rows.push_back(std::move(a));
    }
    if (!m.reads_files) r.rows.push_back(with_metric(r.rows.back(), "cpu_ms", "ms", std::move(cpu)));
  }
  r.extra["ratios"] = goal_ratios(r, workers);
  return r;
}

// The registration: `weft aio`, its sizes in the report, its figures.
namespace {

const Register<AioParams> reg{{
    .name = "aio", .page = 108, .seconds = {7, 15, 60},
    .title = "Coroutines waiting on time, on each other and on the disk",
    .summary = "Timers, channels and io_uring file reads for coroutines (weft/aio/) against Boost.Asio timers, "
               "threads with MpmcQueue or a mutex+condvar queue, and threads with pread",
    .options = {names("--workload", &AioParams::workloads, "Workloads", "workload", aio_workloads),
                integer("--timers", &AioParams::timers, "Sleeping coroutines per timers run", 1, 10'000'000),
                integer("--messages", &AioParams::messages, "Messages per pingpong or fanin run", 2, 100'000'000),
                integer("--producers", &AioParams::producers, "Producers of fanin", 1, 1000),
                integer("--reads", &AioParams::reads, "4 KiB reads per random-read run", 1, 100'000'000),
                integer("--depth", &AioParams::depth, "Reads in flight (random-read)", 1, 4096),
                integer("--file-mb", &AioParams::file_mb, "The random-read file, MiB", 1, 1 << 20),
                integer("--files", &AioParams::files, "Files of seq-read", 1, 4096),
                integer("--seq-file-mb", &AioParams::seq_file_mb, "Each seq-read file, MiB", 1, 1 << 20),
                custom<AioParams>(
                    "--cold", "Drop the files' pages (POSIX_FADV_DONTNEED) before each run instead of reading them",
                    "off", [](AioParams& p, const std::vector<std::string>& v) {
                      if (v[0] != "on" && v[0] != "off") throw BadParam("--cold takes on or off, got '" + v[0] + "'");
                      p.cold = v[0] == "on";
                    },
                    [](const AioParams& p) { return std::string(p.cold ? "on" : "off"); }),
                custom<AioParams>(
                    "--dir", "Where the files go", "the temp directory ($TMPDIR or /tmp)",
                    [](AioParams& p, const std::vector<std::string>& v) {
                      std::error_code ec;
                      if (!std::filesystem::is_directory(v[0], ec)) throw BadParam("--dir '" + v[0] + "' is not a directory");
                      p.dir = v[0];
                    },
                    [](const AioParams& p) { return p.dir; }),
                counts("--workers,-w", &AioParams::workers, "Worker counts (weft's pool, Asio's threads, the pread pool)",
                       "available_parallelism"),
                variants(&AioParams::variants, aio_variants), reps(&AioParams::reps)},
    .sizes = {[](AioParams& p) {
                p.timers = 2000;
                p.messages = 40'000;
                p.reads = 8192;
                p.file_mb = 32;
                p.files = 4;
                p.seq_file_mb = 8;
                p.reps = 3;
              },
              nullptr,
              [](AioParams& p) {
                p.messages = 1'000'000;
                p.reads = 131'072;
                p.file_mb = 512;
                p.seq_file_mb = 64;
                p.reps = 7;
              }},
    .check =
        [](const AioParams& p) {
          if (p.messages < p.producers)
            throw BadParam(fmt::format("--messages {} is fewer than --producers {}", p.messages, p.producers));
        },
    .run = run_aio,
    .heading = [](const AioParams& p) {
      return fmt::format("Coroutines that wait: {} timers, {} messages, {} random 4 KiB reads at depth {}, {} x {} MiB "
                         "read whole ({} page cache)",
                         p.timers, p.messages, p.reads, p.depth, p.files, p.seq_file_mb, p.cold ? "cold" : "warm");
    },
    .print = [](const Result& r) { print_goals(r, 72); },
    .for_display = [](const Result& r) { return label_variants(r, &Labels::workload); },
    .figures = {"bars:mb_per_s", "bars:ns_per_message", "bars:lateness_median_us"},
    .headlines = {"lateness_median_us", "ns_per_message", "mb_per_s"},
}};

}  // namespace

}  // namespace weft::xp
