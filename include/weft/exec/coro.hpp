/// @file
/// weft/exec/coro.hpp — C++20 coroutine tasks on the pool.
///
///   weft::Task<int> leaf(int x) { co_return x * 2; }
///   weft::Task<int> work(weft::ThreadPool& pool) {
///     co_await pool.schedule();                          // now on a worker
///     int a = co_await leaf(1);                          // a child, in place
///     int b = co_await pool.submit([] { return 3; });    // a Future, no thread blocked
///     auto [c, d] = co_await weft::when_all(leaf(2), leaf(3));  // in parallel
///     co_return a + b + c + d;
///   }
///   int v = weft::sync_wait(work(pool));           // from any thread
///   weft::Future<int> f = pool.spawn(work(pool));  // or started on the pool
///
/// A Task<T> is lazy and move-only: nothing runs until it is awaited,
/// spawned or sync_wait()ed, and destroying one that never started destroys
/// its frame without running it. It is started at most once.
///
/// Inside a task:
/// * co_await pool.schedule() suspends and queues the coroutine's resumption
///   on `pool` (a worker's own deque from one of its workers); it throws
///   std::runtime_error from outside a pool that is shut down, as post() does.
/// * co_await future (a `weft::Future<U>`) suspends without blocking a thread:
///   the future's completion queues the resumption on the task's pool (see
///   when_all below; the future's pool for a task that names none), and
///   a future already done resumes at once. The result is get(): the value,
///   the task's exception, or weft::cancelled. A future whose pool was shut
///   down before the resumption could be queued resumes it on the thread
///   that completed it.
/// * co_await task runs the child on this thread at once and resumes the
///   awaiter when it finishes, both by symmetric transfer (through a
///   per-thread loop, detail/exec/promise.hpp, not the compiler's tail
///   call): a chain of 10^6 nested awaits, or a loop of 10^6 awaits of
///   children that finish at once, runs in constant stack in every build.
///   Its exception is rethrown in the awaiter.
/// * co_await weft::when_all(tasks...) (or a vector of tasks) starts every
///   child but the first on the task's pool — the pool spawn() or
///   sync_wait(pool, task) started it on or schedule() last moved it to,
///   inherited by every child; with none named (a root run by
///   sync_wait(task)), ThreadPool::current(), else the default pool —
///   runs the first in place, and resumes the awaiter on the
///   thread of the last to finish, with the values in order (std::monostate
///   for Task<void>; a vector, or nothing for void, from the vector form).
///   Every child runs to its end; the first failure by position is rethrown.
///   Children that the starting worker runs one after another, taking each
///   back off its own deque, are counted without an atomic RMW (the owner's
///   chain: docs/design/coroutines.md).
/// * co_await weft::current_stop_token() returns the token the task was
///   given by set_stop_token(), else its awaiter's (children inherit it).
///   Nothing stops a task by force: it reads the token and returns.
///
/// pool.spawn(task) queues the task's start on the pool and returns the
/// future of its result; cancel() on that future before the task starts
/// destroys its frame unrun. sync_wait(pool, task) runs the whole tree on
/// `pool`: from a thread outside every pool it takes the pool's seat when a
/// worker is parked (weft/detail/exec/seat.hpp) and starts the task there,
/// as one of the pool's P threads, helping until it finds nothing to run;
/// otherwise it is spawn() and get(). sync_wait(task) starts the task on the
/// calling thread and waits for its result: on a worker it runs other queued tasks
/// meanwhile, so it cannot deadlock on a pool of one worker; elsewhere it
/// spins, then sleeps (Future::get()).
///
/// Frames come from weft's per-thread PoolResource; the state machines are
/// in docs/design/coroutines.md.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/exec/promise.hpp"
#include "weft/detail/exec/seat.hpp"
#include "weft/exec/future.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

template <class T = void>
/// A lazily started coroutine returning T: co_await it, when_all() it, or
/// spawn()/sync_wait() it on a pool; this file's opening comment has the contract.
class [[nodiscard]] Task {
 public:
  /// The coroutine's promise (what makes a function returning Task a coroutine).
  using promise_type = detail::TaskPromise<T>;

