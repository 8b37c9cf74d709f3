// Writing a report's directory: what `weft report --out DIR` may create,
// replace and remove there.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace weft::cli {

// Writes `text` to `path` through a new file renamed over it: a link that
// stands at `path` is replaced, never written through. Throws on failure.
void write_file(const std::filesystem::path& path, const std::string& text);

// The files an earlier report recorded in DIR's marker file.
std::vector<std::string> marker_files(const std::filesystem::path& dir);
// Records `files` as the ones this report wrote into DIR.
void write_marker(const std::filesystem::path& dir, const std::vector<std::string>& files);

// Refuses a non-empty directory unless `force` (checked before the long
// run, not after it); with `force`, removes the files an earlier report
// wrote there (the names its marker lists, links unlinked, not followed), so
// no stale figure outlives its data and nothing else is removed.
// With `dry` (WEFT_VALIDATE_ONLY) it only checks: nothing is removed or created.
void prepare_out_dir(const std::filesystem::path& dir, bool force, bool dry);

}  // namespace weft::cli
