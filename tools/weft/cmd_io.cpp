// weft io — locked stdio as hidden synchronisation (Derevyago, the ders library): byte-by-byte
// and block file copies, N files copied concurrently.
#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli.hpp"
#include "weft/xp/io.hpp"

namespace weft::cli {
namespace {

void print_published(const xp::Result& r) {
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

struct IoOptions {
  long long size_mb = 100;
  std::string tmpdir;
};

// The directory must exist, take a new subdirectory, and hold the files.
void check_tmpdir(const std::string& dir, std::int64_t needed) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec))
    throw UsageError(fmt::format("--tmpdir '{}' does not exist", dir));
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError(fmt::format("--tmpdir '{}' is not a directory", dir));
  std::string probe = dir + "/weft-io-probe-XXXXXX";
  if (mkdtemp(probe.data()) == nullptr)
    throw UsageError(fmt::format("--tmpdir '{}' is not writable: {}", dir, std::strerror(errno)));
  ::rmdir(probe.c_str());
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) != 0)
    throw UsageError(fmt::format("--tmpdir '{}': statvfs failed: {}", dir, std::strerror(errno)));
  const double free_bytes = static_cast<double>(vfs.f_bavail) * static_cast<double>(vfs.f_frsize);
  if (static_cast<double>(needed) > free_bytes)
    throw UsageError(fmt::format("--size-mb: the run needs {:.0f} MB in '{}' (a source and a copy per thread), "
                                 "only {:.0f} MB are free",
                                 static_cast<double>(needed) / 1e6, dir, free_bytes / 1e6));
}

void to_params(const IoOptions& o, xp::IoParams& p) {
  p.size_bytes = std::int64_t{positive("--size-mb", o.size_mb, 1'000'000)} * 1'000'000;
  std::sort(p.threads.begin(), p.threads.end());
  p.tmpdir = o.tmpdir.empty() ? xp::default_tmpdir() : o.tmpdir;
  const std::vector<int> t = p.threads.empty() ? xp::default_io_threads() : p.threads;
  check_tmpdir(p.tmpdir, xp::io_space_needed(p.size_bytes, t.back()));
}

constexpr const char* kTitle = "File copy, byte by byte and by blocks: MB/s (aggregate over concurrent copies)";

void add_options(CLI::App& sub, IoOptions& o) {
  sub.add_option("--size-mb", o.size_mb, "Size of each file in MB of 10^6 bytes (default 100)");
  sub.add_option("--tmpdir", o.tmpdir, "Directory for the files (default $TMPDIR or /tmp)");
}

const Register reg{make_experiment<IoOptions, xp::IoParams>(
    {"io", with_threads(3, "Concurrent copies, comma list (default 1 and available_parallelism)"), add_options, to_params, xp::run_io, fixed<xp::IoParams>(kTitle), print_published})};

}  // namespace
}  // namespace weft::cli
