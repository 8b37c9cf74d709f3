#include "file_support.hpp"
#include "timed_threads.hpp"
#include "weft/harness/run.hpp"
#include "weft/xp/io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "weft/io/reader.hpp"
#include "weft/io/writer.hpp"
#include "weft/topo/topology.hpp"
#include "weft/xp/print.hpp"
#include "weft/xp/registry.hpp"

namespace weft::xp {

const std::vector<std::string>& io_variants() {
  static const std::vector<std::string> names{"fgetc",       "getc_unlocked",  "iostream",       "weft-bytes",
                                              "weft-blocks", "read-write-64k", "copy_file_range"};
  return names;
}

std::vector<int> default_io_threads() {
  std::vector<int> t{1, available_parallelism()};
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

std::string default_tmpdir() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? std::string(t) : std::string("/tmp");
}

std::int64_t io_space_needed(std::int64_t size_bytes, int max_threads) {
  return 2 * size_bytes * max_threads;
}

namespace {

// The article's buffer size, for every buffered variant.
constexpr std::size_t kBuffer = std::size_t{64} * 1024;

// Thrown by the copy_file_range variant when the kernel or file system
// does not offer it: the row says so instead of failing the run.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The source: pseudo-random bytes (xorshift), so every byte value occurs.
void make_source(const std::string& path, std::int64_t size, std::uint64_t seed) {
  Fd out(path, O_WRONLY | O_CREAT | O_TRUNC);
  std::vector<std::uint64_t> block(kBuffer / sizeof(std::uint64_t));
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (std::int64_t done = 0; done < size;) {
    for (auto& w : block) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      w = x;
    }
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(size - done, static_cast<std::int64_t>(kBuffer)));
    write_all(out.get(), reinterpret_cast<const char*>(block.data()), n, path);
    done += static_cast<std::int64_t>(n);
  }
  out.close();
}

// ---- the copies ---------------------------------------------------------------

// A stdio stream with a 64 KiB buffer; closed by close() or, on an early
// exit, by the destructor.
class File {
 public:
  File(const std::string& path, const char* mode)
      : f_(std::fopen(path.c_str(), mode)), buf_(std::make_unique<char[]>(kBuffer)), path_(path) {
    if (f_ == nullptr) fail("cannot open", path);
    std::setvbuf(f_, buf_.get(), _IOFBF, kBuffer);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (f_ != nullptr) std::fclose(f_);
  }
  FILE* get() const { return f_; }
  // Closes the stream; throws if it had an error or the close failed.
  void close(const char* what) {
    const bool had_error = std::ferror(f_) != 0;
    const int rc = std::fclose(f_);
    const int err = errno;
    f_ = nullptr;
    if (had_error || rc != 0) fail(what, path_, had_error ? EIO : err);
  }

 private:
  FILE* f_;
  std::unique_ptr<char[]> buf_;
  std::string path_;
};

void copy_fgetc(const std::string& src, const std::string& dst) {
  File in(src, "rb");
  File out(dst, "wb");
  FILE* const i = in.get();
  FILE* const o = out.get();
  for (int c; (c = std::fgetc(i)) != EOF;)
    if (std::fputc(c, o) == EOF) break;
  in.close("cannot read");
  out.close("cannot write");
}

void copy_getc_unlocked(const std::string& src, const std::string& dst) {
  File in(src, "rb");
  File out(dst, "wb");
  FILE* const i = in.get();
  FILE* const o = out.get();
  for (int c; (c = getc_unlocked(i)) != EOF;)
    if (putc_unlocked(c, o) == EOF) break;
  in.close("cannot read");
  out.close("cannot write");
}

void copy_iostream(const std::string& src, const std::string& dst) {
  auto in_buf = std::make_unique<char[]>(kBuffer);
  auto out_buf = std::make_unique<char[]>(kBuffer);
  std::ifstream in;
  std::ofstream out;
  // Before open: libstdc++ honours pubsetbuf only on a stream not yet opened.
  in.rdbuf()->pubsetbuf(in_buf.get(), static_cast<std::streamsize>(kBuffer));
  out.rdbuf()->pubsetbuf(out_buf.get(), static_cast<std::streamsize>(kBuffer));
  in.open(src, std::ios::binary);
  if (!in) fail("cannot open", src);
  out.open(dst, std::ios::binary | std::ios::trunc);
  if (!out) fail("cannot open", dst);
  for (char c; in.get(c);) out.put(c);
  if (in.bad()) fail("cannot read", src, EIO);
  out.close();
  if (!out) fail("cannot write", dst, EIO);
}

