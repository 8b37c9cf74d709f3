/// @file
/// weft/exec/when_all.hpp — futures of several futures, without a blocked thread.
///
///   weft::Future<std::tuple<int, std::string>> both =
///       weft::when_all(pool.submit(count), pool.submit(name));
///   weft::Future<std::vector<double>> all = weft::when_all(std::move(parts));
///   weft::Future<std::size_t> first = weft::when_any(std::move(replicas));
///
/// when_all(futures...) is ready once every input is: its value is the
/// inputs' values in order (a Future<void> input gives std::monostate).
/// when_all(vector) gives a vector (Future<void> for void inputs). If inputs
/// failed, the first failure by position is rethrown (cancelled inputs throw
/// weft::cancelled); the other results are dropped.
/// when_any(vector) is ready once any input is: its value is that input's
/// index, or that input's exception if it failed. The other inputs keep
/// running and their results are dropped.
///
/// All of them consume their inputs. An input that is not valid() throws
/// std::invalid_argument naming its position (the variadic form then
/// leaves every input with the caller). No thread waits for the
/// inputs: each input fires a continuation (the hook of future.hpp) into one
/// node, which the last arrival (when_all) or the first (when_any) completes
/// on its own thread. Inputs already ready arrive at once, so when_all of
/// ready futures (or of none) is ready on return. when_any of no future has
/// no first and throws std::invalid_argument.
///
/// The node's own future behaves like any other: then(), wait, get, and
/// cancel() while inputs are outstanding (the inputs still run; their
/// results are dropped). Continuations of it run on the first input's pool
/// (for when_all of nothing, ThreadPool::current() or the default pool).
///
/// Memory ordering: each input's result happens before the node's
/// completion (each arrival is an acq_rel decrement of `remaining`, or for
/// when_any the compare-exchange that claims the node), which happens before
/// the node's get() returns.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft/exec/future.hpp"

namespace weft {

namespace detail {

// A node completed by its inputs' continuations rather than run as a task.
// It stays kBlocked (no waiter can claim it) until an arrival claims it.
// Holds one reference for its future and one per input not yet arrived.
template <class R>
struct GatherState : FutureState<R> {
  struct Arm : Continuation {
    GatherState* node = nullptr;
    std::size_t index = 0;
  };
  std::atomic<std::size_t> remaining;
  void (*arrive)(GatherState*, std::size_t index) noexcept = nullptr;

  GatherState(std::size_t inputs, PoolCore* p) : remaining(inputs) {
    // Never queued: no worker executes or discards it.
    this->execute = nullptr;
    this->discard = nullptr;
    this->pool = p;
    // relaxed: the node is not shared yet; the first attach() publishes it.
    this->state.store(FutureState<R>::kPending | FutureState<R>::kBlocked, std::memory_order_relaxed);
    this->refs.store(static_cast<std::uint32_t>(inputs + 1), std::memory_order_relaxed);
  }
  void arm(Arm& a, std::size_t index) noexcept {
    a.node = this;
    a.index = index;
    a.fire = &fire_impl;
  }
  // Attaches `a` to `input`, or arrives at once if the input is done.
  template <class T>
  void link(Arm& a, const Future<T>& input) noexcept {
    if (!FutureLink::state(input)->attach(&a)) fire_impl(&a);
  }
  static void fire_impl(Continuation* c) noexcept {
    auto* a = static_cast<Arm*>(c);
    GatherState* node = a->node;
    node->arrive(node, a->index);
    node->release();
  }
  // when_all's arrival: the last one completes the node.
  static void arrive_all(GatherState* node, std::size_t) noexcept {
    sched_point();
    // acq_rel: the last arrival reads every input's result, published by
    // the other arrivals' release.
    if (node->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1 && node->claim_blocked()) node->run_claimed();
  }
};

template <class T>
using ValueOf = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class T>
ValueOf<T> value_of(Future<T>& f) {
  if constexpr (std::is_void_v<T>) {
    f.get();
    return {};
  } else {
    return f.get();
  }
}

template <class T>
PoolCore* pool_of(const Future<T>& f) noexcept {
  return FutureLink::state(f)->pool;
}

template <class T>
void require_valid(const Future<T>& f, const char* what, std::size_t position) {
  if (!f.valid())
    throw std::invalid_argument(std::string(what) + ": future " + std::to_string(position) + " is not valid()");
}

// Frees a node whose inputs are all attached or arrived; shared by the kinds.
template <class Node>
void destroy_node(FutureState<typename Node::Result>* s) noexcept {
  delete_task(static_cast<Node*>(s));
}

template <class... Ts>
struct WhenAllTuple final : GatherState<std::tuple<ValueOf<Ts>...>> {
  using Result = std::tuple<ValueOf<Ts>...>;
  using Base = GatherState<Result>;
  std::tuple<Future<Ts>...> inputs;
  std::array<typename Base::Arm, sizeof...(Ts)> arms;

