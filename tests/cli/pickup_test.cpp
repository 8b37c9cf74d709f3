// weft_pickup (experiments/pickup/): its options, its refusals, and that
// --pin apart keeps the submitter off the workers' CPUs. Figures are not
// checked: speed is measured, never asserted.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"
#include "weft/topo/affinity.hpp"

namespace {

using weft::test::CliRun;

CliRun pickup(const std::string& args) { return weft::test::run_shell(std::string(WEFT_PICKUP_PATH) + " " + args); }

// Lines of the per-rep table: they start with the rep number.
int rep_lines(const std::string& out) {
  int n = 0;
  for (std::size_t at = 0; at < out.size();) {
    const std::size_t end = out.find('\n', at);
    const std::string line = out.substr(at, end == std::string::npos ? std::string::npos : end - at);
    const std::size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line[first] >= '1' && line[first] <= '9' && line.find(" ns ") != std::string::npos)
      ++n;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

TEST(Pickup, PrintsOneLinePerRepAndTheMedian) {
  const CliRun r = pickup("--reps 3 --round-trips 200 --hops 1000");
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(rep_lines(r.out), 3) << r;
  EXPECT_NE(r.out.find("round trip / bare hop: median"), std::string::npos) << r;
  EXPECT_EQ(r.out.find("pinned"), std::string::npos) << r;
}

TEST(Pickup, PinApartRunsTheSubmitterOffTheWorkersCpus) {
  if (weft::this_thread_affinity().count() < 2) GTEST_SKIP() << "needs 2 allowed CPUs";
  // The program checks where each thread ran and exits 1 if the pinning
  // did not hold.
  const CliRun r = pickup("--reps 2 --round-trips 200 --hops 1000 --pin apart --workers 3");
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_EQ(rep_lines(r.out), 2) << r;
  EXPECT_NE(r.out.find("the submitter pinned to the first allowed CPU"), std::string::npos) << r;
}

TEST(Pickup, PinApartOnOneCpuIsRefused) {
  const weft::CpuSet allowed = weft::this_thread_affinity();
  // The child inherits this thread's CPUs.
  weft::pin_this_thread(allowed.first());
  const CliRun r = pickup("--reps 1 --pin apart");
  weft::pin_this_thread(allowed);
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_NE(r.err.find("--pin apart needs at least 2 allowed CPUs"), std::string::npos) << r;
}

TEST(Pickup, BadOptionsNameTheProblem) {
  struct Case {
    const char* args;
    const char* says;
  } cases[] = {
      {"--pin spread", "--pin wants 'none' or 'apart', got 'spread'"},
      {"--reps 0", "--reps wants an integer from 1 to 1000, got '0'"},
      {"--workers x", "--workers wants an integer"},
      {"--bogus 1", "unknown option --bogus"},
      {"--reps", "--reps needs a value"},
  };
  for (const Case& c : cases) {
    const CliRun r = pickup(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r;
    EXPECT_TRUE(r.out.empty()) << c.args << "\n" << r;
  }
}

}  // namespace
