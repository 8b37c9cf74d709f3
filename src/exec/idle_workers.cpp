#include "idle_workers.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <utility>

#include "pool_core.hpp"
#include "weft/detail/sched_point.hpp"
#include "weft/detail/sync/asymmetric_fence.hpp"
#include "weft/detail/sync/futex.hpp"
#include "weft/detail/sync/spin.hpp"
#include "weft/detail/sync/wait.hpp"

namespace weft::detail {

namespace {
// No spin before sleeping: a worker's search was its spin, and
// wait_quiescent() waits for a whole batch of tasks, not a hand-off.
constexpr WaitOptions kNoSpin{std::chrono::nanoseconds(0), false};

// The longest pause between a searcher's looks (search_or_sleep()), in time:
// a pause costs 5-6x as much on an Intel host as on an AMD one.
constexpr std::int64_t kSearchGapNs = 500;

// A search at the spin tuner's floor looks once (spin_until()).
constexpr bool kBriefAtFloor = true;
}  // namespace

void IdleWorkers::size_for(int workers) {
  search_gap_pauses_ = pauses_for(kSearchGapNs);  // here, before any search: the first call measures
  sleepers_.reserve(static_cast<std::size_t>(workers));
  sleeper_cpu_.assign(static_cast<std::size_t>(workers), -1);
}

TaskNode* IdleWorkers::search_or_sleep(Worker& w) noexcept {
  const WaitOptions& opts = pool_.wait_options();
  // release: a sleeper whose announcement comes after this in the word's
  // order (every write of it is an RMW: one release sequence) sees what we
  // pushed while running, so it needs no heavy fence against us
  // (announce_sleep()). Submitters read it after their fence; a stale
  // count can only cause one wake-up too many or too few, and "too few" is
  // covered by the rescan before sleeping.
  std::uint64_t seen = idle_state_.fetch_add(kSearching, std::memory_order_release) + kSearching;
  for (bool woken = false;;) {
    // Search for the spin budget (adaptive, like every wait in weft: an
    // idle pool's searches keep failing and shrink to 1/64 of it; and
    // stretched up to 8x while a seated caller's tasks come just after the
    // search gives up, idle_policy.hpp), unless half the workers that are
    // not asleep search already: the bound the ramps keep to, so we ask
    // search_room() whether a ramp could have woken us (`seen`, the word as
    // our RMW left it, counts us as searching: the room before that is the
    // word without us). Then go straight to sleep, as Go's scheduler
    // does. More searchers find a task no sooner; each takes a CPU the
    // submitter or the worker running a task may need (on 2 CPUs a third
    // spinner made the remote round trip 3-10x slower), and each polls the
    // lines the pushing worker writes (on a 16-vCPU Xeon, counting half of
    // all workers instead let 10,000 tiny tasks pushed by one worker take
    // 1.3x as long: docs/results/16cpu-intel-vm-6.md).
    // A worker a waker counted as searching searches: it was woken for a
    // task. The count is a hint (relaxed, stale by the time we act): a
    // worker that sleeps without searching is one whose search found
    // nothing, which the protocol covers.
    SpinOutcome spun{false, false, false, 0};  // no spin: nothing for the tuner to learn
    // Stretched (idle_policy.hpp): a longer budget, without the tuner.
    const bool stretched = w.stretch.level > 0;
    if (std::exchange(woken, false) || search_room(seen - kSearching) > 0) {
      TaskNode* t = nullptr;
      // No yields at the end: a searching worker has nobody to hand its CPU
      // to that parking would not hand it to as well, and each yield delays
      // this worker's next wake-up (spin.hpp).
      // Between looks that found nothing, a pause that doubles up to
      // kSearchGapNs. A look is not one load of a line in our cache (what
      // spin_until()'s pause per poll is right for) but loads of the lines
      // the submitters and running workers write: each look makes their
      // next push or pop fetch its line back. An outside thread that
      // submits and get()s one task at a time on 2 vCPUs (AMD EPYC) ran
      // 221 ns per round trip with a searcher looking every pause, 64-67
      // with the backoff; a task queued while a searcher backs off waits at
      // most kSearchGapNs more, against the ~10 us of a park and a wake.
      // Once the tuner is at its floor (searches keep failing: an idle
      // pool), one look, not a floor of ~10 (spin.hpp).
      spun = spin_until([&] { return (t = pool_.steal_any(w)) != nullptr; },
                        stretched ? WaitOptions{w.stretch.budget(opts.spin), false} : opts, 0,
                        search_gap_pauses_, kBriefAtFloor);
      if (t != nullptr) {
        if (!stretched) adapt(spun, opts, 0);
        bump(w.counters.spins_found_work);
        return found(w, t);
      }
    }
    // Announce the sleep, then look once more: a submitter that pushed
    // before our announcement either sees it and wakes us, or its push is
    // visible to the rescan (see PoolCore::push()).
    const bool deferred = announce_sleep(w.index, kSleeping - kSearching, sched_getcpu(), true);
    // acquire (stopping()): a worker that sees the stop leaves, runs its
    // on_worker_stop hook and exits, all after what shutdown()'s thread did
    // before its store. The fence in announce_sleep() orders this load after
    // our announcement; only an acquire read of the stop orders our exit
    // after the stopper (with a relaxed load TSan caught the stop hook
    // racing the owner's last reads).
    bool stopping = pool_.stopping();
    bool rescan_found = pool_.anything_queued() || stopping;
    bool woken_in_window = false;
    TaskNode* handed = nullptr;
    if (deferred && !rescan_found) {
      // The heavy side was deferred (announce_sleep()): a running worker's
      // push may be in flight, unseen by that rescan and not seeing us. Park
      // for the window; a waker's permit ends it as any wake-up does.
      // Otherwise the heavy side now, against the workers still running
      // (a fresh RMW read of the word says which), and look again.
      woken_in_window = park(w, kNoSpin, kDeferredFenceNs);
      if (!woken_in_window) {
        // acq_rel: acquire for dekker_fence(), as the announcement's RMW;
        // an RMW, so it reads the word's latest value. Adds nothing.
        dekker_fence(idle_state_.fetch_add(0, std::memory_order_acq_rel), false);
        stopping = pool_.stopping();
        rescan_found = pool_.anything_queued() || stopping;
      }
    }
    if (rescan_found) {
      bool was_listed = false;
      {
        std::lock_guard lock(sleepers_mutex_);
        auto it = std::find(sleepers_.begin(), sleepers_.end(), w.index);
        if (it != sleepers_.end()) {
          sleepers_.erase(it);
          was_listed = true;
          // relaxed: under the lock.
          seen = idle_state_.fetch_add(kSearching - kSleeping, std::memory_order_relaxed) + (kSearching - kSleeping);
        }
      }
      if (!was_listed) {
        park(w, WaitOptions{});  // a waker took us off the list: its permit is on its way
        handed = take_handed(w);
        woken = true;
        // Handed a task while our rescan saw another: a submitter that saw
        // us searching may rely on that rescan for its task, and the hand-off
        // made us a running worker, which looks again only after the handed
        // task (a long one, or one waiting for the queued task, would hold
        // it back with a worker asleep). So wake a sleeper for it, as
        // found()'s ramp would, unless someone searches by now.
        if (handed != nullptr && wake(1, 0) != 0) count_wakes_sent(w);
      }
      if (handed == nullptr && stopping && !pool_.anything_queued()) return leave();
    } else {
      // No spin: the search above was it. A permit in the window woke us already.
      if (!woken_in_window) park(w, kNoSpin);
      handed = take_handed(w);
      woken = true;
      // The waker counted us as searching. acquire (stopping()):
      // shutdown()'s stores before its stop_ store (the queues are quiet by
      // then).
      if (handed == nullptr && pool_.stopping() && !pool_.anything_queued()) return leave();
    }
    const std::int64_t now = now_ns();
    if (!stretched) adapt(spun, opts, now);
    if (spun.start_ns != 0) {
      // When the task that ended this search came: the waker's stamp if we
      // parked (`woken`), else now, as our rescan found it (the spin was a
      // little short). One climb per search. relaxed: the stamp is written
      // before unpark() (release) and read after our park()'s return
      // (acquire); a stale one is older than the spin and counts as late.
      const std::int64_t task_at = woken ? w.woken_at_ns.load(std::memory_order_relaxed) : now;
      w.stretch.climb(spun.start_ns, task_at, opts.spin, opts.adaptive, pool_.seat_held());
    }
    // Handed a task (hand_off()): the waker counted us as running, not
    // searching, so no ramp is owed, and the task is ours alone; no stop
    // check above, since shutdown() waits for it. The tuner and the
    // stretch above learn from this wait as from any other.
    if (handed != nullptr) return handed;
    if (TaskNode* mine = pool_.find_task(w)) return found(w, mine);
  }
}

bool IdleWorkers::park(Worker& w, const WaitOptions& opts, std::chrono::nanoseconds window) noexcept {
  WorkerCounters& c = w.counters;
  const bool bounded = window > std::chrono::nanoseconds::zero();
  const std::int64_t parked = now_ns();
  bump(c.busy_ns, static_cast<std::uint64_t>(parked - c.since_ns));
  // A park is counted as it begins (a snapshot taken meanwhile sees it); a
  // window only once a permit ended it: one that passes leaves the count
  // to the park that follows it.
  if (!bounded) bump(c.parks);
  trace_event_at(w, parked, TraceKind::park);
  bool permit = true;
  if (bounded) {
    permit = w.parker.park_for(window, opts);
  } else {
    w.parker.park(opts);
  }
  PoolCore::unsteer(w);
  c.since_ns = now_ns();
  trace_event_at(w, c.since_ns, TraceKind::wake);
  bump(c.idle_ns, static_cast<std::uint64_t>(c.since_ns - parked));
  if (permit) {
    if (bounded) bump(c.parks);
    w.reach = w.rings.empty() ? 0 : 1;  // back from sleep: look near first again
    w.empty_searches = 0;
    bump(c.wakeups_received);
  }
  return permit;
}

TaskNode* IdleWorkers::found(Worker& w, TaskNode* t) noexcept {
  // acq_rel: release as in search_or_sleep(), for a batch we moved into
  // our deque while searching; acquire, so the pushes of every worker whose
  // last RMW of the word is in this value's release sequence are visible
  // to our read of the queues (below).
  const std::uint64_t after = idle_state_.fetch_sub(kSearching, std::memory_order_acq_rel) - kSearching;
  // Nobody slept at our decrement: a worker that goes to sleep later
  // rescans the queues after its own announcement (docs/design/pool.md).
  if (sleeping(after) == 0) return t;
  // A submitter that saw us searching and woke nobody relies on us. Our
  // decrement before our read of the queues, as its push before its read
  // of the word, covers an outside submitter (it fences fully) and every
  // worker whose last RMW of the word is in `after`'s release sequence.
  // Not a worker running in `after`: it pushed with the light fence, and
  // only a membarrier would make its push visible to the read below. That
  // system call interrupts every running worker, once per task found (a
  // pipeline on 16 vCPUs spent most of its time in them). Instead, the
  // last searcher hands its search on, as Go's scheduler does: it wakes a
  // sleeper, counted as searching, whose search comes after the push or
  // whose sleep announcement's fence sees it. With searchers left, they
  // cover it; with no worker running (the others asleep, as for a worker
  // woken by an outside post), the plain fence suffices. The count below
  // is then the ramp's hint only.
  // (Without membarrier the workers' pushes fence fully: no hand-off.)
  // relaxed: set once before any worker ran.
  const bool hand_off =
      searching(after) == 0 && runs_besides(after, 1) && g_asymmetric_fences.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // seq_cst: our RMW before our reads
  const std::uint64_t s = idle_state_.load(std::memory_order_relaxed);  // relaxed: ordered by the fence
  const std::uint32_t looking = searching(s);
  const std::uint32_t queued = pool_.queued_up_to(looking + std::min(sleeping(s), kWakeBatch));
  // The ramp wakes no more than the searchers' bound lets search (with
  // nobody looking, at least one: the finder is not asleep).
  const std::uint32_t want = queued > looking ? std::min(queued - looking, search_room(s)) : 0;
  std::uint32_t n = 0;
  if (want > 0) {
    n = wake(want, kAnySearching);
  } else if (hand_off) {
    n = wake(1, 0);  // unless a worker searches again by now: it covers the push
  }
  if (n != 0) count_wakes_sent(w, n);
  return t;
}

TaskNode* IdleWorkers::take_handed(Worker& w) noexcept {
  // relaxed: see Worker::handed (the park's acquire ordered the waker's store).
  TaskNode* const t = w.handed.load(std::memory_order_relaxed);
  if (t == nullptr) return nullptr;
  w.handed.store(nullptr, std::memory_order_relaxed);  // relaxed: owner's; no waker writes it until we sleep again
  bump(w.counters.handed_posts);
  // Traced as a steal from an outside thread (peer -1), as a task taken
  // from its deque is: the trace says where each task came from.
  trace_event(w, TraceKind::steal);
  return t;
}

bool IdleWorkers::all_asleep(std::uint64_t s) const noexcept {
  return searching(s) == 0 && sleeping(s) == static_cast<std::uint32_t>(pool_.size());
}

bool IdleWorkers::all_asleep() const noexcept {
  // relaxed: a hint; hand_off() reads the word again under the lock.
  return all_asleep(idle_state_.load(std::memory_order_relaxed));
}

bool IdleWorkers::hand_off(TaskNode* t) noexcept {
  int w = -1;
  {
    std::lock_guard lock(sleepers_mutex_);
    // relaxed: under the lock, as every sleep transition.
    if (!all_asleep(idle_state_.load(std::memory_order_relaxed)) || sleepers_.empty()) return false;
    w = sleepers_.back();  // the most recent sleeper, as wake() takes
    sleepers_.pop_back();
    // sleeping -> running. relaxed: the lock orders it against other sleep
    // transitions; the unpark below publishes t to the worker.
    idle_state_.fetch_sub(kSleeping, std::memory_order_relaxed);
  }
  pool_.unpark(w, t);
  return true;
}

TaskNode* IdleWorkers::leave() noexcept {
  idle_state_.fetch_sub(kSearching, std::memory_order_relaxed);  // relaxed: shutting down
  return nullptr;
}

bool IdleWorkers::notify_one(const Source* pushed_to) noexcept {
  sched_point();
  // relaxed: ordered after the caller's push by its seq_cst fence.
  const std::uint64_t s = idle_state_.load(std::memory_order_relaxed);
  if (searching(s) != 0 || sleeping(s) == 0) return false;  // someone looks already, or nobody sleeps
  // Some worker is awake: it may look for our task before a sleeper could.
  if (pushed_to != nullptr && sleeping(s) < static_cast<std::uint32_t>(pool_.size()) && !wake_needed(*pushed_to))
    return false;
  return wake(1, 0) != 0;
}

bool IdleWorkers::notify_for_own_push(const Source& own, bool steer) noexcept {
  sched_point();
  // relaxed: ordered after the caller's push by its fence, as in notify_one().
  const std::uint64_t s = idle_state_.load(std::memory_order_relaxed);
  if (sleeping(s) == 0) return false;
  const std::uint32_t looking = searching(s);
  if (looking == 0) return wake(1, 0, steer) != 0;  // notify_one()'s case
  // Not beyond the searchers' bound: one woken now would find, back from
  // its first task, that it may not search, park again, and be woken by
  // the next push (20 fan-ins of 10,000 empty tasks by a worker on 16
  // vCPUs: 10,434 parks without this bound; a coroutine's fan-in 7.7 ms
  // without it, 4.6-5.4 with it: docs/results/16cpu-intel-vm-6.md).
  if (search_room(s) == 0) return false;
  // More tasks here than searchers on their way: one more. Every case
  // notify_one() wakes in, this wakes in too, so its argument (no task
  // left with every worker asleep) stands; the extra wakes only add
  // searchers, whom found()'s ramp and the sleep path already expect.
  const std::int64_t queued = own.deque.size();
  if (queued <= static_cast<std::int64_t>(looking)) return false;
  return wake(1, static_cast<std::uint32_t>(queued - 1), steer) != 0;
}

bool IdleWorkers::wake_needed(const Source& pushed_to) const noexcept {
  // Each look is the one notify_one() would have taken, only later (after
  // the same fence): a searcher seen covers our task as in the argument of
  // docs/design/pool.md, and an empty deque means workers took every task
  // pushed to it, ours included.
  const std::int64_t until = now_ns() + kWakeGraceNs;
  do {
    for (int i = 0; i < kPollsPerClockRead; ++i) {
      cpu_relax();
      sched_point();
      // relaxed: as in notify_one().
      if (pushed_to.deque.empty() || searching(idle_state_.load(std::memory_order_relaxed)) != 0) return false;
    }
  } while (now_ns() < until);
  return true;
}

std::uint32_t IdleWorkers::wake(std::uint32_t want, std::uint32_t max_searching, bool steer) noexcept {
  std::array<int, kWakeBatch> woken;
  std::uint32_t n = 0;
  {
    std::lock_guard lock(sleepers_mutex_);
    // relaxed: under the lock, as every sleep transition.
    if (searching(idle_state_.load(std::memory_order_relaxed)) > max_searching) return 0;
    n = std::min({want, kWakeBatch, static_cast<std::uint32_t>(sleepers_.size())});
    for (std::uint32_t i = 0; i < n; ++i) {
      woken[i] = sleepers_.back();
      sleepers_.pop_back();
    }
    // The woken workers start out searching, so the next submitters and
    // finders do not wake others for the same tasks. relaxed: the lock
    // orders it against other sleep transitions; the unparks below publish
    // to the workers.
    idle_state_.fetch_add(n * (kSearching - kSleeping), std::memory_order_relaxed);
  }
  const int here = steer && n != 0 ? sched_getcpu() : -1;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (here >= 0) pool_.steer_off(woken[i], here);
    pool_.unpark(woken[i]);
  }
  return n;
}

