#pragma once
// Reader for the Philly job trace in the Pollux artifact's processed form
// (timestamp,duration,num_gpus,gpu_time,cluster), cut to a window of days.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::replay {

struct PhillyJob {
  int line = 0;              // CSV line (the job's id in outputs)
  int64_t submit_ms = 0;     // since the window start
  int64_t duration_ms = 0;
  int gpus = 0;              // num_gpus as traced
  std::string tenant;        // the virtual cluster
};

// Seconds since 1970-01-01 of "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS" (UTC); nothing if malformed.
std::optional<int64_t> ParsePhillyTime(const std::string& text);

// Jobs submitted in [from, from + days), sorted by submission then line. Rows with a
// malformed cell are InvalidArgument naming file, line and column; zero-GPU rows are skipped.
Result<std::vector<PhillyJob>> ReadPhillyWindow(const std::string& path, int64_t from_epoch_s, int days);

}  // namespace gpufed::replay
