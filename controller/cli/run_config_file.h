#pragma once
// `gpufed run --config-file FILE`: the settings a service keeps in a file
// (/etc/gpufed/gpufed.yaml in the Debian package) instead of on its command line.
//
//   repository: /var/lib/gpufed/policy   # --config
//   state: /var/lib/gpufed/state         # --state
//   listen: 127.0.0.1:8080               # --listen
//   tls: {cert: server.pem, key: server.key, clientCA: clients-ca.pem}
//                                        # --tls-cert, --tls-key, --tls-client-ca
//   allowPlaintext: false                # --allow-plaintext
//   tokens: /etc/gpufed/tokens           # --tokens
//   metricsListen: 127.0.0.1:9464        # --metrics-listen
//   scenario: ""                         # --scenario
//   speed: 0                             # --speed
//   maxTime: 30d  resync: 5m  drainTimeout: 60s  checkpointInterval: 30s  maxBody: 1MiB
//   log: {level: info, format: text}     # --log-level, --log-format
//   auditKey: /etc/gpufed/audit.key      # --audit-key
//   auditSegmentSize: 64MiB              # --audit-segment-size
//   auditArchive: /srv/gpufed-archive    # --audit-archive
//   ha: {store: "postgresql://gpufed@db1,db2/gpufed?sslmode=verify-full&target_session_attrs=read-write",
//        replica: gpufed-a, advertise: "https://gpufed-a:8443",
//        leaseDuration: 15s, renewDeadline: 10s, leaseRetry: 2s}
//                                        # --store, --replica, --advertise, --lease-duration,
//                                        # --renew-deadline, --lease-retry (deploy/ha/)
//
// A flag given on the command line wins over the file. Unknown keys, wrong types and bad
// values are errors naming the file, line and key, before anything starts. Relative
// paths are relative to the file's folder.
#include <string>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::cli {

// One setting of the file, as the flag it stands for would take it.
struct RunFileSetting {
  std::string flag;   // the long flag without its dashes: "metrics-listen"
  std::string value;  // as given on a command line: "127.0.0.1:9464", "true", "5m"
  std::string where;  // "gpufed.yaml:4:16" for messages about the value
};

// The file's settings in the order written. InvalidArgument lists every problem, one
// "FILE:LINE:COL: error: KEY: message" line each. Bounded: 1 MiB, one document.
Result<std::vector<RunFileSetting>> ReadRunConfigFile(const std::string& path);

// The systemd credential that holds the audit log's key when neither --audit-key nor
// auditKey names one. gpufed.service loads it (LoadCredential=) from
// /etc/gpufed/audit/signing.key, which gpufed-audit-keygen.service makes on the first
// start on that host, so the key is never in the state folder nor in a package or image.
inline constexpr const char* kAuditKeyCredential = "audit-signing.key";

// `<credentials_directory>/audit-signing.key` when the service manager passed that
// credential (credentials_directory is $CREDENTIALS_DIRECTORY; null or empty outside a
// unit with credentials), else "". Whether the file is a safe secret is checked where
// it is read, as for --audit-key.
std::string AuditKeyCredential(const char* credentials_directory);

}  // namespace gpufed::cli
