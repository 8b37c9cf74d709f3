// weft/harness/run.hpp — what every timed experiment needs around its
// kernel: threads that start together, a flag that stops a crawling run,
// the interleaved plan with its warm-up, and one CPU count for the notes.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "weft/detail/cache_line.hpp"
#include "weft/sync/event.hpp"

namespace weft::harness {

// CPU time of the whole process (threads that have ended included) and of
// the calling thread, and the monotonic clock, in ns.
std::int64_t process_cpu_ns() noexcept;
std::int64_t thread_cpu_ns() noexcept;
std::int64_t wall_ns() noexcept;

// N threads call arrive_and_wait(); the coordinator waits for all of them to
// be up (pinned, allocated) and then opens the gate, so that the timed
// region starts with every thread ready rather than with thread creation.
class StartGate {
 public:
  explicit StartGate(int threads) : expected_(threads) {}
  void arrive_and_wait() noexcept {
    ready_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a count; `go_` orders the start
    go_.wait();
  }
  // Returns once every thread has arrived, with the gate open.
  void open_when_ready() noexcept {
    wait_ready();
    open();
  }
  // The two halves, for a coordinator that starts its clock in between.
  void wait_ready() noexcept;
  void open() noexcept { go_.set(); }

 private:
  int expected_;
  std::atomic<int> ready_{0};
  Event go_;
};

// Raised by the coordinator when a run exceeds its time limit; the threads
// poll it (spinning ones every few thousand polls) and quit early.
struct StopFlag {
  alignas(detail::kCacheLine) std::atomic<bool> flag{false};
  // relaxed: a hint to quit early; the coordinator joins the threads.
  bool requested() const noexcept { return flag.load(std::memory_order_relaxed); }
  void request() noexcept { flag.store(true, std::memory_order_relaxed); }  // relaxed: as requested()
};

// Repetitions and warm-up of an interleaved plan.
struct PlanOptions {
  int reps = 1;
  // Each variant runs once unrecorded before the recorded repetitions: the
  // first run of a process pays for page faults, lazy binding, a cold cache
  // and a CPU that has not ramped its clock (a 2-thread ring reads 224-323
  // ns/hop cold, 35-60 warm).
  bool warmup = true;
};

// The "warmup" entry of an experiment's params: what the plan did before it
// recorded anything.
inline const char* warmup_text(const PlanOptions& o) {
  return o.warmup ? "one unrecorded run per variant" : "none";
}

// Runs every variant once per repetition, round-robin (A B C, B C A, C A B,
// ...): the host moves these vCPUs every few seconds, and a block of one
// variant would measure the move, not the variant. Each round starts one
// variant later, so that no variant always follows the same one: a run can
// leave the machine slower for the next beyond what settle() sees: after
// OpenMP's scan (libgomp faults in and frees an n-element buffer per call,
// 98 thousand page faults for 5e7 int64) the variant that came next ran its
// own scan 1.1-1.9x slower on the AMD host, whichever it was (oneTBB,
// std::execution::par or weft), with the CPUs idle in between; in a fixed
// order that was always weft. run_one(v, recorded): with the warm-up on, a first
// round in order with recorded == false, whose figures are dropped.
template <class F>
void interleave(const PlanOptions& o, int variants, F&& run_one) {
  if (o.warmup)
    for (int v = 0; v < variants; ++v) run_one(v, false);
  for (int rep = 0; rep < o.reps; ++rep)
    for (int i = 0; i < variants; ++i) run_one((rep + i) % variants, true);
}

// A library a variant compares against, and whether this build has it.
struct Peer {
  std::string_view package;  // the Debian package that provides it; empty: built in
  bool built = true;
  // "not built: libtbb-dev missing", or empty when it is built.
  std::string why_not() const {
    return built ? std::string() : "not built: " + std::string(package) + " missing";
  }
};

// One row of a variant table: a name the CLI accepts, the peer it needs,
// whether it runs a pool (then once per thread count) or alone (threads 0),
// and how to run it (null when its peer is not built).
template <class Run>
struct Variant {
  std::string_view name;
  Peer peer;
  bool pooled = true;
  Run run = nullptr;
};

// One cell of the interleaved plan: a variant at a thread count (0: no
// pool), its samples, and why it does not run when it cannot.
struct Unit {
  std::string variant;
  int threads = 0;
  std::string why_not;
  std::vector<double> samples;
  bool runs() const noexcept { return why_not.empty(); }
};

// The names of a variant table, in its order (what --variant accepts).
template <class Table>
std::vector<std::string> variant_names(const Table& table) {
  std::vector<std::string> names;
  for (const auto& v : table) names.emplace_back(v.name);
  return names;
}

// variant_names(Table), made once: what an experiment's X_variants() (the
// --variant option's names) returns.
template <const auto& Table>
const std::vector<std::string>& names_of() {
  static const std::vector<std::string> names = variant_names(Table);
  return names;
}

// The table's row named `name`; throws std::invalid_argument naming it.
template <class Table>
const auto& variant(const Table& table, std::string_view name) {
  for (const auto& v : table)
    if (v.name == name) return v;
  throw std::invalid_argument("unknown variant '" + std::string(name) + "'");
}

// The cells for the `chosen` variants, in the order given, at each of
// `threads`; a peer that is not built gives cells that say so.
template <class Table>
std::vector<Unit> plan_units(const Table& table, const std::vector<std::string>& chosen,
                             const std::vector<int>& threads) {
  std::vector<Unit> units;
  for (const std::string& name : chosen) {
    const auto& v = variant(table, name);
    if (!v.pooled) {
      units.push_back(Unit{name, 0, v.peer.why_not(), {}});
      continue;
    }
    for (int t : threads) units.push_back(Unit{name, t, v.peer.why_not(), {}});
  }
  return units;
}

// Between two timed runs: the previous variant's threads (oneTBB's workers
// spin for a while after their arena empties) must not eat into the next.
void settle();

// Runs the cells that can run, interleaved with the warm-up of `o`;
// measure(unit, i) returns one sample of units[i] (i indexes whatever the
// experiment planned beside the units), kept when the round is recorded.
template <class Measure>
void run_units(std::vector<Unit>& units, const PlanOptions& o, Measure&& measure) {
  interleave(o, static_cast<int>(units.size()), [&](int i, bool recorded) {
    const auto index = static_cast<std::size_t>(i);
    Unit& u = units[index];
    if (!u.runs()) return;
    const double sample = measure(static_cast<const Unit&>(u), index);
    if (recorded) u.samples.push_back(sample);
    settle();
  });
}

// The threads worth running at once here (the allowed CPUs, capped by a
// cgroup quota: available_parallelism()), the one count every note about
// "more threads than CPUs" compares with.
int usable_cpus();

// The worker counts a `--workers` list asks for: the list, or when it was
// left empty one count, usable_cpus().
std::vector<int> counts_or_usable(const std::vector<int>& given);

// "more threads (3) than available CPUs (2): <consequence>", or empty when
// `threads` fits.
std::string oversubscribed_note(const char* what, int threads, const std::string& consequence);

}  // namespace weft::harness