  /// An invalid task (valid() is false), to be assigned.
  Task() = default;
  ///@{
  /// Moves the coroutine's ownership; `o` becomes invalid.
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ///@}
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  /// False for a moved-from or default-constructed task.
  [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(h_); }

  /// The token the task reads with co_await current_stop_token(). Set it
  /// before the task starts.
  /// Throws std::invalid_argument on a task that is not valid().
  void set_stop_token(std::stop_token stop) {
    if (!h_) throw std::invalid_argument("weft::Task::set_stop_token: the task is not valid");
    h_.promise().stop_ = std::move(stop);
  }

  /// What co_await on a Task suspends on: starts the child and resumes the
  /// awaiting coroutine with its result.
  struct Awaiter {
    std::coroutine_handle<promise_type> child;  ///< the awaited coroutine
    ///@{
    /// The awaiter protocol: throws std::invalid_argument for an invalid
    /// task, never ready at once, starts the child by symmetric transfer,
    /// then yields the child's result (or rethrows its exception).
    bool await_ready() const {
      if (!child) throw std::invalid_argument("weft::Task: co_await on a task that is not valid");
      return false;
    }
    template <class P>
    void await_suspend(std::coroutine_handle<P> parent) noexcept {
      child.promise().continuation_ = parent;
      child.promise().inherit(parent.promise());
      detail::transfer(child);
    }
    T await_resume() { return child.promise().result_.take(); }
    ///@}
  };
  ///@{
  /// The child is started by the co_await and destroyed with this Task.
  Awaiter operator co_await() & noexcept { return Awaiter{h_}; }
  Awaiter operator co_await() && noexcept { return Awaiter{h_}; }
  ///@}

 private:
  friend struct detail::TaskAccess;
  friend promise_type;
  explicit Task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
  void reset() noexcept {
    if (h_) std::exchange(h_, {}).destroy();
  }
  std::coroutine_handle<promise_type> h_;
};

/// @cond internal
namespace detail {

template <class T>
weft::Task<T> TaskPromise<T>::get_return_object() noexcept {
  return weft::Task<T>(std::coroutine_handle<TaskPromise<T>>::from_promise(*this));
}
inline weft::Task<void> TaskPromise<void>::get_return_object() noexcept {
  return weft::Task<void>(std::coroutine_handle<TaskPromise<void>>::from_promise(*this));
}

// co_await pool.schedule(): the awaiter is the queued task, in the
// suspended frame, so a hop allocates nothing.
struct ScheduleAwaiter : TaskNode {
  ThreadPool* pool;
  std::coroutine_handle<> h;

  explicit ScheduleAwaiter(ThreadPool* p) noexcept : TaskNode{&execute_impl, &discard_impl}, pool(p) {}
  bool await_ready() const noexcept { return false; }
  // Nothing may touch the awaiter after the push: a worker may already
  // have resumed the coroutine and destroyed the frame. A weft task
  // belongs to `pool` from here on (its when_all children go there).
  template <class P>
  void await_suspend(std::coroutine_handle<P> coro) {
    if constexpr (std::is_base_of_v<PromiseBase, P>) coro.promise().pool_ = &core_of(*pool);
    h = coro;
    pool->push(this);
  }
  void await_resume() const noexcept {}
  static void execute_impl(TaskNode* t) noexcept { resume_here(static_cast<ScheduleAwaiter*>(t)->h); }
  // A refused push throws from await_suspend, which resumes the coroutine
  // with the exception: nothing to undo here.
  static void discard_impl(TaskNode*) noexcept {}
};

// co_await future: the awaiter is both the continuation the future fires
// and the task that fire queues.
template <class U>
struct FutureAwaiter : Continuation, TaskNode {
  Future<U>& f;
  std::coroutine_handle<> h;
  PoolCore* home = nullptr;  // the awaiting task's pool, if it names one

