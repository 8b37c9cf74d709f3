/// @file
/// weft/exec/cancelled.hpp — what waiting on cancelled work throws.
///
/// Work that was cancelled before it started never runs. Whoever waits for
/// it learns so from this exception: Future<T>::get() of a cancelled task,
/// TaskGroup::wait() of a group that skipped tasks, and a parallel
/// algorithm whose std::stop_token stopped it before its answer was whole
/// (docs/guide/cancellation.md says which, and what each leaves behind). Work already running
/// when the cancellation came runs to its end; its own exception, if it
/// throws one, is what the wait rethrows instead.
#pragma once

#include <exception>

namespace weft {

/// Thrown by get() on the future of a task cancelled before it ran.
class cancelled : public std::exception {
 public:
  /// "weft: the work was cancelled before it ran".
  const char* what() const noexcept override { return "weft: the work was cancelled before it ran"; }
};

}  // namespace weft
