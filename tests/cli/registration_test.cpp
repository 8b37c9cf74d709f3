// One registration per experiment (weft/xp/registry.hpp): the options, their
// checks, their defaults in --help and the report's sizes all come from it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "weft/xp/registry.hpp"

namespace weft {
namespace {

using test::CliRun;
using test::expect_help_lists;
using test::run_cli;

// A made-up experiment, built locally by each test and never registered.
struct ToyParams {
  int n = 30;
  long long items = 1000;
  double seconds = 1.5;
  std::vector<int> workers;
  std::vector<std::string> variants = {"a", "b"};
  int reps = 5;
};

const std::vector<std::string>& toy_variants() {
  static const std::vector<std::string> v{"a", "b"};
  return v;
}

xp::Spec<ToyParams> toy_spec() {
  return {
      .name = "toy",
      .page = 1000,
      .seconds = {1, 2, 3},
      .title = "A toy",
      .summary = "A toy experiment",
      .options = {xp::integer("--n", &ToyParams::n, "The size", 2, 40),
                  xp::integer("--items,-i", &ToyParams::items, "Items", 1, 1'000'000),
                  xp::real("--seconds", &ToyParams::seconds, "How long", 0, 60, true),
                  xp::counts("--workers,-w", &ToyParams::workers, "Worker counts", "available_parallelism"),
                  xp::variants(&ToyParams::variants, toy_variants), xp::reps(&ToyParams::reps)},
      .sizes = {[](ToyParams& p) {
                  p.n = 25;
                  p.reps = 3;
                },
                nullptr,
                [](ToyParams& p) {
                  p.workers = {1, 2};
                  p.variants = {"b"};
                  p.seconds = 0.25;
                }},
      .check =
          [](const ToyParams& p) {
            if (p.items < p.n) throw xp::BadParam("--items must be at least --n");
          },
      .run =
          [](const ToyParams& p) {
            xp::Result r;
            r.experiment = "toy";
            // What the run resolved: its own record of a key wins.
            r.params = {{"n", 2 * p.n}, {"workers_resolved", !p.workers.empty()}};
            return r;
          },
      .heading = [](const ToyParams& p) {
        return "toy n=" + std::to_string(p.n) + " items=" + std::to_string(p.items) +
               " seconds=" + std::to_string(p.seconds) + " workers=" + std::to_string(p.workers.size()) +
               " variants=" + std::to_string(p.variants.size()) + " reps=" + std::to_string(p.reps);
      },
  };
}

std::vector<xp::Given> split_args(const std::string& args) {
  std::vector<xp::Given> out;
  std::size_t i = 0;
  while (i < args.size()) {
    const std::size_t flag_end = args.find(' ', i);
    const std::size_t value_end = args.find(' ', flag_end + 1);
    out.push_back({args.substr(i, flag_end - i), {args.substr(flag_end + 1, value_end - flag_end - 1)}});
    i = value_end == std::string::npos ? args.size() : value_end + 1;
  }
  return out;
}

TEST(Registration, DefaultsComeFromTheParameterStructAndShowInTheHelp) {
  const xp::Experiment e(toy_spec());
  EXPECT_EQ(e.prepare(std::nullopt).heading, "toy n=30 items=1000 seconds=1.500000 workers=0 variants=2 reps=5");
  ASSERT_EQ(e.options().size(), 6U);
  EXPECT_EQ(e.options()[0].help, "The size (default 30)");
  EXPECT_EQ(e.options()[2].help, "How long (default 1.5)");
  EXPECT_EQ(e.options()[3].help, "Worker counts, comma list (default available_parallelism)");
  EXPECT_EQ(e.options()[4].help, "Variants, comma list: a, b (default all)");
  EXPECT_TRUE(e.options()[3].list);
  EXPECT_FALSE(e.options()[0].list);
}

TEST(Registration, SizesAreTypedAndTheirArgumentsAreDerived) {
  const xp::Experiment e(toy_spec());
  EXPECT_EQ(e.args_at(xp::Level::quick), "--n 25 --reps 3");
  EXPECT_EQ(e.args_at(xp::Level::standard), "");
  EXPECT_EQ(e.args_at(xp::Level::full), "--seconds 0.25 --workers 1,2 --variant b");
  // The derived arguments give the same run as the level itself.
  for (xp::Level level : xp::kLevels)
    EXPECT_EQ(e.prepare(std::nullopt, split_args(e.args_at(level))).heading, e.prepare(level).heading)
        << xp::to_string(level);
  // Options given on top of a level's sizes win.
  EXPECT_EQ(e.prepare(xp::Level::quick, {{"--n", {"40"}}}).heading,
            "toy n=40 items=1000 seconds=1.500000 workers=0 variants=2 reps=3");
}

TEST(Registration, ParamsRecordEveryOptionUnlessTheRunRecordedItsOwnValue) {
  const xp::Experiment e(toy_spec());
  const nlohmann::json params = e.prepare(xp::Level::full, {{"--items", {"77"}}}).run().params;
  EXPECT_EQ(params.at("n"), 60) << "the run's own value, not the option's 30: " << params.dump();
  EXPECT_EQ(params.at("items"), 77) << params.dump();
  EXPECT_EQ(params.at("seconds"), 0.25) << params.dump();
  EXPECT_EQ(params.at("workers"), nlohmann::json({1, 2})) << params.dump();
  EXPECT_EQ(params.at("variants"), nlohmann::json({"b"})) << "a list of names under its plural: " << params.dump();
  EXPECT_EQ(params.at("reps"), 5) << params.dump();
  EXPECT_EQ(params.at("workers_resolved"), true) << params.dump();
  EXPECT_EQ(params.size(), 7U) << params.dump();
  EXPECT_EQ(xp::reg::param_key("--fib-n"), "fib_n");
  EXPECT_EQ(xp::reg::param_key("--tasks,-n"), "tasks");
  EXPECT_EQ(xp::reg::param_key("--flag,-f", true), "flags");
  EXPECT_EQ(xp::reg::param_key("--granularity", true), "granularities");
  EXPECT_EQ(xp::reg::param_key("--workers", true), "workers");
}

TEST(Registration, BadValuesAreRefusedNamingTheOption) {
  const xp::Experiment e(toy_spec());
  const auto error = [&](std::vector<xp::Given> given) -> std::string {
    try {
      e.prepare(std::nullopt, given);
    } catch (const xp::BadParam& x) {
      return x.what();
    }
    return "accepted";
  };
  EXPECT_EQ(error({{"--n", {"1"}}}), "--n must be at least 2, got 1");
  EXPECT_EQ(error({{"--n", {"41"}}}), "--n must be at most 40, got 41");
  EXPECT_EQ(error({{"--n", {"x"}}}), "--n: 'x' is not an integer");
  EXPECT_EQ(error({{"--n", {"7x"}}}), "--n: '7x' is not an integer");
  EXPECT_EQ(error({{"--n", {"99999999999999999999"}}}), "--n: '99999999999999999999' is out of range");
  EXPECT_EQ(error({{"--seconds", {"0"}}}), "--seconds must be in (0, 60], got 0");
  EXPECT_EQ(error({{"--seconds", {"nan"}}}), "--seconds: 'nan' is not a number");
  EXPECT_EQ(error({{"--workers", {"1,,2"}}}), "--workers: an empty worker count in '1,,2'");
  EXPECT_EQ(error({{"--workers", {"0"}}}), "--workers must be at least 1, got 0");
  EXPECT_EQ(error({{"--variant", {"c"}}}), "unknown variant 'c' (valid: a, b)");
  EXPECT_EQ(error({{"--reps", {"0"}}}), "--reps must be at least 1, got 0");
  EXPECT_EQ(error({{"--items", {"10"}}, {"--n", {"20"}}}), "--items must be at least --n");
  EXPECT_EQ(error({{"--nope", {"1"}}}), "toy has no option --nope");
  EXPECT_EQ(error({{"--items", {"40"}}, {"--n", {"20"}}, {"--workers", {"2,1,2"}}}), "accepted");
}

TEST(Registration, EveryRegisteredExperimentPreparesAtEveryLevelFromItsOwnArguments) {
  ASSERT_FALSE(xp::experiments().empty());
  std::set<int> pages;
  for (const xp::Experiment& e : xp::experiments()) {
    EXPECT_TRUE(pages.insert(e.page()).second) << e.name() << " shares its page place";
    EXPECT_FALSE(e.title().empty()) << e.name();
    EXPECT_NO_THROW(e.prepare(std::nullopt)) << e.name();
    for (xp::Level level : xp::kLevels) {
      std::optional<xp::Prepared> at_level;
      EXPECT_NO_THROW(at_level = e.prepare(level)) << e.name() << " " << xp::to_string(level);
      if (!at_level) continue;
      EXPECT_FALSE(at_level->heading.empty()) << e.name() << " " << xp::to_string(level);
      // What results.json records for a level (args_at) prepares the same
      // run again: every option ends with the same value.
      const xp::Prepared again = e.prepare(std::nullopt, split_args(e.args_at(level)));
      EXPECT_EQ(again.settings, at_level->settings) << e.name() << " " << xp::to_string(level) << ": " << e.args_at(level);
      EXPECT_EQ(again.heading, at_level->heading) << e.name();
    }
    // The levels differ in size: quick and full do not prepare the same run.
    EXPECT_NE(e.prepare(xp::Level::quick).settings, e.prepare(xp::Level::full).settings) << e.name();
    for (const xp::OptionInfo& o : e.options()) {
      EXPECT_EQ(o.help.find("(default", o.help.find("(default") + 1), std::string::npos)
          << e.name() << " " << o.flags << " says its default twice: " << o.help;
    }
  }
}

// What a user reads is the registration: every option registered shows in
// its subcommand's --help, and the hidden --internal-child in none.
TEST(Registration, EverySubcommandsHelpListsItsOptions) {
  for (const xp::Experiment& e : xp::experiments()) {
    std::vector<std::string> flags;
    for (const xp::OptionInfo& o : e.options()) flags.push_back(xp::reg::long_name(o.flags));
    EXPECT_FALSE(flags.empty()) << e.name();
    expect_help_lists(e.name(), flags);
  }
}

TEST(Registration, TheSubcommandsHelpShowsEachOptionsDefault) {
  const CliRun help = run_cli("fib --help");
  ASSERT_EQ(help.status, 0) << help;
  EXPECT_NE(help.out.find("(default 30)"), std::string::npos) << help;
}

}  // namespace
}  // namespace weft
