#include "bench/replay/reference.h"

#include <charconv>
#include <cmath>

#include "bench/replay/openb_trace.h"

namespace gpufed::replay {

std::string OurPolicyName(const std::string& sc_policy) {
  const size_t dash = sc_policy.find('-');
  const std::string label = dash == std::string::npos ? sc_policy : sc_policy.substr(dash + 1);
  if (label == "Random") return "random";
  if (label == "DotProd") return "dotprod";
  if (label == "GpuClustering") return "clustering";
  if (label == "GpuPacking") return "packing";
  if (label == "BestFit") return "bestfit";
  if (label == "FGD") return "fgd";
  return "";
}

Result<ReferenceTable> ReadReference(const std::string& path) {
  auto rows = ReadCsv(path, {"workload", "sc_policy", "stat"});
  if (!rows.ok()) return rows.status();
  static constexpr std::string_view kPrefix = "alloc_pct_at_arrived_";
  ReferenceTable table;
  for (const CsvRow& row : *rows) {
    if (row.cells.at("stat") != "mean") continue;
    const std::string policy = OurPolicyName(row.cells.at("sc_policy"));
    if (policy.empty()) continue;
    auto& levels = table[row.cells.at("workload")][policy];
    for (const auto& [column, text] : row.cells) {
      if (column.rfind(kPrefix, 0) != 0) continue;
      int level = 0;
      const std::string tail = column.substr(kPrefix.size());
      auto [p, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), level);
      if (ec != std::errc() || p != tail.data() + tail.size()) continue;
      double value = 0;
      auto [q, ec2] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec2 != std::errc() || q != text.data() + text.size() || !std::isfinite(value)) {
        return InvalidArgument(path + ":" + std::to_string(row.line) + ": column '" + column +
                               "': not a number: '" + text + "'");
      }
      levels[level] = value;
    }
  }
  return table;
}

}  // namespace gpufed::replay
