#pragma once
// Writes the Prometheus text exposition format (version 0.0.4): one HELP and TYPE per
// family, then its samples. The one place gpufed's /metrics text is spelt, so label
// values are always escaped and histograms always have cumulative buckets, +Inf, _sum
// and _count (what `promtool check metrics` holds a scrape to).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpufed {

// Label name/value pairs of one sample, in the order written.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// A histogram's observations: upper bounds (ascending; +Inf is implied), per-bucket
// counts (bounds.size() + 1, the last for values above every bound), sum and count.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // Adds another histogram's observations; its bounds must be the same.
  void Add(const Histogram& other);
  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket (not cumulative) counts; the last is the +Inf overflow.
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

class MetricsText {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  // Starts a family. `name` must follow Prometheus conventions (snake_case, base units,
  // counters ending in _total); `help` says what it measures.
  void Family(std::string_view name, Type type, std::string_view help);
  // A sample of the current family (counter or gauge).
  void Sample(const MetricLabels& labels, double value);
  void Sample(double value) { Sample({}, value); }
  // The current (histogram) family's series for `labels`.
  void Observations(const MetricLabels& labels, const Histogram& histogram);
  // Appends text another writer produced (a module's own families).
  void Raw(std::string_view text) { out_.append(text); }
  const std::string& str() const { return out_; }

 private:
  void Series(std::string_view suffix, const MetricLabels& labels, const std::string* le, double value);
  std::string out_;
  std::string family_;
};

// `value` as the exposition format writes numbers: integers without a fraction, other
// values with up to 17 significant digits, +Inf/-Inf/NaN spelt as Prometheus reads them.
std::string MetricNumber(double value);
// A label value with backslash, double quote and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace gpufed