  explicit WhenAllTuple(Future<Ts>&&... in)
      : Base(sizeof...(Ts), pool_of(std::get<0>(std::tie(in...)))), inputs(std::move(in)...) {
    this->invoke = &invoke_impl;
    this->destroy = &destroy_node<WhenAllTuple>;
    this->arrive = &Base::arrive_all;
  }
  void start() noexcept {
    for (std::size_t i = 0; i < arms.size(); ++i) this->arm(arms[i], i);
    link_all(std::index_sequence_for<Ts...>{});
  }
  template <std::size_t... I>
  void link_all(std::index_sequence<I...>) noexcept {
    (this->link(arms[I], std::get<I>(inputs)), ...);
  }
  static void invoke_impl(FutureState<Result>* s, bool run) noexcept {
    if (!run) return;  // cancelled: the inputs go with the node
    auto* self = static_cast<WhenAllTuple*>(s);
    auto collect = [self] {
      // Braced initialization evaluates in order: the first failure by position throws.
      return std::apply([](auto&... f) { return Result{value_of(f)...}; }, self->inputs);
    };
    self->result.run(collect);
  }
};

template <class T>
using VectorOf = std::conditional_t<std::is_void_v<T>, void, std::vector<T>>;

template <class T>
struct WhenAllVector final : GatherState<VectorOf<T>> {
  using Result = VectorOf<T>;
  using Base = GatherState<Result>;
  std::vector<Future<T>> inputs;
  std::unique_ptr<typename Base::Arm[]> arms;

  WhenAllVector(std::vector<Future<T>>&& in, PoolCore* p)
      : Base(in.size(), p), inputs(std::move(in)), arms(new typename Base::Arm[inputs.size()]) {
    this->invoke = &invoke_impl;
    this->destroy = &destroy_node<WhenAllVector>;
    this->arrive = &Base::arrive_all;
  }
  void start() noexcept {
    for (std::size_t i = 0; i < inputs.size(); ++i) this->arm(arms[i], i);
    for (std::size_t i = 0; i < inputs.size(); ++i) this->link(arms[i], inputs[i]);
    // With no input, nothing arrives: complete it here.
    if (inputs.empty() && this->claim_blocked()) this->run_claimed();
  }
  static void invoke_impl(FutureState<Result>* s, bool run) noexcept {
    if (!run) return;  // cancelled: the inputs go with the node
    auto* self = static_cast<WhenAllVector*>(s);
    auto collect = [self]() -> Result {
      if constexpr (std::is_void_v<T>) {
        for (auto& f : self->inputs) f.get();
      } else {
        std::vector<T> out;
        out.reserve(self->inputs.size());
        for (auto& f : self->inputs) out.push_back(f.get());
        return out;
      }
    };
    self->result.run(collect);
  }
};

template <class T>
struct WhenAnyVector final : GatherState<std::size_t> {
  using Result = std::size_t;
  using Base = GatherState<Result>;
  std::vector<Future<T>> inputs;
  std::unique_ptr<Base::Arm[]> arms;
  std::size_t winner = 0;  // written by the arrival that claimed the node, read by it

  explicit WhenAnyVector(std::vector<Future<T>>&& in)
      : Base(in.size(), pool_of(in.front())), inputs(std::move(in)), arms(new Base::Arm[inputs.size()]) {
    this->invoke = &invoke_impl;
    this->destroy = &destroy_node<WhenAnyVector>;
    this->arrive = &arrive_any;
  }
  void start() noexcept {
    for (std::size_t i = 0; i < inputs.size(); ++i) this->arm(arms[i], i);
    for (std::size_t i = 0; i < inputs.size(); ++i) this->link(arms[i], inputs[i]);
  }
  // The first arrival claims the node; later ones only drop their reference.
  static void arrive_any(Base* base, std::size_t index) noexcept {
    auto* self = static_cast<WhenAnyVector*>(base);
    if (!self->claim_blocked()) return;
    self->winner = index;
    self->run_claimed();
  }
  static void invoke_impl(FutureState<Result>* s, bool run) noexcept {
    if (!run) return;  // cancelled: the inputs go with the node
    auto* self = static_cast<WhenAnyVector*>(s);
    auto collect = [self] {
      self->inputs[self->winner].get();  // rethrows the winner's failure; its value is dropped
      return self->winner;
    };
    self->result.run(collect);
  }
};

template <class Node, class... Args>
auto start_gather(Args&&... args) {
  auto* node = new_task<Node>(std::forward<Args>(args)...);
  auto fut = FutureLink::adopt<typename Node::Result>(node);
  node->start();
  return fut;
}

}  // namespace detail

/// A future of every input's value, in order. See the header comment.
template <class T, class... Ts>
Future<std::tuple<detail::ValueOf<T>, detail::ValueOf<Ts>...>> when_all(Future<T>&& first, Future<Ts>&&... rest) {
  std::size_t position = 0;
  detail::require_valid(first, "weft::when_all", position++);
  (detail::require_valid(rest, "weft::when_all", position++), ...);
  return detail::start_gather<detail::WhenAllTuple<T, Ts...>>(std::move(first), std::move(rest)...);
}

/// A future of every input's value, in order (Future<void> for void inputs).
template <class T>
Future<detail::VectorOf<T>> when_all(std::vector<Future<T>> futures) {
  for (std::size_t i = 0; i < futures.size(); ++i) detail::require_valid(futures[i], "weft::when_all", i);
  detail::PoolCore* pool =
      futures.empty() ? &detail::current_or_default_pool() : detail::pool_of(futures.front());
  return detail::start_gather<detail::WhenAllVector<T>>(std::move(futures), pool);
}

/// A future of the index of the first input to be ready. See the header comment.
template <class T>
Future<std::size_t> when_any(std::vector<Future<T>> futures) {
  if (futures.empty()) throw std::invalid_argument("weft::when_any: the vector of futures is empty (no first to wait for)");
  for (std::size_t i = 0; i < futures.size(); ++i) detail::require_valid(futures[i], "weft::when_any", i);
  return detail::start_gather<detail::WhenAnyVector<T>>(std::move(futures));
}

}  // namespace weft