int IdleWorkers::lease_sleeper() noexcept {
  const int here = sched_getcpu();
  std::lock_guard lock(sleepers_mutex_);
  if (sleepers_.empty()) return -1;
  // The sleeper that last ran on the caller's CPU sits out, so the workers
  // the caller's pushes wake last ran elsewhere (pick_sleeper() says why);
  // among equals the most recent, as wake() takes: with a caller that calls
  // again and again, the same worker sits out each time.
  const int w = take_sleeper(here);
  // relaxed: under the lock, as every sleep transition. A submitter that
  // read the count before this wakes from the list, which no longer has w.
  idle_state_.fetch_sub(kSleeping, std::memory_order_relaxed);
  return w;
}

int IdleWorkers::take_sleeper(int cpu) noexcept {
  const std::size_t i = pick_sleeper(sleepers_, sleeper_cpu_, cpu);
  const int w = sleepers_[i];
  sleepers_.erase(sleepers_.begin() + static_cast<std::ptrdiff_t>(i));
  return w;
}

std::uint32_t IdleWorkers::search_room(std::uint64_t s) const noexcept {
  const std::int64_t room = static_cast<std::int64_t>(pool_.size()) - sleeping(s) - 2 * std::int64_t{searching(s)};
  return room > 0 ? static_cast<std::uint32_t>(room) : 0;
}

