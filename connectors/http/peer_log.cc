#include "connectors/http/peer_log.h"

#include <iostream>

namespace gpufed::connectors::http {

PeerLog::PeerLog(std::string peer, LogFn log) : peer_(std::move(peer)), log_(std::move(log)) {}

void PeerLog::Failed(std::string_view reason) {
  if (failing_) return;
  failing_ = true;
  Write(peer_ + " refused: " + std::string(reason));
}

void PeerLog::Succeeded() {
  if (!failing_) return;
  failing_ = false;
  Write(peer_ + " answers again");
}

void PeerLog::Write(const std::string& line) const {
  if (log_) {
    log_(line);
  } else {
    std::cerr << "gpufed connector: " << line << std::endl;
  }
}

}  // namespace gpufed::connectors::http