void copy_weft_bytes(const std::string& src, const std::string& dst) {
  Reader r(src);
  Writer w = Writer::create(dst);
  {
    Reader::Cursor in{r};
    Writer::Cursor out{w};
    for (int c; (c = in.get()) != Reader::kEof;) out.put(static_cast<std::byte>(c));
  }
  w.close();
}

void copy_weft_blocks(const std::string& src, const std::string& dst) {
  Reader r(src);
  Writer w = Writer::create(dst);
  for (auto s = r.peek(); !s.empty(); s = r.peek()) {
    w.write(s);
    r.consume(s.size());
  }
  w.close();
}

void copy_read_write(const std::string& src, const std::string& dst) {
  Fd in(src, O_RDONLY);
  Fd out(dst, O_WRONLY | O_CREAT | O_TRUNC);
  auto buf = std::make_unique<char[]>(kBuffer);
  for (;;) {
    const ssize_t n = ::read(in.get(), buf.get(), kBuffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read", src);
    }
    write_all(out.get(), buf.get(), static_cast<std::size_t>(n), dst);
  }
  out.close();
}

void copy_cfr(const std::string& src, const std::string& dst) {
  Fd in(src, O_RDONLY);
  Fd out(dst, O_WRONLY | O_CREAT | O_TRUNC);
  bool first = true;
  for (;;) {
    const ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, std::size_t{1} << 30, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (first && (errno == ENOSYS || errno == EXDEV || errno == EOPNOTSUPP || errno == EINVAL))
        throw Unsupported("not available: copy_file_range failed here (" + std::string(std::strerror(errno)) + ")");
      fail("copy_file_range failed on", dst);
    }
    first = false;
  }
  out.close();
}

using CopyFn = void (*)(const std::string&, const std::string&);

CopyFn copy_function(const std::string& v) {
  if (v == "fgetc") return copy_fgetc;
  if (v == "getc_unlocked") return copy_getc_unlocked;
  if (v == "iostream") return copy_iostream;
  if (v == "weft-bytes") return copy_weft_bytes;
  if (v == "weft-blocks") return copy_weft_blocks;
  if (v == "read-write-64k") return copy_read_write;
  if (v == "copy_file_range") return copy_cfr;
  throw std::invalid_argument("unknown io variant '" + v + "'");
}

// A read-only mapping of a whole file.
class Mapping {
 public:
  explicit Mapping(const std::string& path) {
    Fd fd(path, O_RDONLY);
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) fail("cannot stat", path);
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
      data_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (data_ == MAP_FAILED) fail("cannot map", path);
    }
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (data_ != nullptr) munmap(data_, size_);
  }
  std::size_t size() const { return size_; }
  const void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

void verify_copy(const std::string& src, const std::string& dst, const std::string& variant) {
  const Mapping a(src), b(dst);
  if (a.size() != b.size())
    throw std::runtime_error("weft io: " + variant + " copied " + std::to_string(b.size()) + " of " +
                             std::to_string(a.size()) + " bytes into '" + dst + "'");
  if (a.size() > 0 && std::memcmp(a.data(), b.data(), a.size()) != 0)
    throw std::runtime_error("weft io: the " + variant + " copy '" + dst + "' differs from its source");
}

// Runs `copy` on n threads at once (thread i: src[i] -> dst[i]), each
// destination unlinked first; returns the wall seconds from the release to
// the last join (timed_threads: the threads are up before the clock starts).
// Rethrows the first failure after joining.
double timed_copies(CopyFn copy, int n, const std::vector<std::string>& src, const std::vector<std::string>& dst) {
  for (int i = 0; i < n; ++i) ::unlink(dst[static_cast<std::size_t>(i)].c_str());
  return timed_threads(n, [&](int i) {
           const auto k = static_cast<std::size_t>(i);
           copy(src[k], dst[k]);
         }).seconds;
}

