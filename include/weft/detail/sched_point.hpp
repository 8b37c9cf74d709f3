// weft/detail/sched_point.hpp — a seam for forcing interleavings in tests.
//
// The concurrent structures call sched_point() just before each atomic
// operation of their protocols. In normal builds it is an empty inline
// function. Built with WEFT_SCHED_POINTS (the test-only library
// `weft_sched`), it calls a hook the test installs — tests/interleave/
// injects seeded random yields and pauses there, so races that need a thread
// to stall between two particular operations happen often instead of once
// in a billion runs (folly's DeterministicSchedule and crossbeam's loom
// play this role with a templated atomic; a hook at the same points costs
// the production code nothing and needs no second implementation).
#pragma once

namespace weft::detail {

#if defined(WEFT_SCHED_POINTS)
using SchedHook = void (*)() noexcept;
// Set before the threads under test start, cleared after they end.
extern SchedHook g_sched_hook;
inline void sched_point() noexcept {
  if (g_sched_hook != nullptr) g_sched_hook();
}
#else
inline void sched_point() noexcept {}
#endif

}  // namespace weft::detail
