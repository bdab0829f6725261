#include "controller/common/metrics_text.h"

#include <gtest/gtest.h>

namespace gpufed {
namespace {

TEST(MetricsText, NumbersReadBackExactlyAndIntegersHaveNoFraction) {
  EXPECT_EQ(MetricNumber(0), "0");
  EXPECT_EQ(MetricNumber(42), "42");
  EXPECT_EQ(MetricNumber(-3), "-3");
  EXPECT_EQ(MetricNumber(0.1), "0.1");
  EXPECT_EQ(MetricNumber(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(MetricNumber(2.5e-5), "2.5e-05");
  EXPECT_EQ(MetricNumber(1e300), "1e+300");
  EXPECT_EQ(MetricNumber(1.0 / 0.0), "+Inf");
}

TEST(MetricsText, LabelValuesAreEscaped) {
  MetricsText m;
  m.Family("gpufed_x", MetricsText::Type::kGauge, "A \\ help\nline.");
  m.Sample({{"tenant", "a\"b\\c\nd"}}, 1);
  EXPECT_EQ(m.str(),
            "# HELP gpufed_x A \\\\ help\\nline.\n# TYPE gpufed_x gauge\n"
            "gpufed_x{tenant=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsText, HistogramsAreCumulativeWithInfSumAndCount) {
  Histogram h({1, 0.5, 5});  // sorted on construction
  h.Observe(0.5);            // le is inclusive
  h.Observe(0.7);
  h.Observe(9);
  MetricsText m;
  m.Family("gpufed_wait_seconds", MetricsText::Type::kHistogram, "Waits.");
  m.Observations({{"tenant", "t"}}, h);
  EXPECT_EQ(m.str(),
            "# HELP gpufed_wait_seconds Waits.\n# TYPE gpufed_wait_seconds histogram\n"
            "gpufed_wait_seconds_bucket{tenant=\"t\",le=\"0.5\"} 1\n"
            "gpufed_wait_seconds_bucket{tenant=\"t\",le=\"1\"} 2\n"
            "gpufed_wait_seconds_bucket{tenant=\"t\",le=\"5\"} 2\n"
            "gpufed_wait_seconds_bucket{tenant=\"t\",le=\"+Inf\"} 3\n"
            "gpufed_wait_seconds_sum{tenant=\"t\"} 10.2\n"
            "gpufed_wait_seconds_count{tenant=\"t\"} 3\n");
  EXPECT_EQ(h.counts(), (std::vector<uint64_t>{1, 1, 0, 1}));
}

}  // namespace
}  // namespace gpufed