  explicit FutureAwaiter(Future<U>& fut) noexcept
      : Continuation{&fire_impl}, TaskNode{&execute_impl, &discard_impl}, f(fut) {}
  bool await_ready() const { return f.ready(); }
  // attach() false: the future finished meanwhile; resume at once.
  template <class P>
  bool await_suspend(std::coroutine_handle<P> coro) noexcept {
    if constexpr (std::is_base_of_v<PromiseBase, P>) home = coro.promise().pool_;
    h = coro;
    return FutureLink::state(f)->attach(this);
  }
  U await_resume() { return f.get(); }

  // Back to the task's own pool when it has one, else the future's.
  static void fire_impl(Continuation* c) noexcept {
    auto* self = static_cast<FutureAwaiter*>(c);
    push_continuation(self->home != nullptr ? *self->home : *FutureLink::state(self->f)->pool, self);
  }
  static void execute_impl(TaskNode* t) noexcept { resume_here(static_cast<FutureAwaiter*>(t)->h); }
  static void discard_impl(TaskNode* t) noexcept { resume_here(static_cast<FutureAwaiter*>(t)->h); }
};

struct StopTokenAwaiter {
  std::stop_token stop;
  bool await_ready() const noexcept { return false; }
  // Reads the awaiting promise, then goes on without suspending.
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    stop = h.promise().stop_;
    return false;
  }
  std::stop_token await_resume() noexcept { return std::move(stop); }
};

// ---- when_all over tasks ----------------------------------------------------

// One child of a join: the queued task that starts it, and the completion
// its final suspend point calls.
struct JoinChild : TaskNode, Completion {
  std::coroutine_handle<> h;
  Join* join = nullptr;

  JoinChild() noexcept : TaskNode{&execute_impl, &discard_impl}, Completion{&done_impl} {}
  static void execute_impl(TaskNode* t) noexcept { resume_here(static_cast<JoinChild*>(t)->h); }
  // The pool refused it (shut down): start it here instead.
  static void discard_impl(TaskNode* t) noexcept { resume_here(static_cast<JoinChild*>(t)->h); }
  static std::coroutine_handle<> done_impl(Completion* c) noexcept {
    Join* j = static_cast<JoinChild*>(c)->join;
    Trampoline& t = trampoline;
    if (t.chain == j) {
      // The owner's chain (promise.hpp, Join): this thread's own count.
      if (++j->local == j->n) {
        t.chain = j->below;
        return j->parent;  // every child ran here, in the chain
      }
      // The next child, if it is still the newest task here: a task in the
      // children's array can only be one of them.
      if (TaskNode* next = take_own_newest_in(j->first_kid, j->n * sizeof(JoinChild)))
        return static_cast<JoinChild*>(next)->h;
      t.chain = j->below;  // the chain ends here: publish, and give back the reservation
      const std::size_t k = j->local + 1;
      // acq_rel: release publishes the k - 1 children's results this thread
      // finished; the last arrival's acquire sees every child's.
      if (j->remaining.fetch_sub(k, std::memory_order_acq_rel) == k) return j->parent;
      return {};
    }
    // acq_rel: release publishes this child's result; the last arrival's
    // acquire sees every child's before it resumes the parent.
    if (j->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) return j->parent;
    return {};
  }
};

template <class T>
void bind_child(JoinChild& c, Join& j, weft::Task<T>& t, const PromiseBase& parent) {
  auto h = TaskAccess::handle(t);
  h.promise().completion_ = &c;
  h.promise().inherit(parent);
  c.h = h;
  c.join = &j;
}

