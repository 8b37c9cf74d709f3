/// @file
/// weft/exec/partitioner.hpp — how far a parallel_for splits its range.
///
///   weft::parallel_for(pool, v.begin(), v.end(), body);                          // weft::adaptive
///   weft::parallel_for(pool, v.begin(), v.end(), body, weft::static_partition);
///   weft::parallel_for(pool, v.begin(), v.end(), body, weft::fixed_grain(4096));
///
/// A range is divisible while it holds more than its grain (1 unless the
/// loop is given one; a 2-D range is divisible while either dimension is).
/// The partitioner decides which divisible ranges are split:
///
/// adaptive (the default) splits the range into a few pieces (4) per
///   worker (the loop runs on the pool's workers only, whoever calls it; one
///   piece on a pool of one worker) and
///   then splits a piece again only when a worker is idle and no piece
///   already offered is waiting for it: a 1-D piece checks between short
///   runs of its indices, a 2-D piece before its body starts. A loop on a
///   busy pool runs in a few leaves per thread; a loop that meets idle
///   workers hands them halves of what is left (oneTBB's auto_partitioner
///   has the same goal; its trigger is a stolen sibling).
///
/// static_partition cuts the range into one contiguous block per worker,
///   block k to worker k, by the same arithmetic on every call, so repeated
///   loops over the same data touch each part from the same worker (and its
///   caches). The calling worker runs its own block; a caller outside the
///   pool has no block and waits. Each worker claims its own block first; a
///   worker that has finished its block and finds another still unclaimed
///   runs it, so a busy or slow worker delays the loop but never stalls it,
///   and the mapping holds on every call where each worker is free to take
///   its block. No balancing: for even work on a pool the loop has to itself.
///
/// fixed_grain(g) splits every range of more than g elements (2-D: cells),
///   as far as the range's grain allows, eagerly: leaves hold at most g
///   (g of 0 means 1), whatever the load. For uneven work whose cost per
///   element the caller knows, or for tests that need a known leaf size.
#pragma once

#include <cstddef>
#include <type_traits>

namespace weft {

struct AdaptivePartition {};
struct StaticPartition {};
/// Chunks of exactly `grain` (the last one shorter): fixed_grain(g).
struct FixedGrain {
  std::size_t grain = 1;  ///< indices per chunk, at least 1
};

/// Splits while workers are idle (the default): this file's opening comment says how.
inline constexpr AdaptivePartition adaptive{};
/// One contiguous chunk per worker, fixed up front.
inline constexpr StaticPartition static_partition{};
/// Chunks of `grain` indices (0 means 1).
constexpr FixedGrain fixed_grain(std::size_t grain) noexcept { return FixedGrain{grain > 0 ? grain : 1}; }

template <class P>
concept Partitioner = std::is_same_v<std::remove_cvref_t<P>, AdaptivePartition> ||
                      std::is_same_v<std::remove_cvref_t<P>, StaticPartition> ||
                      std::is_same_v<std::remove_cvref_t<P>, FixedGrain>;

}  // namespace weft
