#include "report_files.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "cli.hpp"

namespace weft::cli {

namespace fs = std::filesystem;

namespace {
// Written into every report directory: what tells a report's own directory
// apart from someone else's, and which files --force may replace.
constexpr const char* kMarker = ".weft-report";
}  // namespace

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  f << text;
  if (!f.flush()) throw std::runtime_error(fmt::format("writing {} failed", path.string()));
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
    const bool ours = fs::exists(dir / kMarker);
    if (!empty && !force) {
      throw UsageError(ours ? fmt::format("{} already holds a weft report; pass --force to replace it, or --out "
                                          "another directory",
                                          dir.string())
                            : fmt::format("{} is not empty and is not a weft report; pass --force to write into "
                                          "it anyway, or --out another directory",
                                          dir.string()));
    }
    if (dry) return;
    if (ours)
      for (const auto& f : marker_files(dir)) fs::remove(dir / f, ec);
  }
  if (dry) return;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  write_marker(dir, {});
}

}  // namespace weft::cli
