#include "controller/common/log.h"

#include <chrono>
#include <string>

#include "controller/common/time_text.h"
#include "controller/common/utf8.h"

namespace gpufed {
namespace {

// A JSON string body: the text is valid UTF-8 without control characters already
// (BoundedUtf8), so only the quote and the backslash need escaping.
void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  for (LogLevel level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (text == LogLevelName(level)) return level;
  }
  return std::nullopt;
}

std::optional<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return std::nullopt;
}

Logger::Logger(std::ostream* out, LogLevel min_level, LogFormat format, std::function<int64_t()> now_micros)
    : out_(out), min_level_(min_level), format_(format), now_micros_(std::move(now_micros)) {
  if (!now_micros_) {
    now_micros_ = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
}

void Logger::Log(LogLevel level, std::string_view component, std::string_view message) const {
  if (!Enabled(level)) return;
  const std::string text = BoundedUtf8(message, size_t{64} * 1024, Controls::kToSpaces);
  std::string line;
  if (format_ == LogFormat::kJson) {
    line = "{\"time\":\"" + FormatTimeMicros(now_micros_()) + "\",\"level\":\"" + std::string(LogLevelName(level)) +
           "\",\"component\":";
    AppendJsonString(line, BoundedUtf8(component, 64, Controls::kToSpaces));
    line += ",\"message\":";
    AppendJsonString(line, text);
    line += "}\n";
  } else {
    line = "gpufed " + std::string(component) + ": " + text + "\n";
  }
  MutexLock lock(mu_);
  *out_ << line << std::flush;
}

}  // namespace gpufed
