// weft/xp/print.hpp — how a result reads on a terminal: the machine header,
// the rows as a table, and the pieces experiments build their own tables
// from (their registration's `print`).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "weft/xp/result.hpp"

namespace weft::xp {

// The machine context as google/benchmark prints it, first thing.
void print_machine_header();
// A generic table of a result's rows.
void print_rows(const Result& r);

// Prints a result: one JSON object on stdout with `json`; otherwise the
// machine context, the parameters, the rows as a table, then `extra`
// (an experiment's own tables) and the notes.
void emit(const Result& r, bool json, const std::string& title, const std::function<void()>& extra = {});

// "weft / tbb time" for each measured weft "ms" row that has a tbb row of
// the same thread count and qualifiers (`qualify` adds the row's to a key);
// `label` names the pair.
void print_weft_over_tbb(const Result& r, const std::function<Key(Key, const Row&)>& qualify,
                         const std::function<std::string(const Row&)>& label);
// The same, paired by workload: "<workload, `width` wide> <n> <noun>".
void print_weft_over_tbb_per_workload(const Result& r, int width, const char* noun = "workers");

// An experiment's "ratios" list (extra.ratios: what, value, goal) under
// `heading`, names padded to `width`.
void print_ratios(const Result& r, const std::string& heading, int width);
// print_ratios under "Goals (at kGoalWorkers workers):".
void print_goals(const Result& r, int width);

// "The article (<source>): method: <method>" from the result's published
// figures (`by` and `method` name their keys); false when it has none.
bool print_article(const Result& r, const char* by, const char* method);

// The rows with a label written beside the variant ("busy [fine]"): the
// generic table has no column for it.
Result label_variants(Result r, std::optional<std::string> Labels::*label);

}  // namespace weft::xp
