// The README's results table, generated from a report's results.json
// (`weft report --markdown-from FILE`), so the figures it shows are always
// those of a run on record, stamped with its machine and commit.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace weft::cli {

// Markdown: a stamp line (CPU model, CPUs, compiler, commit, date, level),
// a table with one line per headline metric and workload of each
// experiment (xp::Experiment::headlines; weft's variants with median and
// min-max, the peers' medians), and a table of every goal the run checked.
// Throws std::runtime_error naming what results.json lacks.
std::string results_markdown(const nlohmann::json& results);

// A ratio's verdict: "met" or "missed" by its goal ("met" as the run stated
// it, else judged from the goal), "–" when it has no goal it can judge.
std::string verdict(const nlohmann::json& ratio);

}  // namespace weft::cli
