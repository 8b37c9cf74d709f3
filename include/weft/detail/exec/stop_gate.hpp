// The one stop check every parallel algorithm makes: before a chunk of work
// starts, ask the gate; once a stop is requested on its token the gate says
// no, and remembers that something was skipped. After its join the
// algorithm asks the gate whether its answer is whole (docs/guide/
// cancellation.md says what each algorithm then returns or throws).
//
// Cost without a stop: a gate over a token with no stop_source (the
// default) reads one null pointer per chunk; a chunk is at least a step of
// a loop or a leaf of a reduction, so that is never measurable.
//
// Memory ordering: the skipped flag is relaxed. It is set before the
// setter's chunk ends, and read only after the algorithm's join (a
// TaskGroup wait), which orders every chunk before it.
#pragma once

#include <atomic>
#include <stop_token>
#include <utility>

#include "weft/exec/cancelled.hpp"

namespace weft::detail {

class StopGate {
 public:
  explicit StopGate(std::stop_token stop = {}) noexcept : stop_(std::move(stop)) {}
  StopGate(const StopGate&) = delete;
  StopGate& operator=(const StopGate&) = delete;

  // True if a new chunk may start; false once a stop was requested, and the
  // chunk then counts as skipped.
  [[nodiscard]] bool enter() noexcept {
    if (!stop_.stop_requested()) return true;
    // relaxed: see the header. A load first, so a burst of skips on several
    // threads writes the line once.
    if (!skipped_.load(std::memory_order_relaxed)) skipped_.store(true, std::memory_order_relaxed);
    return false;
  }

  // Whether a chunk was skipped; meaningful after the join.
  [[nodiscard]] bool skipped() const noexcept {
    return skipped_.load(std::memory_order_relaxed);  // relaxed: read after the join, see the header
  }

  // After the join: throws weft::cancelled if a chunk was skipped, since
  // the result would then be a silent wrong answer.
  void throw_if_skipped() const {
    if (skipped()) throw cancelled{};
  }

 private:
  std::stop_token stop_;
  std::atomic<bool> skipped_{false};
};

}  // namespace weft::detail
