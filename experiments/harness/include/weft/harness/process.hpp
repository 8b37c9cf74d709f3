// weft/harness/process.hpp — the one way the measuring half starts a child
// process: `weft alloc` (a fresh process per run, LD_PRELOADed allocators),
// `weft idle` (a process per measurement), `weft report` (the plotter and
// `weft topo`) and the CLI tests (the weft binary under test).
//
// The child gets argv exactly (no shell), stdin from /dev/null, the parent's
// environment with `env` entries replacing any inherited variable of the same
// name, and its stdout and stderr captured apart (or on one stream). A child
// that outlives `timeout` is killed with SIGKILL and reported as hung.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace weft::harness {

struct SpawnOptions {
  std::vector<std::string> env{};  // "NAME=value", replacing an inherited NAME
  // LD_PRELOAD for the child, replacing an inherited one; "" runs it with
  // none; unset inherits the parent's.
  std::optional<std::string> preload{};
  bool merge_stderr = false;      // stderr onto stdout, in order (a preloaded library's warnings)
  std::optional<std::chrono::milliseconds> timeout{};  // unset: wait as long as it takes
};

struct ChildResult {
  int status = -1;    // exit status; -1 when it did not exit (a signal)
  int signal = 0;     // the signal that ended it, 0 if none
  bool hung = false;  // killed after SpawnOptions::timeout
  std::string out;    // stdout (with stderr when merged)
  std::string err;    // stderr, unless merged

  bool ok() const noexcept { return status == 0; }
  // "exited with status 3", "killed by signal 9", "killed after 240 s (hung)".
  std::string describe() const;
};

// Runs argv[0] (a path; not searched in PATH) with argv. Throws
// std::system_error naming the path when the child cannot be started at all
// (no such file, not executable, no pipes); everything after the start is
// reported in the result.
ChildResult spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// The last non-empty line of `text` (a failed child's stderr says why there).
std::string last_line(const std::string& text);

}  // namespace weft::harness
