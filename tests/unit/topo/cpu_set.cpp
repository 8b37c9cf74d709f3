#include "weft/topo/cpu_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <ranges>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft {
namespace {

static_assert(std::ranges::input_range<const CpuSet>, "CpuSet works with range algorithms");

TEST(CpuSet, ParsesKernelListSyntax) {
  const CpuSet s = CpuSet::parse("0-3,8");
  EXPECT_EQ(s.count(), 5);
  EXPECT_EQ(s.to_vector(), (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(s, (CpuSet{0, 1, 2, 3, 8}));
  EXPECT_EQ(s.to_string(), "0-3,8");
}

TEST(CpuSet, CanonicalStringsRoundTrip) {
  for (const std::string text : {"", "0", "7", "0-1", "0,2", "0-3,8,10-11", "1023", "0-1023", "1,3,5-6,1000-1023"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(CpuSet::parse(text).to_string(), text);
    EXPECT_EQ(CpuSet::parse(CpuSet::parse(text).to_string()), CpuSet::parse(text));
  }
}

TEST(CpuSet, NormalisesWhitespaceOrderAndOverlap) {
  EXPECT_EQ(CpuSet::parse(" 0 - 2 , 5 \n").to_string(), "0-2,5");
  EXPECT_EQ(CpuSet::parse("3,1,2").to_string(), "1-3");
  EXPECT_EQ(CpuSet::parse("0-2,1-3").to_string(), "0-3");
  EXPECT_EQ(CpuSet::parse("4-4").to_string(), "4");
  EXPECT_TRUE(CpuSet::parse("  \n").empty());
}

TEST(CpuSet, RejectsBadInputNamingTheItem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a", "'a'"},        {"1-", "'1-'"},         {"-1", "'-1'"},          {"3-1", "'3-1'"},
      {"1,,2", "''"},      {",", "''"},            {"1024", "'1024'"},      {"0-1024", "'0-1024'"},
      {"1.5", "'1.5'"},    {"2x", "'2x'"},         {"0,99999999999", "'99999999999'"},
      {"1-2-3", "'1-2-3'"}, {"0:2", "'0:2'"},
  };
  for (const auto& [text, item] : cases) {
    SCOPED_TRACE(text);
    try {
      (void)CpuSet::parse(text);
      ADD_FAILURE() << "parse accepted '" << text << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(item), std::string::npos) << e.what();
    }
  }
}

TEST(CpuSet, AddRejectsIdsOutsideCapacity) {
  CpuSet s;
  EXPECT_THROW(s.add(-1), std::out_of_range);
  try {
    s.add(CpuSet::kMaxCpus);
    ADD_FAILURE() << "add(kMaxCpus) did not throw";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(CpuSet::kMaxCpus)), std::string::npos) << e.what();
  }
  EXPECT_THROW((CpuSet{0, 5000}), std::out_of_range);
  EXPECT_TRUE(s.empty());
}

TEST(CpuSet, AddRemoveContains) {
  CpuSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.first(), -1);
  s.add(5);
  s.add(CpuSet::kMaxCpus - 1);
  s.add(5);
  EXPECT_EQ(s.count(), 2);
  EXPECT_TRUE(s.contains(5));
  EXPECT_TRUE(s.contains(CpuSet::kMaxCpus - 1));
  EXPECT_FALSE(s.contains(4));
  EXPECT_FALSE(s.contains(-1));
  EXPECT_FALSE(s.contains(CpuSet::kMaxCpus));
  EXPECT_EQ(s.first(), 5);
  s.remove(5);
  s.remove(-3);                 // ids the set cannot hold are simply absent
  s.remove(CpuSet::kMaxCpus);
  EXPECT_EQ(s.to_vector(), (std::vector<int>{CpuSet::kMaxCpus - 1}));
}

TEST(CpuSet, IteratesAscending) {
  const CpuSet s{9, 1, 1023, 0, 64};
  std::vector<int> seen;
  for (const int cpu : s) seen.push_back(cpu);
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 9, 64, 1023}));
  EXPECT_EQ(std::distance(s.begin(), s.end()), 5);
  EXPECT_TRUE(std::ranges::is_sorted(s));
  const CpuSet empty;
  EXPECT_EQ(empty.begin(), empty.end());
}

TEST(CpuSet, SetOperators) {
  const CpuSet a = CpuSet::parse("0-3");
  const CpuSet b = CpuSet::parse("2-5");
  EXPECT_EQ((a | b).to_string(), "0-5");
  EXPECT_EQ((a & b).to_string(), "2-3");
  EXPECT_EQ((a - b).to_string(), "0-1");
  EXPECT_EQ((b - a).to_string(), "4-5");
  EXPECT_NE(a, b);
  CpuSet c = a;
  c -= a;
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace weft
