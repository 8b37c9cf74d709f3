// weft/xp/stats.hpp — the one summary of repeated samples that every
// measuring program of weft prints: the experiments' rows, weft_pickup and
// weft_submitters. (Google Benchmark's median, in bench/, is the same: the
// mean of the two middle samples for an even count.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace weft::xp {

struct Stats {
  double median = 0;
  double min = 0;
  double max = 0;
  int reps = 0;
};

// Median (the mean of the two middle samples for an even count), min and
// max of the samples; reps 0 and zeros for none.
inline Stats summarize(std::vector<double> samples) {
  Stats s;
  s.reps = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

// The q-quantile of `v` by nearest rank (q = 0.5: the median of the sample
// itself, not the mean of two); reorders `v`; T{} for none. One definition
// for every latency distribution an experiment reports (idle's start
// latency, aio's timer lateness).
template <class T>
T quantile(std::vector<T>& v, double q) {
  if (v.empty()) return T{};
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace weft::xp
