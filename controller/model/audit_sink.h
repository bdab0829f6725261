#pragma once
// An AuditSink: where the audit journal is shipped.
#include <cstdint>
#include <string>

#include "controller/common/duration.h"
#include "controller/model/meta.h"

namespace gpufed::model {

enum class AuditSinkType { kSyslogTls, kHttps };
const char* AuditSinkTypeName(AuditSinkType type);

struct TlsFiles {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;

  bool operator==(const TlsFiles&) const = default;
};

// What the controller does while a sink lags past its limit.
enum class LagAction { kAlert, kPause };
const char* LagActionName(LagAction action);

struct AuditSink {
  ObjectMeta metadata;
  AuditSinkType type = AuditSinkType::kSyslogTls;
  std::string endpoint;
  TlsFiles tls;
  int64_t lag_limit_records = 0;  // 0 = no limit
  Duration lag_limit_time;
  int batch_size = 500;
  LagAction on_lag_limit = LagAction::kAlert;
};

}  // namespace gpufed::model