// Queues children 1..n-1 and runs child 0 in place. The counter cannot
// reach zero before child 0 runs, so the parent (already suspended) is
// resumed exactly once, by the last child.
inline void start_join(Join& j, JoinChild* kids, std::size_t n, std::coroutine_handle<> parent,
                       PoolCore* parent_pool) {
  // First, before the trampoline's chain holds the join: it may throw (the
  // default pool, built on first use, could not start its threads), and the
  // exception then leaves await_suspend() with nothing to undo.
  PoolCore& pool = parent_pool != nullptr ? *parent_pool : current_or_default_pool();
  j.parent = parent;
  // On the owner's chain only inside a resume_here() loop, which sees the
  // chain break (a raw resume from elsewhere has none): then child 0 runs
  // next in that loop, and the reservation is the chain's.
  Trampoline& t = trampoline;
  const bool chained = t.armed;
  // relaxed: the pushes below publish it to the children's threads.
  j.remaining.store(n + (chained ? 1 : 0), std::memory_order_relaxed);
  j.n = n;
  j.local = 0;
  j.first_kid = &kids[0];
  if (chained) {
    j.below = t.chain;
    t.chain = &j;
  }
  // More than one, on a worker of the pool (the recursive case): all at
  // once, one fence and one wake rule for the n - 1, not a push() each, as
  // parallel_invoke_n's fork does. One goes through push(), which costs
  // less than the batch's set-up for a single task (fib: 19 instructions
  // more per fork through push_own_n()).
  if (n <= 2 || !push_own_n(pool, &kids[1], sizeof(JoinChild), n - 1))
    for (std::size_t i = 1; i < n; ++i) push_continuation(pool, &kids[i]);
  transfer(kids[0].h);
}

template <class T>
using JoinValue = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class T>
JoinValue<T> take_joined(weft::Task<T>& t) {
  if constexpr (std::is_void_v<T>) {
    TaskAccess::handle(t).promise().result_.take();
    return {};
  } else {
    return TaskAccess::handle(t).promise().result_.take();
  }
}

template <class... Ts>
struct JoinTuple {
  std::tuple<weft::Task<Ts>...> tasks;
  Join join;
  JoinChild kids[sizeof...(Ts)];

  bool await_ready() const noexcept { return false; }
  template <class P>
  void await_suspend(std::coroutine_handle<P> parent) {
    bind_all(parent.promise(), std::index_sequence_for<Ts...>{});
    start_join(join, kids, sizeof...(Ts), parent, parent.promise().pool_);
  }
  std::tuple<JoinValue<Ts>...> await_resume() {
    return std::apply([](auto&... t) { return std::tuple<JoinValue<Ts>...>{take_joined(t)...}; }, tasks);
  }

 private:
  template <std::size_t... I>
  void bind_all(const PromiseBase& parent, std::index_sequence<I...>) noexcept {
    (bind_child(kids[I], join, std::get<I>(tasks), parent), ...);
  }
};

// A vector join's child slots, from the thread's PoolResource as task
// frames are (a tree's every node makes one; operator new[] cost a
// malloc and a free per node on skynet), freed by whichever thread ends
// the join.
class JoinChildren {
 public:
  JoinChildren() = default;
  JoinChildren(const JoinChildren&) = delete;
  JoinChildren& operator=(const JoinChildren&) = delete;
  ~JoinChildren() {
    static_assert(std::is_trivially_destructible_v<JoinChild>, "the slots are freed without destructors");
    if (kids_ != nullptr) free_task(kids_, n_ * sizeof(JoinChild), alignof(JoinChild));
  }
  JoinChild* make(std::size_t n) {
    kids_ = static_cast<JoinChild*>(allocate_task(n * sizeof(JoinChild), alignof(JoinChild)));
    n_ = n;
    for (std::size_t i = 0; i < n; ++i) ::new (static_cast<void*>(kids_ + i)) JoinChild();
    return kids_;
  }

 private:
  JoinChild* kids_ = nullptr;
  std::size_t n_ = 0;
};

template <class T>
struct JoinVector {
  std::vector<weft::Task<T>> tasks;
  Join join;
  JoinChildren kids;

  bool await_ready() const noexcept { return tasks.empty(); }
  template <class P>
  void await_suspend(std::coroutine_handle<P> parent) {
    JoinChild* const k = kids.make(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) bind_child(k[i], join, tasks[i], parent.promise());
    start_join(join, k, tasks.size(), parent, parent.promise().pool_);
  }
  auto await_resume() {
    if constexpr (std::is_void_v<T>) {
      for (auto& t : tasks) TaskAccess::handle(t).promise().result_.take();
    } else {
      std::vector<T> out;
      out.reserve(tasks.size());
      for (auto& t : tasks) out.push_back(TaskAccess::handle(t).promise().result_.take());
      return out;
    }
  }
};

}  // namespace detail
/// @endcond

