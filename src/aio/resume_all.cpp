// detail::aio::resume_all (weft/detail/aio/waiter.hpp): due timers, finished
// file operations and woken channel and semaphore waiters back to their pools.
#include "weft/detail/aio/waiter.hpp"

#include <utility>

#include "weft/detail/exec/task.hpp"

namespace weft::detail::aio {
namespace {

struct ResumeBatch : TaskNode {
  Waiter* first;
  explicit ResumeBatch(Waiter* w) noexcept : TaskNode{&execute_impl, &discard_impl}, first(w) {}
  // On a worker of the pool: each coroutine onto this worker's deque.
  static void execute_impl(TaskNode* t) noexcept {
    auto* self = static_cast<ResumeBatch*>(t);
    Waiter* w = self->first;
    delete_task(self);
    while (w != nullptr) std::exchange(w, w->next)->resume();
  }
  // The pool refused (shut down): each resumes here, as a single one would.
  static void discard_impl(TaskNode* t) noexcept {
    auto* self = static_cast<ResumeBatch*>(t);
    Waiter* w = self->first;
    delete_task(self);
    while (w != nullptr) Waiter::execute_impl(std::exchange(w, w->next));
  }
};

}  // namespace

void resume_all(Waiter* chain, bool may_hand_off) noexcept {
  while (chain != nullptr) {
    PoolCore* pool = chain->home;
    Waiter* mine = nullptr;  // the chain's waiters of `pool`, in order
    Waiter** tail = &mine;
    Waiter* rest = nullptr;  // the others, in order
    Waiter** rest_tail = &rest;
    for (Waiter* w = chain; w != nullptr;) {
      Waiter* next = w->next;
      if (w->home == pool) {
        *tail = w;
        tail = &w->next;
      } else {
        *rest_tail = w;
        rest_tail = &w->next;
      }
      w = next;
    }
    *tail = nullptr;
    *rest_tail = nullptr;
    chain = rest;
    if (mine->next == nullptr || on_worker_of(*pool)) {  // one, or already home: no batch needed
      while (mine != nullptr) std::exchange(mine, mine->next)->resume(may_hand_off);
      continue;
    }
    ResumeBatch* batch = nullptr;
    try {
      batch = new_task<ResumeBatch>(mine);
    } catch (...) {  // no memory for a batch: one push each
      while (mine != nullptr) std::exchange(mine, mine->next)->resume();
      continue;
    }
    push_continuation(*pool, batch);
  }
}

}  // namespace weft::detail::aio
