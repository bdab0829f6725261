#pragma once
// The process's log: levelled lines, as text ("gpufed run: MESSAGE", what a terminal
// reader expects) or one JSON object per line ({"time", "level", "component", "message"},
// what log shippers parse). Each line is written and flushed whole under a lock, so a log
// file or pipe holds every line at once (an unhealthy cluster reaches the file when it
// happens, not at exit) and lines from the loop and the connectors never interleave.
// `gpufed run --log-level debug|info|warn|error --log-format text|json` chooses.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string_view>

#include "controller/common/mutex.h"

namespace gpufed {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

std::string_view LogLevelName(LogLevel level);
std::optional<LogLevel> ParseLogLevel(std::string_view text);
std::optional<LogFormat> ParseLogFormat(std::string_view text);

class Logger {
 public:
  // `out` must outlive the Logger. `now_micros`: the wall clock a JSON line's time reads
  // (microseconds since the epoch); empty: the system clock.
  Logger(std::ostream* out, LogLevel min_level, LogFormat format, std::function<int64_t()> now_micros = {});

  bool Enabled(LogLevel level) const { return level >= min_level_; }
  // `component`: who speaks ("run", "connector"). The message's bytes that are not valid
  // UTF-8 or are control characters are replaced, so a peer's text cannot forge a line.
  void Log(LogLevel level, std::string_view component, std::string_view message) const EXCLUDES(mu_);
  void Debug(std::string_view component, std::string_view message) const { Log(LogLevel::kDebug, component, message); }
  void Info(std::string_view component, std::string_view message) const { Log(LogLevel::kInfo, component, message); }
  void Warn(std::string_view component, std::string_view message) const { Log(LogLevel::kWarn, component, message); }
  void Error(std::string_view component, std::string_view message) const { Log(LogLevel::kError, component, message); }

 private:
  std::ostream* out_ PT_GUARDED_BY(mu_);
  LogLevel min_level_;
  LogFormat format_;
  std::function<int64_t()> now_micros_;
  mutable Mutex mu_;
};

}  // namespace gpufed
