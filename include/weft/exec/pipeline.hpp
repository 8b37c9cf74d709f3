/// @file
/// weft/exec/pipeline.hpp — items flowing through a chain of stages, each
/// serial or parallel, with a bound on the items alive at once.
///
///   weft::parallel_pipeline(pool, 16,
///       weft::stage<void, Line>(weft::StageMode::serial_in_order,
///                               [&](weft::FlowControl& fc) -> Line {
///                                 if (!in.next(line)) fc.stop();
///                                 return line;
///                               }),
///       weft::stage<Line, Row>(weft::StageMode::parallel, [](Line l) { return parse(l); }),
///       weft::stage<Row, void>(weft::StageMode::serial_in_order, [&](Row r) { out.write(r); }));
///
/// The first stage takes FlowControl& and makes one item per call until it
/// calls fc.stop() (that call's return value is discarded); its calls run one
/// at a time whatever its mode, and their order numbers the items. Every
/// later stage takes the previous one's output by value; the last returns
/// void. A serial_in_order stage runs the items one at a time in that order;
/// serial_out_of_order one at a time in any order; parallel any number at
/// once. The call returns when every item has been through every stage.
///
/// At most max_in_flight items are alive at once (made and not yet through
/// the last stage), capped at kMaxPipelineTokens; max_in_flight == 0 throws
/// std::invalid_argument. The first stage runs only while one of those
/// tokens is free: an item that leaves the last stage frees its token, and
/// the thread that frees it makes the next item.
///
/// No thread ever waits for an item: one that reaches a busy serial stage,
/// or an in-order stage before its turn, is parked in the stage, and whoever
/// finishes the stage runs it next (detail/exec/pipeline_gate.hpp). The
/// calling thread makes the first items and then waits as TaskGroup::wait()
/// does, running tasks when it is a worker; so a pool of one worker works,
/// and so does a call from inside a pool task.
///
/// Exceptions: once any stage (the first included) throws, the first stage
/// is not called again, and every item not yet started in a stage is
/// dropped (its remaining stages are skipped, its value destroyed); calls
/// already running finish. When all items are through or dropped, the first
/// exception is rethrown and the others are discarded. The pool stays usable.
/// No item runs a stage twice.
///
/// Memory ordering: everything a stage did to an item happens before the
/// next stage's call on it, a serial stage's calls are ordered one after the
/// other, and everything every stage did happens before the call returns.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft/detail/exec/pipeline_gate.hpp"
#include "weft/exec/default_pool.hpp"
#include "weft/exec/task_group.hpp"
#include "weft/exec/thread_pool.hpp"

namespace weft {

/// More tokens than this buy nothing (2^16 items already in flight) and
/// each in-order stage keeps a slot per token.
inline constexpr std::size_t kMaxPipelineTokens = std::size_t{1} << 16;

/// Handed to the first stage: stop() says there is no more input.
class FlowControl {
 public:
  /// No more input: this call's item is discarded and the first stage is not called again.
  void stop() noexcept { stopped_ = true; }
  /// Whether stop() was called.
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }

 private:
  bool stopped_ = false;
};

/// One stage: made by weft::stage<In, Out>(mode, fn).
template <class In, class Out, class F>
struct Stage {
  using input_type = In;    ///< what fn takes (void: the first stage)
  using output_type = Out;  ///< what fn returns (void: the last stage)
  StageMode mode;           ///< serial in order, serial out of order, or parallel
  F fn;                     ///< the stage's function
};

/// In void: the first stage, fn(FlowControl&) -> Out. Otherwise fn(In) -> Out.
/// Out void: the last stage.
template <class In, class Out, class F>
Stage<In, Out, std::decay_t<F>> stage(StageMode mode, F&& fn) {
  using Fn = std::decay_t<F>;
  static_assert(!std::is_reference_v<In> && !std::is_reference_v<Out>,
                "weft::stage<In, Out>: items travel by value; In and Out must not be references");
  if constexpr (std::is_void_v<In>) {
    static_assert(std::is_invocable_v<Fn&, FlowControl&>,
                  "weft::stage<void, Out>: the first stage's function must take weft::FlowControl&");
    if constexpr (std::is_invocable_v<Fn&, FlowControl&> && !std::is_void_v<Out>)
      static_assert(std::is_convertible_v<std::invoke_result_t<Fn&, FlowControl&>, Out>,
                    "weft::stage<void, Out>: the first stage's function must return Out");
  } else {
    static_assert(std::is_invocable_v<Fn&, In&&>, "weft::stage<In, Out>: the function must take an In");
    if constexpr (std::is_invocable_v<Fn&, In&&> && !std::is_void_v<Out>)
      static_assert(std::is_convertible_v<std::invoke_result_t<Fn&, In&&>, Out>,
                    "weft::stage<In, Out>: the function must return Out");
  }
  return {mode, std::forward<F>(fn)};
}