bool IdleWorkers::runs_besides(std::uint64_t after, std::uint32_t self) const noexcept {
  return searching(after) + sleeping(after) + self < static_cast<std::uint32_t>(pool_.size());
}

bool IdleWorkers::dekker_fence(std::uint64_t after, bool may_defer) const noexcept {
  // A worker that pushed with light_fence() and read the idle word before
  // our RMW, and has written the word with no RMW since, is running a task
  // now: neither searching nor sleeping in `after` (a worker leased to the
  // seat counts as running: its guest pushes). Every other worker's last
  // RMW of the word came after its pushes and is in `after`'s release
  // sequence (release, or seq_cst, and every write of the word is an RMW),
  // so our acquiring RMW already made its pushes visible: only a running
  // one needs membarrier's help (weft/detail/sync/asymmetric_fence.hpp).
  // `may_defer`: a sleeper may leave that help for later (announce_sleep());
  // then the plain fence, and true. (Without membarrier, heavy_fence() is
  // that fence: nothing to defer.) relaxed: set once before any worker ran.
  const bool running = runs_besides(after, 0);
  const bool defer = running && may_defer && g_asymmetric_fences.load(std::memory_order_relaxed);
  if (running && !defer) {
    heavy_fence();
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // seq_cst: our RMW before our reads, as ever
  }
  return defer;
}

