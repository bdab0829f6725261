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
};

struct AuditSink {
  ObjectMeta metadata;
  AuditSinkType type = AuditSinkType::kSyslogTls;
  std::string endpoint;
  TlsFiles tls;
  int64_t lag_limit_records = 0;  // 0 = no limit
  Duration lag_limit_time;
  int batch_size = 500;
};

}  // namespace gpufed::model
