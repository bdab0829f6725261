// The audit sinks' side of a receiver exchange. https: the receiver's answer to a batch
// POST (status code, body delivered in curl-sized pieces) -> the head kept for messages
// and the Status the shipper acts on. syslog-tls: a journal record (any payload) encoded,
// read back as the shipper's reader does, and framed as an RFC 5424 message, which must
// carry the record line byte for byte (receivers' copies are verified).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/audit/record.h"
#include "controller/audit/sinks/https_sink.h"
#include "controller/audit/sinks/syslog_tls_sink.h"

namespace audit = gpufed::audit;

namespace {

void HttpsAnswer(std::string_view input) {
  if (input.size() < 3) return;
  const long code = static_cast<long>(static_cast<uint8_t>(input[0]) | static_cast<uint8_t>(input[1]) << 8) % 1000;
  const size_t piece = 1 + static_cast<uint8_t>(input[2]) % 64;
  const std::string_view body = input.substr(3);
  std::string head;
  for (size_t at = 0; at < body.size(); at += piece) audit::KeepAnswerHead(body.substr(at, piece), &head);
  if (head.size() > audit::kAnswerHeadBytes || body.substr(0, head.size()) != head) std::abort();
  if (head.size() < audit::kAnswerHeadBytes && head.size() != body.size()) std::abort();
  const gpufed::Status s = audit::BatchAnswerStatus("https://receiver.test/audit", code, head);
  const bool transient = code >= 500 || code == 408 || code == 429;
  if (s.ok() != (code >= 200 && code < 300)) std::abort();
  if (!s.ok() && (s.code() == gpufed::StatusCode::kUnavailable) != transient) std::abort();
}

// A record the journal could have written (any kind, any payload text, a valid hash), as
// the shipper's reader hands it over: header fields from ParseRecordLine.
void SyslogMessage(std::string_view input) {
  if (input.size() < 2) return;
  static const std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  static const audit::SyslogTlsSink sink(env.get(), audit::SyslogTlsOptions{.hostname = "fuzz-host"});
  static constexpr audit::RecordKind kKinds[] = {audit::RecordKind::kDecision, audit::RecordKind::kConnectorAction,
                                                 audit::RecordKind::kCheckpoint, audit::RecordKind::kBudgetAlert};
  audit::RecordHeader header;
  header.seq = 1 + static_cast<uint8_t>(input[0]);
  header.time_micros = int64_t{1'800'000'000'000'000} + static_cast<uint8_t>(input[1]) * 999'999;
  header.kind = audit::RecordKindName(kKinds[static_cast<uint8_t>(input[0]) % 4]);
  header.controller = "c1";
  header.prev = std::string(audit::kGenesisHash);
  nlohmann::json payload = nlohmann::json::parse(input.substr(2), nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded() || !payload.is_object()) payload = {{"text", std::string(input.substr(2))}};
  for (const char* key : {"seq", "time", "kind", "controller", "prev", "hash"}) payload.erase(key);
  const std::string line = audit::EncodeRecordLine(header, audit::DumpPayload(payload), nullptr);
  gpufed::Result<audit::ParsedLine> parsed = audit::ParseRecordLine(line);
  if (!parsed.ok() || parsed->header.seq != header.seq || parsed->header.time_micros != header.time_micros ||
      parsed->header.kind != header.kind) {
    std::abort();  // what the journal encodes, its reader must read back
  }
  audit::JournalEntry entry{parsed->header.seq, parsed->header.time_micros, parsed->header.kind,
                            std::string(parsed->hash), line};
  const std::string message = sink.FormatMessage(entry);
  const std::string seq = " seq=\"" + std::to_string(entry.seq) + "\" ";
  if (message.rfind("<110>1 ", 0) != 0 || message.find(seq) == std::string::npos) std::abort();
  if (message.size() < line.size() || message.compare(message.size() - line.size(), line.size(), line) != 0) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (64u << 10)) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  HttpsAnswer(input);
  SyslogMessage(input);
  return 0;
}