bool IdleWorkers::announce_sleep(int w, std::uint64_t delta, int cpu, bool may_defer) noexcept {
  std::uint64_t after;
  {
    std::lock_guard lock(sleepers_mutex_);
    sleepers_.push_back(w);  // no allocation: size_for() reserved room for every worker
    if (cpu >= 0) sleeper_cpu_[static_cast<std::size_t>(w)] = cpu;
    // seq_cst (acquire, for dekker_fence()): see PoolCore::push().
    after = idle_state_.fetch_add(delta, std::memory_order_seq_cst) + delta;
  }
  sched_point();
  // acq_rel: wait_quiescent() waiters see the completions before the bump.
  if (idle_epoch_.fetch_add(2, std::memory_order_acq_rel) & 1) futex_wake(idle_epoch_, kWakeAll);
  // The caller's rescan must follow the RMW, against workers' pushes too.
  const bool deferred = dekker_fence(after, may_defer);
  sched_point();
  return deferred;
}

void IdleWorkers::return_sleeper(int w) noexcept {
  // w's own announcement, made for it (it is parked, not searching): a push
  // the lease kept from waking anyone (w off the list, nobody else idle) is
  // seen by the rescan; a push after it sees w listed and wakes it. The
  // epoch bump lets a quiescence waiter look again (the seated caller's
  // completions may have made the pool quiescent).
  announce_sleep(w, kSleeping, -1, false);  // w is parked: nobody to wait out a window
  if (pool_.anything_queued()) notify_one();
}

