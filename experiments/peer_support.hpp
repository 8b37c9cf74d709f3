// What the pool experiments share about their peers (oneTBB, Boost.Asio):
// whether each was built in, the note a row carries when it was not, and
// how a oneTBB run gets the thread count it asks for.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

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

inline constexpr const char* kTbbMissing = "not built: libtbb-dev missing";
inline constexpr const char* kAsioMissing = "not built: libboost-dev missing";

// Between two timed runs: the previous variant's threads (oneTBB's workers
// spin for a while after their arena empties) must not eat into the next.
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

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
