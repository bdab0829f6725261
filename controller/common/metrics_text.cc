#include "controller/common/metrics_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpufed {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {
  std::sort(bounds_.begin(), bounds_.end());
}

void Histogram::Observe(double value) {
  // The first bucket whose upper bound holds the value (le is inclusive).
  size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  ++counts_[i];
  ++count_;
  sum_ += value;
}

void Histogram::Add(const Histogram& other) {
  if (other.bounds_ != bounds_) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
}

std::string MetricNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Integral values up to 2^53 print exactly and without an exponent.
  if (std::fabs(value) < 9007199254740992.0 && value == std::floor(value)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  // The shortest form that reads back as the same double, so 0.1 stays "0.1".
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, value);
    if (std::strtod(shorter, nullptr) == value) return shorter;
  }
  return buf;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void MetricsText::Family(std::string_view name, Type type, std::string_view help) {
  family_ = std::string(name);
  const char* type_name = type == Type::kCounter ? "counter" : type == Type::kGauge ? "gauge" : "histogram";
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  // HELP text escapes backslash and newline.
  for (char c : help) {
    if (c == '\\') {
      out_ += "\\\\";
    } else if (c == '\n') {
      out_ += "\\n";
    } else {
      out_ += c;
    }
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type_name;
  out_ += '\n';
}

void MetricsText::Series(std::string_view suffix, const MetricLabels& labels, const std::string* le, double value) {
  out_ += family_;
  out_ += suffix;
  if (!labels.empty() || le != nullptr) {
    out_ += '{';
    bool first = true;
    for (const auto& [name, v] : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += name;
      out_ += "=\"";
      out_ += EscapeLabelValue(v);
      out_ += '"';
    }
    if (le != nullptr) {
      if (!first) out_ += ',';
      out_ += "le=\"";
      out_ += *le;
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  out_ += MetricNumber(value);
  out_ += '\n';
}

void MetricsText::Sample(const MetricLabels& labels, double value) { Series("", labels, nullptr, value); }

void MetricsText::Observations(const MetricLabels& labels, const Histogram& h) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds().size(); ++i) {
    cumulative += h.counts()[i];
    const std::string le = MetricNumber(h.bounds()[i]);
    Series("_bucket", labels, &le, static_cast<double>(cumulative));
  }
  const std::string inf = "+Inf";
  Series("_bucket", labels, &inf, static_cast<double>(h.count()));
  Series("_sum", labels, nullptr, h.sum());
  Series("_count", labels, nullptr, static_cast<double>(h.count()));
}

}  // namespace gpufed
