// docs/guide/pipeline.md: read, transform in parallel, write in order, with
// a bound on the items in flight.
#include <weft/weft.hpp>

#include <atomic>
#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "expect.hpp"

namespace {

struct Row {
  std::size_t line_no;
  std::string text;
};

std::string shout(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

int main() {
  std::vector<std::string> lines;
  for (int i = 0; i < 10'000; ++i) lines.push_back("line " + std::to_string(i));

  weft::ThreadPool pool;
  std::size_t next = 0;
  std::vector<std::string> written;
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};

  weft::parallel_pipeline(pool, 8,                    // at most 8 items alive at once
      weft::stage<void, Row>(weft::StageMode::serial_in_order, [&](weft::FlowControl& fc) -> Row {
        if (next == lines.size()) fc.stop();         // no more input: this call's value is discarded
        if (fc.stopped()) return {};
        int now = in_flight.fetch_add(1) + 1;
        for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
        }
        return {next, lines[next++]};
      }),
      weft::stage<Row, Row>(weft::StageMode::parallel, [](Row r) {      // any number at once
        r.text = shout(std::move(r.text));
        return r;
      }),
      weft::stage<Row, void>(weft::StageMode::serial_in_order, [&](Row r) {   // one at a time, in input order
        expect(r.line_no == written.size(), "the in-order stage sees the lines in order");
        written.push_back(std::move(r.text));
        in_flight.fetch_sub(1);
      }));

  expect(written.size() == lines.size(), "every line went through every stage");
  expect(written[42] == "LINE 42", "the parallel stage ran on each line");
  expect(most.load() <= 8, "never more than 8 items in flight");

  long total = 0;
  int k = 0;
  weft::parallel_pipeline(4,                          // no pool: runs on weft::default_pool()
      weft::stage<void, int>(weft::StageMode::serial_in_order, [&](weft::FlowControl& fc) {
        if (k == 100) fc.stop();
        return k++;
      }),
      weft::stage<int, void>(weft::StageMode::serial_out_of_order, [&](int x) { total += x; }));
  expect(total == 4950, "the default-pool form ran every item");
}