///@{
/// co_await on a `weft::Future<U>`: see the header comment.
template <class U>
detail::FutureAwaiter<U> operator co_await(Future<U>& f) noexcept {
  return detail::FutureAwaiter<U>(f);
}
template <class U>
detail::FutureAwaiter<U> operator co_await(Future<U>&& f) noexcept {
  return detail::FutureAwaiter<U>(f);
}
///@}

/// Inside a Task: co_await current_stop_token() gives the task's stop token.
inline detail::StopTokenAwaiter current_stop_token() noexcept { return {}; }

///@{
/// co_await when_all(tasks...): the children in parallel; see above.
/// Invalid tasks throw std::invalid_argument.
template <class T, class... Ts>
detail::JoinTuple<T, Ts...> when_all(Task<T> first, Task<Ts>... rest) {
  if (!first.valid() || !(rest.valid() && ...)) throw std::invalid_argument("weft::when_all: a task is not valid");
  return {{std::move(first), std::move(rest)...}, {}, {}};
}
template <class T>
detail::JoinVector<T> when_all(std::vector<Task<T>> tasks) {
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].valid())
      throw std::invalid_argument("weft::when_all: task " + std::to_string(i) + " is not valid");
  return {std::move(tasks), {}, {}};
}
///@}

inline detail::ScheduleAwaiter ThreadPool::schedule() noexcept { return detail::ScheduleAwaiter(this); }

namespace detail {
// The start node of a spawned or sync_wait()ed task, owning its frame (the
// task is left empty), on `pool` (nullptr: sync_wait(task)'s), with its
// future.
template <class T>
std::pair<SpawnState<T>*, Future<T>> spawn_node(weft::Task<T>& task, PoolCore* pool) {
  auto* node = new_task<SpawnState<T>>(TaskAccess::handle(task), pool);
  TaskAccess::release(task);  // the node owns the frame now
  return {node, FutureLink::adopt<T>(node)};
}
}  // namespace detail

template <class T>
Future<T> ThreadPool::spawn(Task<T> task) {
  if (!task.valid()) throw std::invalid_argument("weft::ThreadPool::spawn: the task is not valid");
  auto [node, fut] = detail::spawn_node(task, core_.get());
  push(node);  // on failure push() cancelled the node and dropped the queue's reference
  return std::move(fut);  // a structured binding is not moved from implicitly
}

/// Runs `task` to completion on `pool` from any thread: the root starts on
/// a worker of `pool` and its when_all children are queued there too,
/// wherever the caller is. A caller outside every pool that gets the pool's
/// seat (a worker is parked) is that worker: the root starts here, and the
/// caller runs the pool's tasks until it finds none, then gives the seat
/// back and waits as Future::get() does. So P threads compute, not P + 1
/// (the caller spinning in get() beside P workers), and the first worker
/// the root's forks wake is kept off the caller's CPU (PoolCore::steer_off()).
/// Otherwise it is spawn() then get() (a worker runs queued tasks meanwhile).
template <class T>
T sync_wait(ThreadPool& pool, Task<T> task) {
  if (!task.valid()) throw std::invalid_argument("weft::sync_wait: the task is not valid");
  Future<T> fut;
  {
    const detail::Seat seat(pool);  // none on a worker thread of any pool
    if (seat.seated()) {
      auto [node, f] = detail::spawn_node(task, &detail::core_of(pool));
      fut = std::move(f);
      detail::run_in_seat(node, node->state, &detail::FutureState<T>::is_ready);
    }
  }  // the seat is given back before the wait: a sleeping seat holder would keep a worker out
  if (fut.valid()) return fut.get();
  return pool.spawn(std::move(task)).get();
}

/// Runs `task` to completion from any thread and returns its value (or
/// rethrows its exception); see the header comment.
template <class T>
T sync_wait(Task<T> task) {
  if (!task.valid()) throw std::invalid_argument("weft::sync_wait: the task is not valid");
  auto [node, fut] = detail::spawn_node(task, nullptr);
  detail::SpawnState<T>::execute_impl(node);
  return fut.get();
}

}  // namespace weft
