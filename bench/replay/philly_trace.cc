#include "bench/replay/philly_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "bench/replay/openb_trace.h"

namespace gpufed::replay {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<double> NumberCell(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> ParsePhillyTime(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail);
  if (!(n == 3 && text.size() == 10) && n != 6) return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || h < 0 || mi < 0 || s < 0) {
    return std::nullopt;
  }
  return DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 + s;
}

Result<std::vector<PhillyJob>> ReadPhillyWindow(const std::string& path, int64_t from_epoch_s, int days) {
  auto rows = ReadCsv(path, {"timestamp", "duration", "num_gpus", "cluster"});
  if (!rows.ok()) return rows.status();
  const int64_t end_s = from_epoch_s + int64_t{days} * 86400;
  std::vector<PhillyJob> jobs;
  for (const CsvRow& row : *rows) {
    auto bad = [&](const std::string& column, const std::string& why) {
      return InvalidArgument(path + ":" + std::to_string(row.line) + ": column '" + column + "': " + why);
    };
    std::optional<int64_t> t = ParsePhillyTime(row.cells.at("timestamp"));
    if (!t) return bad("timestamp", "expected YYYY-MM-DD HH:MM:SS, got '" + row.cells.at("timestamp") + "'");
    std::optional<double> duration = NumberCell(row.cells.at("duration"));
    if (!duration) return bad("duration", "expected seconds >= 0, got '" + row.cells.at("duration") + "'");
    std::optional<double> gpus = NumberCell(row.cells.at("num_gpus"));
    if (!gpus || *gpus != std::floor(*gpus) || *gpus > 100000) {
      return bad("num_gpus", "expected a GPU count, got '" + row.cells.at("num_gpus") + "'");
    }
    if (row.cells.at("cluster").empty()) return bad("cluster", "empty");
    if (*t < from_epoch_s || *t >= end_s || *gpus == 0) continue;
    PhillyJob job;
    job.line = row.line;
    job.submit_ms = (*t - from_epoch_s) * 1000;
    job.duration_ms = static_cast<int64_t>(std::llround(*duration * 1000));
    job.gpus = static_cast<int>(*gpus);
    job.tenant = "vc-" + row.cells.at("cluster");
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const PhillyJob& a, const PhillyJob& b) {
    return a.submit_ms != b.submit_ms ? a.submit_ms < b.submit_ms : a.line < b.line;
  });
  return jobs;
}

}  // namespace gpufed::replay
