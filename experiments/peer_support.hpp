// The peers the pool experiments compare against (oneTBB, Boost.Asio):
// whether each was built in (a variant table's Peer), and how a oneTBB run
// gets the thread count it asks for.
#pragma once

#include <algorithm>

#include "weft/harness/run.hpp"

#ifdef WEFT_HAVE_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace weft::xp {

#ifdef WEFT_HAVE_TBB
inline constexpr bool kHaveTbb = true;
#else
inline constexpr bool kHaveTbb = false;
#endif
#ifdef WEFT_HAVE_ASIO
inline constexpr bool kHaveAsio = true;
#else
inline constexpr bool kHaveAsio = false;
#endif

inline constexpr harness::Peer kBuiltIn{};
inline constexpr harness::Peer kTbb{"libtbb-dev", kHaveTbb};
inline constexpr harness::Peer kAsio{"libboost-dev", kHaveAsio};

#ifdef WEFT_HAVE_TBB
// oneTBB caps its workers at the machine's parallelism unless told
// otherwise; the experiments ask for a thread count, so raise the cap for
// the run (`threads` workers plus the calling thread).
class TbbThreads {
 public:
  explicit TbbThreads(int threads)
      : control_(oneapi::tbb::global_control::max_allowed_parallelism,
                 static_cast<std::size_t>(std::max(threads + 1, oneapi::tbb::info::default_concurrency()))) {}

 private:
  oneapi::tbb::global_control control_;
};
#endif

}  // namespace weft::xp
