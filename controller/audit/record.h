#pragma once
// Audit records and their on-disk line encoding (docs/audit-format.md).
//
// A record is one line of ASCII JSON whose first keys are fixed and whose last key is
// its own hash:
//   {"seq":7,"time":"2026-11-22T10:00:00.000000Z","kind":"decision","controller":"c1",
//    "prev":"<64 hex>",...payload...,"hash":"<64 hex>"}
// `hash` is SHA-256 over the line's bytes up to (not including) `,"hash":"`, followed
// by `}`: byte-exact, so verifying never depends on how a JSON library re-serialises.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"
#include "controller/common/time_text.h"

namespace gpufed::audit {

enum class RecordKind {
  kDecision,          // one placer decision (placed, queued, rejected)
  kPolicyActivated,   // a policy revision became active
  kPolicyRejected,    // a policy revision failed validation, compilation or its tests
  kConnectorAction,   // the result of a connector action (submit, cancel, preempt, ...)
  kControllerStart,
  kControllerStop,
  kCheckpoint,        // an Ed25519 signature over the chain head (written by the journal)
  kJournalRepaired,   // a torn tail was cut off at start (its bytes kept in quarantine)
  kSinkLagging,       // an AuditSink fell behind its lag limit (once per episode)
  kSinkRecovered,     // ... and caught up again
  kBudgetAlert,       // a tenant's spend reached an alertAt level of its budget period
  kPolicyDegraded,    // a policy's hooks failed on more than its errorBudget of calls in a pass
  kAttemptMetered,    // what a connector metered for one finished attempt (chargeback)
  kClusterConnector,  // a revision added, replaced or removed a cluster's connector, or it retired
  kWorkloadSubmitted,  // a workload was accepted (API, repository or scenario), by whom, before it is stored
  kWorkloadCancelled,  // a cancel was asked for a workload, by whom and in which state, before it takes effect
  kKeyRotated,         // the key in force handed the journal over to a new key (gpufed audit rotate-key)
};
const char* RecordKindName(RecordKind kind);
std::optional<RecordKind> ParseRecordKind(std::string_view name);
// Every kind's name, comma-separated, in the order of the enum (for messages).
std::string RecordKindNames();

// What a caller appends: a kind and its payload. The journal adds seq, time,
// controller, prev and hash.
struct AuditRecord {
  RecordKind kind = RecordKind::kDecision;
  // A JSON object. Its keys must not be one of the header keys (seq, time, kind,
  // controller, prev, hash); the journal rejects such a record with InvalidArgument.
  nlohmann::json payload = nlohmann::json::object();
};

inline constexpr std::string_view kGenesisHash = "0000000000000000000000000000000000000000000000000000000000000000";

// The header fields of an encoded record.
struct RecordHeader {
  uint64_t seq = 0;
  int64_t time_micros = 0;  // UTC microseconds since the epoch
  std::string kind;
  std::string controller;
  std::string prev;
};

// SHA-256 of record lines through one reusable OpenSSL context with the algorithm
// fetched once: setting up a context per record cost as much as hashing a 1.3 KB
// decision record. Not thread-safe; one per hashing thread.
class LineHasher {
 public:
  LineHasher();
  ~LineHasher();
  LineHasher(LineHasher&&) noexcept;
  LineHasher& operator=(LineHasher&&) noexcept;

  // Writes the lowercase hex SHA-256 of the bytes of `a` followed by `b` to `hex`.
  void Hex(std::string_view a, std::string_view b, char (&hex)[64]);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Encodes one record line (without the trailing newline). `payload_json` is the
// payload's dump, an object ("{...}"); `time_micros` is stamped as RFC 3339 UTC.
std::string EncodeRecordLine(const RecordHeader& header, std::string_view payload_json, std::string* hash_hex);

// EncodeRecordLine for many records into one buffer (a group commit): no temporary
// strings, and the time text is formatted once while records share a time. Not
// thread-safe; one per encoding thread.
class RecordLineEncoder {
 public:
  // Appends the line (without the trailing newline) to `*out` and returns its hash,
  // valid until the next call.
  std::string_view Append(uint64_t seq, int64_t time_micros, std::string_view kind, std::string_view controller,
                          std::string_view prev, std::string_view payload_json, std::string* out);

 private:
  bool have_time_ = false;
  int64_t time_micros_ = 0;
  std::string time_text_;
  LineHasher hasher_;
  char hash_[64] = {};
};

// A record line that passed its self-check: the hash matches its bytes. Views point
// into the line given to ParseRecordLine and live as long as it.
struct ParsedLine {
  RecordHeader header;
  std::string_view hash;
  std::string_view line;
};

// Checks the line's shape and its own hash. DataLoss names what is wrong: not a record,
// a malformed header, or a hash that does not match the bytes (a changed byte).
Result<ParsedLine> ParseRecordLine(std::string_view line);
// The same with the caller's hasher (readers and verifiers parse many lines).
Result<ParsedLine> ParseRecordLine(std::string_view line, LineHasher* hasher);

// The whole record as JSON (header, payload and hash). InvalidArgument if not JSON.
Result<nlohmann::json> RecordJson(std::string_view line);

// Record times are written and read with common/time_text.h (FormatTimeMicros,
// ParseTimeMicros).

// Serialises a payload the way the journal does: compact, keys sorted, ASCII only
// (so receivers that escape 8-bit bytes cannot change a record).
std::string DumpPayload(const nlohmann::json& payload);

// Only 0-9 and a-f: the spelling of every hash the journal and its snapshots write.
bool IsLowerHex(std::string_view s);

}  // namespace gpufed::audit