namespace detail {

template <class T>
inline constexpr bool kIsStage = false;
template <class In, class Out, class F>
inline constexpr bool kIsStage<Stage<In, Out, F>> = true;

template <class T>
concept PipelineStage = kIsStage<std::remove_cvref_t<T>>;

template <class T>
struct Carried {
  using type = T;
};
template <>
struct Carried<void> {
  using type = std::monostate;
};

template <class... S>
class Pipeline {
  using Stages = std::tuple<S...>;
  static constexpr std::size_t kStages = sizeof...(S);
  template <std::size_t K>
  using StageAt = std::tuple_element_t<K, Stages>;

  template <std::size_t... I>
  static constexpr bool chained(std::index_sequence<I...>) {
    return (std::is_same_v<typename StageAt<I>::output_type, typename StageAt<I + 1>::input_type> && ...);
  }
  static_assert(std::is_void_v<typename StageAt<0>::input_type>,
                "weft::parallel_pipeline: the first stage must be a stage<void, Out> (it takes FlowControl&)");
  static_assert(std::is_void_v<typename StageAt<kStages - 1>::output_type>,
                "weft::parallel_pipeline: the last stage must be a stage<In, void> (it consumes the items)");
  template <std::size_t... I>
  static constexpr bool fed(std::index_sequence<I...>) {
    return (!std::is_void_v<typename StageAt<I + 1>::input_type> && ...);
  }
  static_assert(fed(std::make_index_sequence<kStages - 1>{}),
                "weft::parallel_pipeline: only the first stage may be a stage<void, Out>");
  static_assert(chained(std::make_index_sequence<kStages - 1>{}),
                "weft::parallel_pipeline: each stage's In must be the Out of the stage before it");

  // Index K + 1 holds stage K's output, index 0 nothing.
  using Value = std::variant<std::monostate, typename Carried<typename S::output_type>::type...>;
  struct Item : PipeItem {
    Value value;
  };

 public:
  Pipeline(ThreadPool& pool, std::size_t tokens, S&&... stages)
      : stages_(std::move(stages)...), group_(pool), input_(tokens) {
    add_gates(tokens, std::make_index_sequence<kStages - 1>{});
  }

