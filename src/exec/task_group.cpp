#include "weft/exec/task_group.hpp"

#include <stdexcept>

#include "pool_core.hpp"
#include "weft/detail/exec/block_on.hpp"
#include "weft/detail/exec/seat.hpp"
#include "weft/detail/sync/asymmetric_fence.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/error.hpp"
#include "weft/exec/cancelled.hpp"

namespace weft {

namespace detail {
thread_local constinit GroupFrame* t_group_frames = nullptr;
thread_local constinit std::uint64_t t_group_serial = 0;

namespace {
std::atomic<std::uint64_t> g_frames_walked{0};
}  // namespace

std::uint64_t self_wait_frames_walked() noexcept {
  return g_frames_walked.load(std::memory_order_relaxed);  // relaxed: a count, see the header
}
}  // namespace detail

namespace {
// Bit 0 of the state word: a waiter may sleep on it (the count is in bits 2-31).
constexpr std::uint32_t kWaiter = 1;
// Bit 1: a thread other than the builder waits. Its condition reads the
// builder's local count too, which a finish on the root cannot see: so
// every root decrement wakes it, and so does the builder when it changes
// the local count (note_local_change()).
constexpr std::uint32_t kOutside = 2;
constexpr std::uint32_t kShardMax = 0xfffffffeu;
}  // namespace

TaskGroup::TaskGroup() : TaskGroup(*detail::current_or_default_pool().owner) {}

bool TaskGroup::running_on_this_thread() const noexcept {
  // Nothing of the group is below the builder's own frame.
  if (waited_on_by_builder()) return false;
  std::uint64_t walked = 0;
  bool found = false;
  for (const detail::GroupFrame* f = detail::t_group_frames; f != nullptr && !found; f = f->below) {
    ++walked;
    found = f->group == this;
  }
  // relaxed: a statistic for tests, ordered with nothing.
  detail::g_frames_walked.fetch_add(walked, std::memory_order_relaxed);
  return found;
}

void TaskGroup::record(std::exception_ptr e) noexcept {
  // acq_rel: one winner stores the exception; wait() reads it after the
  // count reached zero, which the finishing RMWs order after this.
  if (!error_claimed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
}

void TaskGroup::cancel() noexcept {
  detail::sched_point();
  // relaxed: the flag carries no data; each task reads it once, and either
  // answer is a legal outcome of a cancel racing that task's start.
  cancelled_.store(true, std::memory_order_relaxed);
  take_back_queued();
}

TaskGroup::Shard* TaskGroup::shards() {
  // acquire: pairs with the release below, so the shards' zeroes are seen.
  Shard* s = shards_.load(std::memory_order_acquire);
  if (s != nullptr) return s;
  auto* mine = new Shard[static_cast<std::size_t>(pool_.size())];
  // release: publishes the zeroed shards; acquire on failure: the winner's.
  if (shards_.compare_exchange_strong(s, mine, std::memory_order_acq_rel, std::memory_order_acquire)) return mine;
  delete[] mine;
  return s;
}

TaskGroup::Shard* TaskGroup::count_elsewhere() {
  const detail::WorkerContext& me = detail::this_worker();
  if (me.pool != pool_.core_.get()) {  // an outside thread: rare enough to share the root
    count_on_root();
    return nullptr;
  }
  Shard& shard = shards()[me.worker->index];
  detail::sched_point();
  // seq_cst, here and on every shard and root RMW but the builder's add:
  // one order of them all is what "units == 0 means nothing pending" is
  // argued in (docs/design/cancellation.md); on x86 and AArch64 an RMW
  // costs the same at acq_rel.
  const std::uint32_t old = shard.value.fetch_add(1, std::memory_order_seq_cst);
  if (old >= kShardMax) {
    shard.value.fetch_sub(1, std::memory_order_relaxed);  // relaxed: undoes our own add, not a 1 -> 0
    throw std::length_error("weft::TaskGroup: more than 2^32 pending tasks from one worker");
  }
  if (old == 0) {
    detail::sched_point();
    // The shard's unit: this worker alone adds to its shard, so no finish
    // can take the unit off before this add (the shard holds our task).
    state_.fetch_add(4, std::memory_order_seq_cst);  // seq_cst: see above
  }
  return &shard;
}

void TaskGroup::take_units_off_root(std::uint32_t units) noexcept {
  detail::sched_point();
  // seq_cst: release publishes the tasks' effects to wait()'s acquire, and
  // the order above; the old value says whether this was the last unit and
  // someone sleeps. The group may be destroyed as soon as the count is
  // zero: the wake call only uses the word's address. A waiter outside
  // the builder's thread is woken by every decrement: only it can tell,
  // with the local count, whether this was the last.
  const std::uint32_t four_n = 4 * units;
  const std::uint32_t old = state_.fetch_sub(four_n, std::memory_order_seq_cst);
  if ((old & kOutside) != 0 || old == (four_n | kWaiter)) detail::futex_wake(state_, detail::kWakeAll);
}

void TaskGroup::finish_one(Shard* shard) noexcept {
  if (shard == inline_mark()) {
    finish_inline();
    return;
  }
  if (shard != nullptr && shard != local_mark()) {
    detail::sched_point();
    // seq_cst: release hands this task's effects to the shard's 1 -> 0
    // finisher, which passes them on to the root; see count_elsewhere().
    if (shard->value.fetch_sub(1, std::memory_order_seq_cst) != 1) return;
  }
  take_units_off_root(1);
}

void TaskGroup::discard_task(detail::TaskNode* t) noexcept {
  auto* self = static_cast<GroupTaskBase*>(t);
  TaskGroup* g = self->group;
  Shard* shard = self->shard;
  self->destroy(self);
  g->finish_one(shard);
}

namespace {
// take_back()'s context: the group, and the root units its taken tasks
// free (root-counted tasks, and shards they emptied), taken off in one RMW.
struct TakeBack {
  TaskGroup* group;
  mutable std::uint32_t units;
};
}  // namespace

bool TaskGroup::take_mine(detail::TaskNode* t, const void* ctx) noexcept {
  const auto* tb = static_cast<const TakeBack*>(ctx);
  if (!is_task_of(t, tb->group)) return false;
  auto* self = static_cast<GroupTaskBase*>(t);
  Shard* shard = self->shard;
  self->destroy(self);
  // Marked skipped before the task leaves the count: a shard decrement may
  // be the last thing keeping wait() from returning (another worker's finish
  // can take the shard's unit off the root right after), so wait() must see
  // the flag by then (the decrement's release orders it).
  tb->group->skip();
  // seq_cst: as in finish_one(); the shard's unit, if this emptied it, goes
  // off the root with the others after the walk.
  if (shard == nullptr || shard == local_mark() || shard->value.fetch_sub(1, std::memory_order_seq_cst) == 1)
    ++tb->units;
  return true;
}

// The cheap way to skip: the tasks still in the calling thread's own deque
// leave it in one step, are destroyed here (their blocks go back to this
// thread's free lists, no remote free), and leave the root in one RMW,
// instead of a steal, a remote free and a fetch_sub each on the workers.
// Their shard decrements (mostly this worker's own line) come first: the
// root keeps their units until then, so it cannot reach 0 early.
void TaskGroup::take_back_queued() noexcept {
  TakeBack tb{this, 0};
  pool_.take_back(&TaskGroup::take_mine, &tb);
  if (tb.units != 0) take_units_off_root(tb.units);  // none when nothing was taken
}

// The blocking part of wait() and of the destructor. A worker (of any pool)
// helps where it is: it runs queued tasks while it waits. A thread that is
// no pool's worker takes this pool's seat when a worker is parked
// (weft/detail/exec/seat.hpp): seated, it is the guest worker and runs
// queued tasks while that worker sits out, so the group's tasks run on P
// threads, the caller one of them, not on P workers with a P+1st thread
// spinning beside them. It gives the seat back as soon as it finds nothing
// to run, before it sleeps: a leased worker is off the sleepers' list, and
// a post from elsewhere meanwhile must be able to wake it. Then (or with no
// seat: another thread holds it, or all P compute already) it waits without
// computing.
//
// While it blocks, the thread runs tasks of any kind (a stolen fork of
// parallel_invoke, a Future's task, another group's). One of them may
// run() on this group (the task that forked it holds a unit, so that is
// legal); on the builder's thread, under the builder's own frame, such a
// run() would count locally, after flush_local() made the root exact, and
// its finish would take another task's unit off the root. A frame of no
// group marks everything run from here on as inside, so it counts on the
// root (run()'s test is the top frame's serial against builder_top_).
void TaskGroup::wait_as_one_of_the_p(bool outside) noexcept {
  const detail::LinkedGroupFrame inside(nullptr);
  if (detail::on_worker_thread()) {
    if (outside)
      block_outside(true);
    else
      detail::block_on(state_, &TaskGroup::done, kWaiter, true);
    return;
  }
  {
    const detail::Seat seat(pool_);
    // acquire: as in wait(), the count reaching zero publishes the tasks' effects.
    if (seat.seated())
      while (!(outside ? outside_done() : done(state_.load(std::memory_order_acquire))) && detail::help_one()) {
      }
  }
  if (outside)
    block_outside(false);
  else
    detail::block_on(state_, &TaskGroup::done, kWaiter, false);
}

// A task of the local count, finished by the builder's join: -1 on the
// count, which only this thread writes.
void TaskGroup::finish_inline() noexcept {
  // relaxed load: our own word. release: an outside waiter's acquire of
  // the count sees the task's effects with it.
  local_.store(local_.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  note_local_change();
}

// The builder's thread folds its local count into the root: from here on
// the root alone says what is pending, as block_on() needs. Added to the
// root before the count is cleared, so a waiter that reads the count and
// then the root can see both (too many, never too few).
void TaskGroup::flush_local() noexcept {
  const std::uint32_t n = local_.load(std::memory_order_relaxed);  // relaxed: our own word
  if (n == 0) return;
  detail::sched_point();
  // seq_cst: one of the root's RMWs, in the one order the counting is
  // argued in; it publishes nothing of its own (the count's tasks carry
  // their effects on their own finishes).
  state_.fetch_add(4 * n, std::memory_order_seq_cst);
  local_.store(0, std::memory_order_release);  // release: as in finish_inline()
  note_local_change();
}

// After the builder changed its local count: if a waiter outside this
// thread may sleep on a condition the change just made true, wake it. The
// store-then-load pair of a Dekker with the waiter's bit-then-count in
// block_outside(); this side is the hot one (every inline finish), so it
// takes the light fence and the waiter the heavy one.
void TaskGroup::note_local_change() noexcept {
  detail::light_fence();
  // relaxed: the fence pair orders it; the bit is a hint to wake.
  if ((state_.load(std::memory_order_relaxed) & kOutside) == 0) return;
  // seq_cst: changes the word, so a waiter between its check and its
  // futex wait does not sleep on the old value; then wakes the sleepers.
  state_.fetch_and(~kOutside, std::memory_order_seq_cst);
  detail::futex_wake(state_, detail::kWakeAll);
}

// The builder's own test: its local count is its own.
bool TaskGroup::builder_done() const noexcept {
  // acquire: pairs with the finishing RMWs' release, as in wait().
  const std::uint32_t root = state_.load(std::memory_order_acquire);
  return (((root >> 2) + local_.load(std::memory_order_relaxed)) & kUnitMask) == 0;
}

// Another thread's test. The local count only falls while anyone may wait
// (the builder's run()s come before any wait(); its join takes tasks off),
// so reading it first and the root second over-counts if anything, and a
// zero sum means nothing was pending when the root was read.
bool TaskGroup::outside_done() const noexcept {
  const std::uint32_t n = local_.load(std::memory_order_acquire);  // acquire: pairs with finish_inline()
  const std::uint32_t root = state_.load(std::memory_order_acquire);  // acquire: as above
  return (((root >> 2) + n) & kUnitMask) == 0;
}

// How a thread other than the builder blocks: helps (on a worker) while
// there is something to run, then sets both bits and sleeps on the root.
// Every root decrement then wakes it, and so does a change of the local
// count (note_local_change(): the heavy fence here pairs with its light one).
void TaskGroup::block_outside(bool help) noexcept {
  for (;;) {
    if (outside_done()) return;
    if (help && detail::help_one()) continue;
    // seq_cst: the announcement the finishers and note_local_change() read.
    // The futex waits on the word as this RMW left it: a change since (a
    // finish, or the builder clearing the bit to wake us) makes it return.
    const std::uint32_t w = state_.fetch_or(kWaiter | kOutside, std::memory_order_seq_cst) | kWaiter | kOutside;
    detail::heavy_fence();
    if (outside_done()) return;
    detail::futex_wait(state_, w);
  }
}

void TaskGroup::clear_waiter_bits() noexcept {
  // relaxed: clears the bits when the root holds nothing (units below zero
  // mean the builder still holds local counts: left for its flush); if a
  // run() raced in, a bit stays and only costs a spare wake call.
  std::uint32_t w = state_.load(std::memory_order_relaxed);
  if (w != 0 && (w >> 2) == 0) state_.compare_exchange_strong(w, 0, std::memory_order_relaxed, std::memory_order_relaxed);
}

bool TaskGroup::run_mine_at_bottom() noexcept {
  detail::WorkerContext& c = detail::this_worker();
  if (c.pool != &detail::core_of(pool_)) return false;
  bool pushed_back = false;
  detail::TaskNode* const t = c.worker->source.deque.claim_bottom_if(
      [this](const detail::TaskNode* x) { return is_task_of(x, this); }, pushed_back);
  if (pushed_back) c.pool->announce_own_push(*c.worker);  // not ours: back, and announced as a push
  if (t == nullptr) return false;
  // Ours now: a task of the local count finishes on it (finish_inline()).
  auto* g = static_cast<GroupTaskBase*>(t);
  if (g->shard == local_mark()) g->shard = inline_mark();
  c.pool->execute(*c.worker, t);  // counted, traced and claimed as any task the worker runs
  return true;
}

void TaskGroup::wait() {
  // A group cancelled by a stop (on another thread) still has the tasks
  // this thread queued in its deque: take them back rather than wait.
  if (is_cancelled()) take_back_queued();
  if (waited_on_by_builder()) {
    // Fork-join's join: the builder, under the frame it built the group in
    // (so not inside one of the group's tasks), takes its own queued tasks
    // of the group back off the bottom of its deque, newest first, and
    // runs them here, as the helping wait below would, without its search
    // (own deque, then victims) or its waiting word. What a thief took, or
    // a task queued above ours, leaves it to the helping wait.
    while (!builder_done() && run_mine_at_bottom()) {
    }
  }
  // The builder's thread makes the root exact; another thread counts the
  // builder's local count in (outside_done()).
  const bool outside = builder_ != &detail::t_group_frames;
  if (!outside) flush_local();
  // acquire (in both): pairs with the release of the RMW that took the last unit off.
  if (!(outside ? outside_done() : done(state_.load(std::memory_order_acquire)))) {
    // Only a wait that would block can be one from inside: the calling task
    // itself is still pending.
    if (running_on_this_thread())
      throw std::logic_error(
          "weft::TaskGroup::wait() called from one of its own tasks (it would wait for itself; "
          "wait in the code that run() the tasks, outside the group)");
    wait_as_one_of_the_p(outside);
  }
  clear_waiter_bits();
  // relaxed: the count reaching zero (acquire above) ordered every skip
  // before us, and the group is quiet now. A load first: the common wait
  // skipped nothing and writes nothing.
  const bool skipped = skipped_.load(std::memory_order_relaxed);
  if (skipped) skipped_.store(false, std::memory_order_relaxed);
  if (error_claimed_.load(std::memory_order_acquire)) {  // acquire: pairs with record()
    std::exception_ptr e = std::exchange(error_, nullptr);
    error_claimed_.store(false, std::memory_order_relaxed);  // relaxed: the group is quiet now
    std::rethrow_exception(e);
  }
  if (skipped) throw cancelled();
}

TaskGroup::~TaskGroup() {
  if (is_cancelled()) take_back_queued();
  const bool outside = builder_ != &detail::t_group_frames;
  if (!outside) flush_local();
  if (!(outside ? outside_done() : done(state_.load(std::memory_order_acquire))))  // acquire: as in wait()
    wait_as_one_of_the_p(outside);
  if (error_claimed_.load(std::memory_order_acquire) && error_) {
    report_error("weft::TaskGroup destroyed with an exception nobody wait()ed for", error_);
  }
  // relaxed: quiet, as wait() left it. Tested first: a group that never
  // sharded (fork-join's) skips the call.
  if (Shard* s = shards_.load(std::memory_order_relaxed)) delete[] s;
}

}  // namespace weft
