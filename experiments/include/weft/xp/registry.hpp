// weft/xp/registry.hpp — the one list of weft's experiments, in the report
// page's order: what each is called, which article it reproduces, how long it
// takes at each size level and which figures it feeds. The CLI lists its
// subcommands from it, `weft report` plans and estimates from it, and it is
// exported into results.json ("registry") for the page and the plotter.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::xp {

// How big a run is: `weft report --quick`, the default, `--full`.
enum class Level { quick, standard, full };
inline constexpr std::array<Level, 3> kLevels{Level::quick, Level::standard, Level::full};

// "quick", "default", "full": the names results.json and the CLI use.
const char* to_string(Level level) noexcept;

struct Experiment {
  std::string name;                  // the subcommand: "ring"
  std::string article;               // a key of data/published.json; empty: weft's own
  std::string title;                 // a heading: "Token ring: inter-thread signalling latency"
  std::string summary;               // one line: what it measures (the subcommand's help)
  std::array<double, 3> seconds{};   // estimated run time per Level on 2 CPUs
  std::vector<std::string> figures;  // the plotter's figure ids
  // The subcommand's arguments per Level: its sizes, parsed and checked by
  // the subcommand itself (empty: its defaults).
  std::array<std::string, 3> args{};
  // The metrics the README's results table shows, one line per workload
  // (`weft report --markdown-from`); empty: the table leaves it out.
  std::vector<std::string> headlines{};
  double seconds_at(Level level) const noexcept { return seconds[static_cast<std::size_t>(level)]; }
  const std::string& args_at(Level level) const noexcept { return args[static_cast<std::size_t>(level)]; }
};

// Every experiment, in page order.
const std::vector<Experiment>& experiments();

// The entry named `name`, or null.
const Experiment* find_experiment(std::string_view name);

// results.json's "registry": [{name, article (or null), title, summary,
// seconds: {quick, default, full}, args: {quick, default, full}, figures,
// headlines}],
// in page order.
nlohmann::json registry_json();

}  // namespace weft::xp
