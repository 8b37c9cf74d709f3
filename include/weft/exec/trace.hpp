/// @file
/// weft/exec/trace.hpp — what each worker did and when, as a timeline that
/// Perfetto (ui.perfetto.dev) and chrome://tracing open.
///
///   weft::PoolOptions o;
///   o.trace_capacity = 1 << 14;                  // events kept per worker
///   weft::ThreadPool pool(o);
///   ...
///   std::ofstream out("trace.json");
///   weft::write_chrome_trace(out, {pool.trace()});
///
/// or, for any program and every pool in it, without touching the code:
///
///   WEFT_TRACE=trace.json ./program
///
/// Off unless asked for at run time: a pool built without trace_capacity
/// (and without WEFT_TRACE) records nothing, and each place that would
/// record costs one branch on a pointer that is fixed for the pool's life.
///
/// What is recorded, per worker, with steady_clock timestamps: each task's
/// start and end (a task that waits runs others inside it, so the pairs
/// nest), each steal (from which worker and ring, or from a submitter's
/// deque), each park and wake-up, and each wake-up it sent. Each worker
/// writes only its own ring of trace_capacity events (rounded up to a power
/// of two); when the ring is full the oldest events are overwritten, so a
/// trace shows the last stretch of a long run, and WorkerTrace::dropped says
/// how much came before it.
///
/// ThreadPool::trace() may be called from any thread at any time, also while
/// the workers run: it copies each ring and leaves out any event overwritten
/// while it copied (detail/exec/trace_ring.hpp). Events a worker records after
/// the copy began may or may not be in it.
///
/// WEFT_TRACE=path: every pool the process builds records (trace_capacity or
/// kDefaultTraceCapacity), and the traces of all of them — the ones
/// destroyed and the ones still alive — are written to `path` when the
/// process exits normally (through a temporary file renamed into place; a
/// failure goes to weft's error handler, weft/error.hpp, with the path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "weft/exec/pool_stats.hpp"

namespace weft {

/// What a trace event records.
enum class TraceKind : std::uint8_t {
  task_start,  ///< a task began to run on this worker
  task_end,    ///< the innermost running task finished
  steal,       ///< took a task from `peer` (a worker index; -1: an outside thread, from its deque or handed by its post()) in `ring`;
               ///< a batch from a submitter's deque is one event per task, at one time
  park,        ///< went to sleep
  wake,        ///< woke from a park
  wake_sent,   ///< woke a parked worker
};

/// One event of a worker's trace.
struct TraceEvent {
  std::int64_t ns = 0;  ///< steady_clock::now(), in nanoseconds since its epoch
  TraceKind kind = TraceKind::task_start;  ///< what happened
  /// steal: the victim worker, -1 an outside thread's deque; task_start:
  /// the task's label (trace_label() gives its text; a TaskGraph node's
  /// name), -1 none
  std::int32_t peer = -1;
  StealRing ring = StealRing::smt;  ///< steal from a worker: how far it was
};

/// One worker's last events.
struct WorkerTrace {
  int index = -1;                  ///< the worker
  std::uint64_t dropped = 0;       ///< events overwritten before the first one here
  std::vector<TraceEvent> events;  ///< oldest first
};

/// Every worker's trace (ThreadPool::trace()).
struct PoolTrace {
  std::uint64_t pool = 0;     ///< the pool's number in this process (1, 2, ...): the trace's pid
  std::size_t capacity = 0;   ///< events kept per worker; 0: the pool does not trace
  std::vector<WorkerTrace> workers;  ///< by worker index; empty when capacity is 0
};

/// Events per worker when WEFT_TRACE turns tracing on and the pool's options
/// name no capacity: 512 KiB per worker, the last ~16k tasks of each.
inline constexpr std::size_t kDefaultTraceCapacity = std::size_t{1} << 15;
/// The most PoolOptions::trace_capacity may ask for (1 GiB per worker); more
/// is std::invalid_argument.
inline constexpr std::size_t kMaxTraceCapacity = std::size_t{1} << 26;

/// The text of a task_start event's label (TraceEvent::peer); empty for -1
/// or an unknown label.
std::string trace_label(std::int32_t label);

/// Writes Chrome trace-event JSON: each pool a process ("weft pool N"), each
/// worker a thread ("worker I"), each task run a complete ("X") event named
/// by its label ("task" without one),
/// steals, parks and wake-ups instant ("i") events; times in microseconds
/// since the earliest event written. A task whose start was overwritten, or
/// that was still running when the trace was taken, is left out.
void write_chrome_trace(std::ostream& out, const std::vector<PoolTrace>& pools);
/// The same into a file; throws std::system_error naming `path` when it
/// cannot be written.
void write_chrome_trace(const std::string& path, const std::vector<PoolTrace>& pools);

}  // namespace weft