namespace {
// wait_idle() and shutdown(): wait for quiescent() on the idle epoch, which
// every worker bumps as it goes to sleep (waking the futex when bit 0 says
// someone waits). The bit stays set once a pool has been waited on:
// clearing it could strand a second waiter, and a wake call nobody needs
// costs only a syscall. Sleeps are sliced at 10 ms: quiescence can also
// come from a worker that finishes its last task without going to sleep.
struct IdleWait : WaitProtocolBase {
  const PoolCore& pool;
  std::atomic<std::uint32_t>& epoch;

  bool poll() const noexcept { return pool.quiescent(); }
  WaitStep announce() noexcept {
    if (pool.quiescent()) return WaitStep::done();
    std::uint32_t e = epoch.load(std::memory_order_acquire);  // acquire: pairs with the workers' bump
    if ((e & 1) == 0) {
      // relaxed: only has to be in the word before we sleep on it.
      if (!epoch.compare_exchange_weak(e, e | 1, std::memory_order_relaxed, std::memory_order_relaxed))
        return WaitStep::retry();
      e |= 1;
    }
    // Looked at after announcing: a worker that bumps the epoch later wakes
    // us or changes the word we sleep on.
    return pool.quiescent() ? WaitStep::done() : WaitStep::sleep(e);
  }
  bool give_up() const noexcept { return poll(); }
  std::atomic<std::uint32_t>& word() noexcept { return epoch; }
  static std::chrono::nanoseconds max_sleep() noexcept { return std::chrono::milliseconds(10); }
};
}  // namespace

void IdleWorkers::wait_quiescent() noexcept {
  IdleWait p{{}, pool_, idle_epoch_};
  // No spin: the caller waits for a whole batch of tasks, not a hand-off.
  wait_until(p, kNoSpin);
}

}  // namespace weft::detail
