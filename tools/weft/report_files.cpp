#include "report_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "cli.hpp"

namespace weft::cli {

namespace fs = std::filesystem;

namespace {
// Written into every report directory: what tells a report's own directory
// apart from someone else's, and which files --force may replace.
constexpr const char* kMarker = ".weft-report";
}  // namespace

void write_file(const fs::path& path, const std::string& text) {
  // A new file beside `path`, renamed over it: O_EXCL never opens an existing
  // name (so never follows a link someone left there), and rename() replaces
  // the name itself, a link included, not what the link points at.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fs::path tmp;
  int fd = -1;
  for (unsigned attempt = 0; fd < 0; ++attempt) {
    tmp = dir / fmt::format(".{}.{}-{}.tmp", path.filename().string(), getpid(), attempt);
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 100))
      throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
  }
  bool ok = true;
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n > 0) done += static_cast<std::size_t>(n);
    else ok = n < 0 && errno == EINTR;
  }
  int err = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("writing {} failed: {}", path.string(), std::strerror(err)));
  }
}

std::vector<std::string> marker_files(const fs::path& dir) {
  std::ifstream in(dir / kMarker);
  std::vector<std::string> files;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line))
    if (!line.empty() && line.find('/') == std::string::npos && line != "." && line != "..") files.push_back(line);
  return files;
}

void write_marker(const fs::path& dir, const std::vector<std::string>& files) {
  std::string text = "weft report output directory; files it wrote:\n";
  for (const auto& f : files) text += f + "\n";
  write_file(dir / kMarker, text);
}

void prepare_out_dir(const fs::path& dir, bool force, bool dry) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw UsageError(fmt::format("--out {} exists and is not a directory", dir.string()));
    const fs::directory_iterator first(dir, ec);
    if (ec) throw UsageError(fmt::format("--out {}: {}", dir.string(), ec.message()));
    const bool empty = first == fs::directory_iterator();
    // A marker that is a link is not ours: reading it would follow the link.
    const bool ours = fs::is_regular_file(fs::symlink_status(dir / kMarker, ec));
    if (!empty && !force) {
      throw UsageError(ours ? fmt::format("{} already holds a weft report; pass --force to replace it, or --out "
                                          "another directory",
                                          dir.string())
                            : fmt::format("{} is not empty and is not a weft report; pass --force to write into "
                                          "it anyway, or --out another directory",
                                          dir.string()));
    }
    if (dry) return;
    // remove() unlinks a name and never follows it: a link the marker lists
    // goes, what it points at stays.
    if (ours)
      for (const auto& f : marker_files(dir)) fs::remove(dir / f, ec);
  }
  if (dry) return;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  write_marker(dir, {});
}

}  // namespace weft::cli
