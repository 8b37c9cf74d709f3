// weft trace — records an experiment with every pool tracing (WEFT_TRACE in
// a child process, weft/exec/trace.hpp) into Chrome trace JSON; and the
// per-worker utilisation strip `weft report` draws from such a trace.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weft/xp/registry.hpp"

namespace weft::cli {

// The arguments to trace `experiment` with: the registry's for `level`
// (less the options `given` sets), then `given`.
std::vector<std::string> trace_args(const std::string& experiment, xp::Level level, const std::vector<std::string>& given);

// Runs `weft <experiment> <args>` with tracing on, writing the trace to
// `out`; returns the trace. Throws UsageError for an unknown experiment, an
// out path that cannot be written, or arguments the experiment refuses;
// std::runtime_error when the run fails or leaves no readable trace.
// With `echo`, the experiment's own output is passed through.
nlohmann::json record_trace(const std::string& experiment, const std::vector<std::string>& args,
                            const std::string& out, bool echo);

// The pool in `trace` that ran the most tasks (the later of a tie), as rows of busy stretches per
// worker (tasks nested in tasks merged; gaps under 1/1000 of the window
// closed), over the stretch every worker's ring still covers:
// {pool, workers, window_us, rows: [{worker, busy: [[start_us, length_us]...],
// utilisation, steals, parks}]}. Null when no pool ran a task.
nlohmann::json utilisation_strip(const nlohmann::json& trace);

}  // namespace weft::cli