struct Job {
  std::string variant;
  int threads = 0;
  std::vector<double> mb_per_s;
  std::string unsupported;
};

}  // namespace

Result run_io(const IoParams& p) {
  Result r;
  r.experiment = "io";
  // Ascending, whatever order they were given in.
  std::vector<int> threads = p.threads.empty() ? default_io_threads() : p.threads;
  std::sort(threads.begin(), threads.end());
  const std::string parent = p.tmpdir.empty() ? default_tmpdir() : p.tmpdir;
  r.params = {{"size_mb", static_cast<double>(p.size_bytes) / 1e6},
              {"size_bytes", p.size_bytes},
              {"threads", threads},
              {"tmpdir", parent},
              {"buffer_bytes", kBuffer},
              {"variants", p.variants}};
  for (const auto& v : p.variants) copy_function(v);  // rejects unknown names before any work

  // glibc's stdio skips its FILE locks until the process first creates a
  // thread; start one so fgetc/fputc pay for the locks as in any threaded
  // program (the copies below run on their own threads anyway).
  std::thread([] {}).join();

  const int max_threads = *std::max_element(threads.begin(), threads.end());
  const TempDir dir(parent);
  std::vector<std::string> src, dst;
  for (int i = 0; i < max_threads; ++i) {
    src.push_back(dir.path() + "/source-" + std::to_string(i));
    dst.push_back(dir.path() + "/copy-" + std::to_string(i));
    make_source(src.back(), p.size_bytes, static_cast<std::uint64_t>(i) + 1);
  }

  std::vector<Job> jobs;
  for (int n : threads)
    for (const auto& v : p.variants) jobs.push_back(Job{v, n, {}, {}});
  const harness::PlanOptions plan{p.reps, true};
  r.params["warmup"] = harness::warmup_text(plan);
  harness::interleave(plan, static_cast<int>(jobs.size()), [&](int k, bool recorded) {
    Job& job = jobs[static_cast<std::size_t>(k)];
    if (!job.unsupported.empty()) return;
    double seconds = 0;
    try {
      seconds = timed_copies(copy_function(job.variant), job.threads, src, dst);
    } catch (const Unsupported& e) {
      job.unsupported = e.what();
      return;
    }
    for (int i = 0; i < job.threads; ++i) {
      verify_copy(src[static_cast<std::size_t>(i)], dst[static_cast<std::size_t>(i)], job.variant);
      ::unlink(dst[static_cast<std::size_t>(i)].c_str());
    }
    if (recorded) job.mb_per_s.push_back(static_cast<double>(p.size_bytes) * job.threads / 1e6 / seconds);
  });

  for (const auto& job : jobs)
    r.rows.push_back(make_row(job.variant, job.threads, "mb_per_s", "MB/s", job.mb_per_s, job.unsupported));

  nlohmann::json ratios = nlohmann::json::array();
  for (int n : threads) {
    const std::string at = n == 1 ? ", 1 copy" : ", " + std::to_string(n) + " concurrent copies";
    const auto over = [&](const char* a, const char* b) {
      return ratio(r, Key(a, "mb_per_s", n), Key(b, "mb_per_s", n));
    };
    add_ratio(ratios, "weft-bytes speed-up over fgetc/fputc" + at, over("weft-bytes", "fgetc"), ">= 15");
    add_ratio(ratios, "weft-bytes speed-up over getc_unlocked" + at, over("weft-bytes", "getc_unlocked"), "");
    add_ratio(ratios, "weft-bytes speed-up over iostream" + at, over("weft-bytes", "iostream"), "");
    add_ratio(ratios, "weft-blocks / copy_file_range" + at, over("weft-blocks", "copy_file_range"), ">= 0.8");
    add_ratio(ratios, "weft-blocks / read-write-64k" + at, over("weft-blocks", "read-write-64k"), "");
  }
  r.extra["ratios"] = ratios;
  r.published = published("003_ders");
  r.notes.push_back("a thread was started and joined before measuring, so glibc's stdio locks are live for "
                    "fgetc/fputc (glibc skips them in a process that never started a thread)");
  r.notes.push_back("mb_per_s = threads x size / wall time of the concurrent copies (MB = 10^6 bytes); files "
                    "are in the page cache (sources just written, copies unlinked before each run and compared "
                    "with their source after it)");
  if (auto note = harness::oversubscribed_note("concurrent copies", max_threads, "they take turns on the CPUs");
      !note.empty())
    r.notes.push_back(std::move(note));
  return r;
}

