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

// A variant table's runner that exists only where its peer was built: the
// runner where it was, null where it was not.
#ifdef WEFT_HAVE_TBB
#define WEFT_XP_IF_TBB(runner) runner
#else
#define WEFT_XP_IF_TBB(runner) nullptr
#endif
#ifdef WEFT_HAVE_ASIO
#define WEFT_XP_IF_ASIO(runner) runner
#else
#define WEFT_XP_IF_ASIO(runner) nullptr
#endif

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

// Runs `timed` (which returns seconds) in an arena of `threads` slots, this
// thread taking one of them, as weft's pool counts the caller's help.
template <class F>
double in_tbb_arena(int threads, F&& timed) {
  TbbThreads limit(threads);
  oneapi::tbb::task_arena arena(threads);
  arena.initialize();
  double s = 0;
  arena.execute([&] { s = timed(); });
  return s;
}
#endif

}  // namespace weft::xp
