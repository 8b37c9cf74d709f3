/// @file
/// weft/exec/default_pool.hpp — the process-wide pool the pool-less
/// algorithm forms run on.
///
///   double s = weft::parallel_reduce(v.begin(), v.end(), 0.0, std::plus<>{});
///   weft::default_pool().post([] { ... });
///
/// Libraries built on weft that take no pool argument share this one set of
/// workers instead of each starting its own (oversubscription is what makes
/// independent pools slow when they are busy at once).
///
/// The pool is made on first use, with available_parallelism() workers and
/// no pinning; concurrent first calls make exactly one (a function-local
/// static). It is never destroyed: its workers stay parked until the process
/// ends. Destroying it at exit would be worse on every count: a destructor
/// run from std::exit() called inside one of its tasks would join its own
/// thread; tasks still queued would run while the statics they use are being
/// destroyed; and a task that never ends would hang the exit. Parked workers
/// cost nothing, and the kernel reclaims them. What remains the caller's
/// duty: work post()ed to the default pool must be waited for (wait_idle())
/// before main returns if its effects matter; every algorithm in weft
/// returns only when its work is done.
#pragma once

#include <concepts>
#include <type_traits>
#include <utility>

#include "weft/exec/thread_pool.hpp"

namespace weft {

/// Thread-safe; the same pool on every call. Throws what ThreadPool's
/// constructor throws (std::system_error if no thread can be started), and a
/// later call tries again.
ThreadPool& default_pool();

}  // namespace weft

// Declares weft::NAME(args...) as weft::NAME(default_pool(), args...), for
// an algorithm whose first parameter is the pool: one definition of the
// pool-less form for every algorithm. It takes part in overload resolution
// only when the pool-first call with these arguments is valid and the
// first argument is not itself a pool. Use inside namespace weft.
#define WEFT_ON_DEFAULT_POOL(NAME)                                                              \
  template <class First, class... Rest>                                                         \
    requires(!std::same_as<std::remove_cvref_t<First>, ::weft::ThreadPool> &&                   \
             requires(::weft::ThreadPool& p, First&& f, Rest&&... r) {                          \
               ::weft::NAME(p, std::forward<First>(f), std::forward<Rest>(r)...);               \
             })                                                                                 \
  decltype(auto) NAME(First&& first, Rest&&... rest) {                                          \
    return ::weft::NAME(::weft::default_pool(), std::forward<First>(first), std::forward<Rest>(rest)...); \
  }
