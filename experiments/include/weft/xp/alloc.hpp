// weft/xp/alloc.hpp — the allocator experiment of the "ders" article: the
// global allocator is hidden synchronisation.
//
// List benchmark (the article's): each of N threads does `rounds` rounds of
// push_back `size` ints into its own std::list, then pop_front them all.
// Every thread does the full work, so on P CPUs the ideal time is
// t(1) * max(1, N / P). Scalability is the article's t(N) / t(1) / N, per
// repetition (t(1) and t(N) of the same round of the interleaving): lower is
// better; ideal 1/N while N <= P (0.5 for 2 threads on 2 CPUs), 1/P beyond;
// 1.0 means the threads ran one after the other; above 1.0 they slowed each
// other down (the article's std::allocator reached ~3.2 on 2 CPUs).
//
// Producer/consumer: one thread allocates `pc_objects` 64-byte objects and
// passes each through a bounded single-producer/single-consumer ring (1024
// slots, spin then yield; the same ring for every allocator) to a second
// thread that frees it. Time from start to the last free, and peak RSS.
//
// Variants: glibc (std::allocator -> malloc), weft (PoolResource +
// PoolAllocator, one resource shared by the threads), pmr-unsync (an
// unsynchronized_pool_resource per thread), pmr-sync (one shared
// synchronized_pool_resource), mimalloc and jemalloc (std::allocator with the
// library LD_PRELOADed).
//
// Every measurement runs in its own child process (the weft binary re-executed
// through `child_command`), so each allocator starts from a clean heap and the
// peak RSS (VmHWM of the child's address space) is that variant's alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/xp/result.hpp"

namespace weft::xp {

// glibc, weft, pmr-unsync, pmr-sync, mimalloc, jemalloc
const std::vector<std::string>& alloc_variants();

struct AllocParams {
  int rounds = 1000;
  int size = 10'000;
  std::vector<int> threads;  // empty: 1, 2, 4 and available_parallelism(), deduplicated
  int reps = 3;
  std::int64_t pc_objects = 1'000'000;
  std::vector<std::string> variants = alloc_variants();
  // argv prefix that re-executes this program in child mode; the child spec
  // (see run_alloc_child) is appended as the last argument. argv[0] is the
  // path executed, e.g. {"/proc/self/exe", "alloc", "--internal-child"}.
  std::vector<std::string> child_command;
};

// The default thread counts: 1, 2, 4, available_parallelism(), sorted, unique.
std::vector<int> default_alloc_threads();

// Rows per variant and thread count: "seconds" (s), "peak_rss_mib" (MiB) and,
// for N > 1 when 1 is measured, "scalability" (t(N)/t(1)/N); per variant
// "pc_ms" and "pc_peak_rss_mib" (threads = 2). A variant that cannot run has
// rows with measured = false and a note saying why. extra "ratios": speed-ups
// computed from this run.
Result run_alloc(const AllocParams& p);

// Child mode: runs one measurement described by `spec` in this process and
// returns one JSON line ({"seconds":..,"peak_rss_mib":..,...}). Spec:
// "list <variant> <threads> <rounds> <size>" or "pc <variant> <objects>".
// Throws std::invalid_argument on a malformed spec.
std::string run_alloc_child(const std::string& spec);

// The shared object LD_PRELOADed for "mimalloc" / "jemalloc", or "" if not
// found in the usual library directories.
std::string find_preload_library(const std::string& variant);

}  // namespace weft::xp
