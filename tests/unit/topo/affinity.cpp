#include "weft/topo/affinity.hpp"

#include <gtest/gtest.h>

#include <latch>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace weft {
namespace {

// Runs `f` on a fresh thread so pinning it leaves the test runner's thread
// (and every later test) unpinned.
template <typename F>
void on_fresh_thread(F f) {
  std::thread t(f);
  t.join();
}

// The lowest CPU id the process may not use, or -1 if it may use them all.
int first_disallowed() {
  const CpuSet allowed = process_allowed_cpus();
  for (int cpu = 0; cpu < CpuSet::kMaxCpus; ++cpu) {
    if (!allowed.contains(cpu)) return cpu;
  }
  return -1;
}

// Calls `pin`, expects EINVAL, and checks the message names `cpus` and the
// allowed set.
template <typename F>
void expect_refused(F pin, const std::string& cpus) {
  const std::string allowed = process_allowed_cpus().to_string();
  try {
    pin();
    ADD_FAILURE() << "pinning to " << cpus << " was accepted";
  } catch (const std::system_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), std::errc::invalid_argument) << what;
    EXPECT_NE(what.find(cpus + ":"), std::string::npos) << what;
    EXPECT_NE(what.find("allowed set " + allowed), std::string::npos) << what;
  }
}

TEST(Affinity, ProcessAllowedSetMatchesTheAffinityAtStartup) {
  EXPECT_FALSE(process_allowed_cpus().empty());
  EXPECT_EQ(process_allowed_cpus(), this_thread_affinity());
}

TEST(Affinity, PinThisThreadThenCurrentCpuAgrees) {
  const CpuSet process = process_allowed_cpus();
  for (const int cpu : process) {
    on_fresh_thread([cpu, &process] {
      pin_this_thread(cpu);
      EXPECT_EQ(this_thread_affinity(), CpuSet{cpu});
      EXPECT_EQ(process_allowed_cpus(), process);  // a snapshot: pinning does not shrink it
      EXPECT_EQ(current_cpu(), cpu);
    });
  }
}

TEST(Affinity, PinnedThreadCanMoveToEveryAllowedCpu) {
  // Validation uses the process's set, not the thread's current mask, so
  // a pinned thread is not stuck where it is.
  on_fresh_thread([] {
    for (const int cpu : process_allowed_cpus()) {
      pin_this_thread(cpu);
      EXPECT_EQ(current_cpu(), cpu);
    }
    pin_this_thread(process_allowed_cpus());
    EXPECT_EQ(this_thread_affinity(), process_allowed_cpus());
  });
}

template <typename Thread>
void check_pin_other_thread() {
  for (const int cpu : process_allowed_cpus()) {
    std::latch pinned(1);
    int seen_cpu = -1;
    CpuSet seen_mask;
    Thread t([&] {
      pinned.wait();
      seen_cpu = current_cpu();
      seen_mask = this_thread_affinity();
    });
    pin_thread(t, cpu);
    pinned.count_down();
    t.join();
    EXPECT_EQ(seen_cpu, cpu);
    EXPECT_EQ(seen_mask, CpuSet{cpu});
  }
  std::latch go(1);
  CpuSet seen_mask;
  Thread t([&] {
    go.wait();
    seen_mask = this_thread_affinity();
  });
  pin_thread(t, process_allowed_cpus());
  go.count_down();
  t.join();
  EXPECT_EQ(seen_mask, process_allowed_cpus());
}

TEST(Affinity, PinStdThread) { check_pin_other_thread<std::thread>(); }
TEST(Affinity, PinStdJthread) { check_pin_other_thread<std::jthread>(); }

TEST(Affinity, PinningAThreadThatIsNotRunningIsRefused) {
  std::thread t;
  std::jthread j;
  EXPECT_THROW(pin_thread(t, process_allowed_cpus().first()), std::system_error);
  EXPECT_THROW(pin_thread(j, process_allowed_cpus()), std::system_error);
}

TEST(Affinity, DisallowedCpuIsRefusedNamingCpuAndAllowedSet) {
  const int cpu = first_disallowed();
  if (cpu < 0) GTEST_SKIP() << "every CPU id is allowed; there is no disallowed CPU to try";
  on_fresh_thread([cpu] {
    const CpuSet before = this_thread_affinity();
    expect_refused([cpu] { pin_this_thread(cpu); }, "CPU " + std::to_string(cpu));
    expect_refused([cpu] { pin_this_thread(CpuSet{cpu}); }, "CPU " + std::to_string(cpu));
    EXPECT_EQ(this_thread_affinity(), before);
  });
  std::thread t([] {});
  expect_refused([&] { pin_thread(t, cpu); }, "CPU " + std::to_string(cpu));
  t.join();
}

TEST(Affinity, HighestAndOutOfRangeIdsAreRefused) {
  constexpr int top = CpuSet::kMaxCpus - 1;
  if (!process_allowed_cpus().contains(top)) {
    expect_refused([] { pin_this_thread(top); }, "CPU " + std::to_string(top));
  }
  expect_refused([] { pin_this_thread(CpuSet::kMaxCpus); }, "CPU " + std::to_string(CpuSet::kMaxCpus));
  expect_refused([] { pin_this_thread(-1); }, "CPU -1");
}

TEST(Affinity, PartlyDisallowedSetIsRefusedNotNarrowed) {
  const int bad = first_disallowed();
  if (bad < 0) GTEST_SKIP() << "every CPU id is allowed; there is no disallowed CPU to try";
  const int good = process_allowed_cpus().first();
  on_fresh_thread([good, bad] {
    const CpuSet before = this_thread_affinity();
    // Only the offending CPU is named.
    expect_refused([&] { pin_this_thread(CpuSet{good, bad}); }, "CPU " + std::to_string(bad));
    EXPECT_EQ(this_thread_affinity(), before);
  });
}

TEST(Affinity, EmptySetIsRefused) {
  try {
    pin_this_thread(CpuSet{});
    ADD_FAILURE() << "pinning to the empty set was accepted";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), std::errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
}

TEST(Affinity, CurrentCpuIsAllowed) {
  const int cpu = current_cpu();
  EXPECT_TRUE(process_allowed_cpus().contains(cpu)) << cpu;
}

}  // namespace
}  // namespace weft
