#pragma once
// Says why a peer is refused, once per episode: the first failure after a success (or
// after start) is logged with the peer and the reason, later failures of the same
// episode are not (a retry loop would repeat it every few seconds), and the first
// success after an episode logs the recovery. Shared by the REST connectors' clients.
//
// The reason is a Status message: the HTTP client never puts a token, an Authorization
// header or a key into one, so nothing secret reaches the log.
#include <functional>
#include <string>
#include <string_view>

#include "controller/common/log.h"

namespace gpufed::connectors::http {

// Where log lines go: a refusal at kWarn, a recovery at kInfo. Empty: standard error, as
// "gpufed connector: LINE" (the form the rest of `gpufed run` logs in).
using LogFn = std::function<void(LogLevel level, const std::string& line)>;
// The process's log as a LogFn (component "connector"); empty for null.
LogFn LogTo(const Logger* logger);

// Not thread-safe: the owner serialises calls (the Client calls it under its lock).
class PeerLog {
 public:
  PeerLog(std::string peer, LogFn log);

  // Logs "PEER refused: REASON" when this failure starts an episode.
  void Failed(std::string_view reason);
  // Logs "PEER answers again" when this success ends an episode.
  void Succeeded();
  bool failing() const { return failing_; }

 private:
  void Write(LogLevel level, const std::string& line) const;

  std::string peer_;
  LogFn log_;
  bool failing_ = false;
};

}  // namespace gpufed::connectors::http