// The registration: `weft io`, its sizes in the report, its figure.
namespace {

void print_published(const Result& r) {
  print_ratios(r, "Ratios from this run (medians of MB/s):", 62);
  if (!print_article(r, "source", "method_file")) return;
  const auto& pub = r.published;
  fmt::print("  speed-up of ders buf_reader/buf_writer over fgetc/fputc, one figure per compiler:\n");
  for (auto it = pub["file_speedup_over_stdio"].begin(); it != pub["file_speedup_over_stdio"].end(); ++it) {
    std::string figs;
    for (const auto& f : it.value()) figs += (figs.empty() ? "" : ", ") + f.get<std::string>() + "x";
    fmt::print("    {:<12} {}\n", it.key(), figs);
  }
}

// The directory must exist, take a new subdirectory, and hold the files.
void check_tmpdir(const std::string& dir, std::int64_t needed) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) throw BadParam(fmt::format("--tmpdir '{}' does not exist", dir));
  if (!std::filesystem::is_directory(dir, ec)) throw BadParam(fmt::format("--tmpdir '{}' is not a directory", dir));
  std::string probe = dir + "/weft-io-probe-XXXXXX";
  if (mkdtemp(probe.data()) == nullptr)
    throw BadParam(fmt::format("--tmpdir '{}' is not writable: {}", dir, std::strerror(errno)));
  ::rmdir(probe.c_str());
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) != 0)
    throw BadParam(fmt::format("--tmpdir '{}': statvfs failed: {}", dir, std::strerror(errno)));
  const double free_bytes = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
  if (static_cast<double>(needed) > free_bytes)
    throw BadParam(fmt::format("--size-mb: the run needs {:.0f} MB in '{}' (a source and a copy per thread), "
                               "only {:.0f} MB are free",
                               static_cast<double>(needed) / 1e6, dir, free_bytes / 1e6));
}

constexpr std::int64_t kMb = 1'000'000;

// --size-mb: the file size in MB of 10^6 bytes (the parameters keep bytes).
Option<IoParams> size_option() {
  return custom<IoParams>(
      "--size-mb", "Size of each file in MB of 10^6 bytes", "",
      [](IoParams& p, const std::vector<std::string>& v) {
        p.size_bytes = reg::in_range("--size-mb", reg::parse_integer("--size-mb", v), 1, 1'000'000) * kMb;
      },
      [](const IoParams& p) { return std::to_string(p.size_bytes / kMb); });
}

const Register<IoParams> reg{{
    .name = "io", .page = 60, .article = "003_ders", .seconds = {5, 8, 20},
    .title = "File copies: byte by byte and by blocks",
    .summary = "Byte-by-byte and block file copies: stdio, iostream, weft (Derevyago, the ders library)",
    .options = {size_option(),
                custom<IoParams>(
                    "--tmpdir", "Directory for the files", "$TMPDIR or /tmp",
                    [](IoParams& p, const std::vector<std::string>& v) {
                      p.tmpdir = v.front();
                    },
                    [](const IoParams& p) { return p.tmpdir; }),
                counts("--threads,-t", &IoParams::threads, "Concurrent copies", "1 and available_parallelism"),
                reps(&IoParams::reps)},
    .sizes = {[](IoParams& p) {
                p.size_bytes = 16 * kMb;
                p.reps = 2;
              },
              [](IoParams& p) {
                p.size_bytes = 32 * kMb;
                p.reps = 3;
              },
              nullptr},
    .check =
        [](const IoParams& p) {
          const std::vector<int> t = p.threads.empty() ? default_io_threads() : p.threads;
          check_tmpdir(p.tmpdir.empty() ? default_tmpdir() : p.tmpdir,
                       io_space_needed(p.size_bytes, *std::max_element(t.begin(), t.end())));
        },
    .run = run_io,
    .heading = "File copy, byte by byte and by blocks: MB/s (aggregate over concurrent copies)",
    .print = print_published,
    .figures = {"io_mb_per_s"}, .headlines = {"mb_per_s"},
}};

}  // namespace

}  // namespace weft::xp
