#include "connectors/http/peer_log.h"

#include <iostream>

namespace gpufed::connectors::http {

PeerLog::PeerLog(std::string peer, LogFn log) : peer_(std::move(peer)), log_(std::move(log)) {}

void PeerLog::Failed(std::string_view reason) {
  if (failing_) return;
  failing_ = true;
  Write(LogLevel::kWarn, peer_ + " refused: " + std::string(reason));
}

void PeerLog::Succeeded() {
  if (!failing_) return;
  failing_ = false;
  Write(LogLevel::kInfo, peer_ + " answers again");
}

LogFn LogTo(const Logger* logger) {
  if (logger == nullptr) return {};
  return [logger](LogLevel level, const std::string& line) { logger->Log(level, "connector", line); };
}

void PeerLog::Write(LogLevel level, const std::string& line) const {
  if (log_) {
    log_(level, line);
  } else {
    std::cerr << "gpufed connector: " << line << "\n" << std::flush;
  }
}

}  // namespace gpufed::connectors::http
