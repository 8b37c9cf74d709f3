// The peers the pool experiments compare against (oneTBB, Boost.Asio):
// whether each was built in (a variant table's Peer), and how a oneTBB run
// gets the thread count it asks for.
#pragma once

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>

#include "weft/harness/run.hpp"

#ifdef WEFT_HAVE_OPENMP
#include <omp.h>
#endif

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

#ifdef WEFT_HAVE_OPENMP
inline constexpr bool kHaveOpenMp = true;
#else
inline constexpr bool kHaveOpenMp = false;
#endif

inline constexpr harness::Peer kBuiltIn{};
inline constexpr harness::Peer kTbb{"libtbb-dev", kHaveTbb};
inline constexpr harness::Peer kAsio{"libboost-dev", kHaveAsio};
// OpenMP ships with g++ (libgomp); clang's runtime is Debian's libomp-dev.
inline constexpr harness::Peer kOpenMp{"OpenMP (libgomp with g++, libomp-dev with clang)", kHaveOpenMp};

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
#ifdef WEFT_HAVE_OPENMP
#define WEFT_XP_IF_OPENMP(runner) runner
#else
#define WEFT_XP_IF_OPENMP(runner) nullptr
#endif

// The variants of an experiment that sets a serial run, weft, oneTBB and
// OpenMP side by side (pass the peers' runners through WEFT_XP_IF_TBB and
// WEFT_XP_IF_OPENMP).
template <class RunFn>
constexpr std::array<harness::Variant<RunFn>, 4> serial_weft_tbb_openmp(RunFn serial, RunFn weft, RunFn tbb,
                                                                       RunFn openmp) {
  return {{{"serial", kBuiltIn, false, serial},
           {"weft", kBuiltIn, true, weft},
           {"tbb", kTbb, true, tbb},
           {"openmp", kOpenMp, true, openmp}}};
}

// The OpenMP teams a unit's runs had (omp_team() below adds each): their
// sizes and the CPUs their threads were on when a region began (bit c for
// CPU c < 64), for the row's note. Defined in every build, so that the
// experiments' run records need no #ifdef.
struct OmpTeamSeen {
  int min_size = 0, max_size = 0;
  std::uint64_t cpus = 0;
  // The team's binding policy (omp_get_proc_bind() inside the region):
  // "unbound" unless the user set OMP_PROC_BIND (and OMP_PLACES).
  const char* bind = "unbound";
  void add(int size, std::uint64_t team_cpus) {
    min_size = min_size == 0 ? size : std::min(min_size, size);
    max_size = std::max(max_size, size);
    cpus |= team_cpus;
  }
  // `note` with where the team ran appended; unchanged if no team ran.
  std::string note(const std::string& note) const {
    if (max_size == 0) return note;
    std::ostringstream s;
    if (!note.empty()) s << note << "; ";
    s << "team of " << min_size;
    if (max_size != min_size) s << '-' << max_size;
    s << " threads, " << bind << ", on CPUs";
    for (int c = 0; c < 64; ++c)
      if ((cpus >> c) & 1) s << ' ' << c;
    return s.str();
  }
};

#ifdef WEFT_HAVE_OPENMP
// An OpenMP team of `threads` threads, the calling thread its master, as an
// OpenMP user runs one: `omp parallel num_threads(threads)`, the runtime's
// settings from the environment otherwise (without OMP_PROC_BIND the
// threads are not bound; libgomp's idle threads spin a while before they
// sleep, which the harness's 10 ms settle between runs outlasts). `timed` runs on one thread
// of the team (`omp single`), the others take its tasks; returns its result.
// The team's size and where it ran are added to `seen`.
template <class F>
double omp_team(int threads, F&& timed, OmpTeamSeen& seen) {
  double s = 0;
  std::atomic<std::uint64_t> cpus{0};
  std::atomic<int> size{0};
#pragma omp parallel num_threads(threads)
  {
    const int cpu = sched_getcpu();
    // relaxed: read after the region's closing barrier, which orders them.
    if (cpu >= 0 && cpu < 64) cpus.fetch_or(std::uint64_t{1} << cpu, std::memory_order_relaxed);
    size.fetch_add(1, std::memory_order_relaxed);
#pragma omp single
    {
      switch (omp_get_proc_bind()) {
        case omp_proc_bind_false: seen.bind = "unbound"; break;
        case omp_proc_bind_true: seen.bind = "bound (OMP_PROC_BIND=true)"; break;
        case omp_proc_bind_close: seen.bind = "bound close"; break;
        case omp_proc_bind_spread: seen.bind = "bound spread"; break;
        default: seen.bind = "bound"; break;
      }
      s = timed();
    }
  }
  seen.add(size.load(std::memory_order_relaxed), cpus.load(std::memory_order_relaxed));
  return s;
}
#endif

#ifdef WEFT_HAVE_OPENMP
// Wakes a team of `threads` with an empty region right before a timed
// call, as the experiments start weft's pool before timing it, and adds
// where it ran to `seen`. A libgomp team whose threads went to sleep (their
// spin, a few ms, ran out) starts a region with its master spinning at the
// barrier for a thread the kernel may queue behind it: a sum of 2M doubles
// took 5.9 ms median after a 10 ms pause against 0.56 ms back to back, on
// a 2-vCPU Intel Xeon under KVM.
inline void omp_wake_team(int threads, OmpTeamSeen& seen) {
  omp_team(threads, [] { return 0.0; }, seen);
}
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
