// An exception's type and message checked in one expression, instead of a
// try / "no exception" / catch block at every test that reads what():
//
//   EXPECT_TRUE(weft::test::throws_what<std::runtime_error>([&] { f.get(); }, "boom"));
//   EXPECT_TRUE(weft::test::throws_containing<std::invalid_argument>([&] { (void)g.run(pool); },
//                                                                    {"'a' -> 'b' -> 'a'", "'cyclic'"}));
//
// Each passes when the call throws an E whose what() is `want` (contains
// every one of `parts`), and otherwise fails saying what was thrown (and
// each part it lacks), or that nothing was. An exception of another type
// passes through, as it would out of a catch of E alone: gtest reports it
// and ends the test.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string_view>
#include <utility>

namespace weft::test {

template <class E, class F>
::testing::AssertionResult throws_what(F&& call, std::string_view want) {
  try {
    std::forward<F>(call)();
  } catch (const E& e) {
    const std::string_view what = e.what();
    if (what == want) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "what() is \"" << what << "\", not \"" << want << '"';
  }
  return ::testing::AssertionFailure() << "no exception";
}

template <class E, class F>
::testing::AssertionResult throws_containing(F&& call, std::initializer_list<std::string_view> parts) {
  try {
    std::forward<F>(call)();
  } catch (const E& e) {
    const std::string_view what = e.what();
    ::testing::AssertionResult result = ::testing::AssertionSuccess();
    for (const std::string_view part : parts)
      if (what.find(part) == std::string_view::npos) {
        if (result) result = ::testing::AssertionFailure() << "what() is \"" << what << '"';
        result << ", without \"" << part << '"';
      }
    return result;
  }
  return ::testing::AssertionFailure() << "no exception";
}

}  // namespace weft::test
