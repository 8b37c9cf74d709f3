// weft/detail/exec/remote_wait.hpp — a Future wait that leaves the task to
// the pool: for the algorithms' hand-off from an outside caller
// (on_workers.hpp), and for weft's measurements and tests.
//
// Future::wait()/get() run a still-queued task in place on the waiting
// thread (future.hpp). wait_remote/get_remote never do that from outside
// the pool: a worker must take the task, so the wait is the cross-thread
// round trip a measurement of it needs. On a worker thread they run the
// task in place after all, since refusing could wait for itself.
#pragma once

#include "weft/exec/future.hpp"

namespace weft::detail {

struct FutureAccess {
  template <class T>
  static void wait(const Future<T>& f) {
    f.wait_impl(false);
  }
  template <class T>
  static T get(Future<T>& f) {
    return f.get_impl(false);
  }
};

// As f.wait(), but a queued task is left to a worker.
template <class T>
void wait_remote(const Future<T>& f) {
  FutureAccess::wait(f);
}

// As f.get(), but a queued task is left to a worker.
template <class T>
T get_remote(Future<T>& f) {
  return FutureAccess::get(f);
}

}  // namespace weft::detail