  void run() {
    try {
      drive(run_input(), 1);
    } catch (...) {
      fail(std::current_exception());
    }
    try {
      group_.wait();
    } catch (...) {
      fail(std::current_exception());
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  template <std::size_t... I>
  void add_gates([[maybe_unused]] std::size_t tokens, std::index_sequence<I...>) {
    (gates_.emplace_back(std::get<I + 1>(stages_).mode, tokens), ...);
  }

  // Carries x from stage k on: runs it wherever the gate lets it, and runs
  // whatever the gates hand back. Returns when x is parked or through.
  void drive(Item* x, std::size_t k) {
    static constexpr auto kCalls = make_calls(std::make_index_sequence<kStages - 1>{});
    while (x != nullptr) {
      if (k == kStages) {
        x = recycle(x);
        k = 1;
        continue;
      }
      StageGate& gate = gates_[k - 1];
      PipeItem* ready = gate.arrive(x);
      if (ready == nullptr) return;
      x = static_cast<Item*>(ready);
      while (true) {
        (this->*kCalls[k - 1])(*x);
        PipeItem* next = gate.pass(x);
        if (next == nullptr) break;
        hand_on(x, k + 1);  // this thread keeps the stage for `next`
        x = static_cast<Item*>(next);
      }
      ++k;
    }
  }

  void hand_on(Item* x, std::size_t k) {
    if (k == kStages) {  // freeing a token is cheap: do it here
      x = recycle(x);
      k = 1;
    }
    if (x != nullptr) group_.run([this, x, k] { drive(x, k); });
  }

  // x is through: its token goes back to the first stage. Returns an item
  // to carry if this thread became the first stage's runner.
  Item* recycle(Item* x) { return input_.add(x) ? run_input() : nullptr; }

  // The first stage's runner, holding at least one token: makes items
  // while tokens last, hands all but the last to tasks, returns the last
  // (or nullptr once the input is over, giving up every token it holds).
  Item* run_input() {
    while (true) {
      Item* x = produce();
      if (x == nullptr) {
        while (input_.leave()) {
        }
        return nullptr;
      }
      if (!input_.leave()) return x;
      group_.run([this, x] { drive(x, 1); });
    }
  }

  Item* produce() {
    if (input_done_ || failed_.load(std::memory_order_relaxed)) {  // relaxed: only hastens the stop
      input_done_ = true;
      return nullptr;
    }
    Item* x = static_cast<Item*>(input_.take());
    try {
      if (x == nullptr) x = items_.emplace_back(std::make_unique<Item>()).get();
      x->seq = next_seq_;
      x->dropped = false;
      auto& fn = std::get<0>(stages_).fn;
      if constexpr (kStages == 1) {
        std::invoke(fn, flow_);
      } else {
        x->value.template emplace<1>(std::invoke(fn, flow_));
        if (flow_.stopped()) x->value.template emplace<0>();
      }
    } catch (...) {
      fail(std::current_exception());
      flow_.stop();
    }
    if (!flow_.stopped()) {
      ++next_seq_;
      return x;
    }
    if (x != nullptr) input_.put_back(x);
    input_done_ = true;
    return nullptr;
  }

  // Stage K (K >= 1) on x, unless x is dropped or the pipeline is failing.
  template <std::size_t K>
  void call(Item& x) noexcept {
    if (x.dropped) return;
    if (failed_.load(std::memory_order_relaxed)) {  // relaxed: only hastens the drain
      drop(x);
      return;
    }
    try {
      auto& fn = std::get<K>(stages_).fn;
      auto&& in = std::get<K>(x.value);
      if constexpr (std::is_void_v<typename StageAt<K>::output_type>) {
        std::invoke(fn, std::move(in));
        x.value.template emplace<0>();
      } else {
        x.value.template emplace<K + 1>(std::invoke(fn, std::move(in)));
      }
    } catch (...) {
      fail(std::current_exception());
      drop(x);
    }
  }

  static void drop(Item& x) noexcept {
    x.dropped = true;
    x.value.template emplace<0>();
  }

  void fail(std::exception_ptr e) noexcept {
    // acq_rel: one winner stores the exception; run() reads it after the
    // group's wait, which orders every task's writes before it.
    if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::move(e);
  }

  template <std::size_t... I>
  static constexpr auto make_calls(std::index_sequence<I...>) {
    return std::array<void (Pipeline::*)(Item&) noexcept, sizeof...(I)>{&Pipeline::call<I + 1>...};
  }

  Stages stages_;
  TaskGroup group_;
  std::deque<StageGate> gates_;  // stage k's at k - 1
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  // The first stage's: its tokens and free items, and what only its
  // runner touches (the Combiner hands them from runner to runner).
  Combiner input_;
  FlowControl flow_;
  std::uint64_t next_seq_ = 0;
  bool input_done_ = false;
  std::vector<std::unique_ptr<Item>> items_;  // every item made, freed at the end
};

}  // namespace detail

/// Runs items through `stages` on `pool` with at most `max_in_flight` items
/// alive at once (at least 1; capped at kMaxPipelineTokens), and returns
/// when the first stage has stopped and every item has left the last;
/// this file's opening comment has the modes, exceptions and stopping.
template <detail::PipelineStage... S>
  requires(sizeof...(S) >= 1)
void parallel_pipeline(ThreadPool& pool, std::size_t max_in_flight, S&&... stages) {
  if (max_in_flight == 0)
    throw std::invalid_argument("weft::parallel_pipeline: max_in_flight must be at least 1 (got 0)");
  detail::Pipeline<std::remove_cvref_t<S>...> p(pool, std::min(max_in_flight, kMaxPipelineTokens),
                                                std::remove_cvref_t<S>(std::forward<S>(stages))...);
  p.run();
}

/// The same on default_pool().
template <detail::PipelineStage... S>
  requires(sizeof...(S) >= 1)
void parallel_pipeline(std::size_t max_in_flight, S&&... stages) {
  parallel_pipeline(default_pool(), max_in_flight, std::forward<S>(stages)...);
}

}  // namespace weft
