#pragma once
// A destination the journal is shipped to. Registered by AuditSink `spec.type`
// (sinks/factory.h); the Shipper drives it from a durable cursor.
#include <cstdint>
#include <span>
#include <string>

#include "controller/audit/reader.h"
#include "controller/common/status.h"

namespace gpufed::audit {

class Sink {
 public:
  virtual ~Sink() = default;
  // Opens a connection. Unavailable when the receiver cannot be reached or refuses us.
  virtual Status Connect() = 0;
  // Sends `batch` in order. OK means handed over, not necessarily received: see
  // Acknowledged(). Any error means the connection is gone; the shipper disconnects and
  // resends everything after the acknowledged sequence number.
  virtual Status Send(std::span<const JournalEntry> batch) = 0;
  // The highest sequence number the receiver provably holds (0: none on this
  // connection). An error means the connection was lost.
  virtual Result<uint64_t> Acknowledged() = 0;
  virtual void Disconnect() = 0;
  // For logs and metrics: "syslog-tls 127.0.0.1:6514".
  virtual std::string Describe() const = 0;
};

}  // namespace gpufed::audit
