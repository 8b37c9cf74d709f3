// The page `weft report` writes: one self-contained index.html built from
// the report's results.json content and the plotter's manifest.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace weft::cli {

// What became of the figures.
struct PlotOutcome {
  bool drawn = false;            // the plotter ran and wrote its manifest
  std::string failure;           // why not, when !drawn
  nlohmann::json manifest;       // plots.json: {"drawn": [...], "skipped": [...]}
};

// Text made safe for HTML element content and attribute values.
std::string html_escape(std::string_view text);
// RFC 4648 base64, for the PNGs embedded as data: URIs.
std::string base64(std::string_view bytes);

// The whole page. `results` is what results.json holds: its "registry"
// decides the sections and their order (experiments grouped by article),
// its "published" the articles' headings, claims and figures. The PNGs the
// manifest lists are read from `dir` and embedded, each in the section its
// manifest entry names (an article key, or "weft-own").
std::string render_report_html(const nlohmann::json& results, const PlotOutcome& plots, const std::string& dir);

}  // namespace weft::cli
