// Audit records and their verifier (record.h, verify.h), from what an attacker controls:
// a journal folder's or a receiver's file. The first input byte picks the mode:
//   0  raw lines: ParseRecordLine, RecordJson and ChainVerifier (journal and receiver
//      copy, with the public key); JSON lines round-trip through the canonical writer;
//   1  a fixed, validly signed chain with bytes replaced at fuzzed offsets: the verifier
//      must never accept a changed journal (a receiver copy may only lose its last record);
//   2  forged chains: records with valid self-hashes (anyone can compute SHA-256) built
//      from fuzzed kinds and payloads, where "@prev", "@seq" and "@sig" in a payload stand
//      for the previous hash, seq - 1 and a real signature, so checkpoints get checked deep;
//      the records also go through `gpufed audit query`'s filter and table (query.h).
// Whatever the lines, verification returns a report, never throws or crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/canonical_json.h"
#include "controller/audit/query.h"
#include "controller/audit/record.h"
#include "controller/audit/signing.h"
#include "controller/audit/verify.h"

namespace audit = gpufed::audit;

namespace {

// A throwaway Ed25519 key, fixed so that findings reproduce.
constexpr std::string_view kPrivateKeyPem =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIB5G4ffFKacWuk+dD7HqSNWxp6siP8eXUmrb5OZSMxxU\n"
    "-----END PRIVATE KEY-----\n";

struct Keys {
  audit::Signer signer;
  audit::SignatureVerifier verifier;
};

const Keys& FixedKeys() {
  static const Keys* keys = [] {
    gpufed::Result<audit::Signer> signer = audit::Signer::FromPrivateKeyPem(kPrivateKeyPem);
    if (!signer.ok()) std::abort();
    gpufed::Result<audit::SignatureVerifier> verifier =
        audit::SignatureVerifier::FromPublicKeyPem(signer->PublicKeyPem());
    if (!verifier.ok()) std::abort();
    return new Keys{std::move(*signer), std::move(*verifier)};
  }();
  return *keys;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size();) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

audit::VerifyReport Verify(const std::vector<std::string_view>& lines, bool receiver_copy, bool with_key) {
  audit::VerifyOptions options;
  options.key = with_key ? &FixedKeys().verifier : nullptr;
  options.receiver_copy = receiver_copy;
  audit::ChainVerifier verifier(options);
  for (std::string_view line : lines) verifier.AddLine(line);
  return verifier.Finish();
}

// Appends a record with seq `seq` after `*prev` (updated to its hash); `payload` (an
// object) may use the placeholders of the file comment.
void AppendRecord(uint64_t seq, const std::string& kind, nlohmann::json payload, std::string* prev, std::string* out) {
  for (auto& [key, value] : payload.items()) {
    if (value == "@prev") value = *prev;
    if (value == "@seq") value = seq - 1;
    if (value == "@sig") value = FixedKeys().signer.Sign(audit::CheckpointMessage(seq - 1, *prev));
    if (value == "@key") value = FixedKeys().signer.key_id();
  }
  for (const char* key : {"seq", "time", "kind", "controller", "prev", "hash"}) payload.erase(key);
  audit::RecordHeader header{seq, 1'800'000'000'000'000 + static_cast<int64_t>(seq), kind, "c1", *prev};
  *out += audit::EncodeRecordLine(header, audit::DumpPayload(payload), prev);
  *out += '\n';
}

nlohmann::json CheckpointPayload() {
  return {{"alg", "ed25519"}, {"keyId", "@key"}, {"signedSeq", "@seq"}, {"signedHash", "@prev"}, {"sig", "@sig"}};
}

// controller-start, a decision, a checkpoint, controller-stop and the final checkpoint.
const std::string& SignedChain() {
  static const std::string* chain = [] {
    auto* text = new std::string;
    std::string prev(audit::kGenesisHash);
    AppendRecord(1, "controller-start", {{"version", "0.1.0"}}, &prev, text);
    AppendRecord(2, "decision", {{"workload", "w1"}, {"outcome", "placed"}, {"cluster", "onprem"}}, &prev, text);
    AppendRecord(3, "checkpoint", CheckpointPayload(), &prev, text);
    AppendRecord(4, "controller-stop", {{"reason", "signal"}}, &prev, text);
    AppendRecord(5, "checkpoint", CheckpointPayload(), &prev, text);
    text->pop_back();  // no newline after the last record: every byte belongs to a record
    audit::VerifyReport report = Verify(SplitLines(*text), false, true);
    if (!report.ok || report.records != 5 || report.signatures_verified != 2 || report.unclosed) std::abort();
    return text;
  }();
  return *chain;
}

void RawLines(std::string_view input) {
  const std::vector<std::string_view> lines = SplitLines(input);
  for (std::string_view line : lines) {
    (void)audit::ParseRecordLine(line);
    (void)gpufed::ParseTimeMicros(line);
    gpufed::Result<nlohmann::json> j = audit::RecordJson(line);
    if (!j.ok()) continue;
    std::string canonical;
    audit::AppendCanonicalJson(*j, &canonical);
    if (nlohmann::json::parse(canonical, nullptr, false) != *j) std::abort();  // the journal's text must mean its JSON
  }
  (void)Verify(lines, false, true);
  (void)Verify(lines, true, true);
}

void MutatedChain(std::string_view input) {
  std::string chain = SignedChain();
  for (size_t i = 0; i + 3 <= input.size(); i += 3) {
    const size_t at = (static_cast<uint8_t>(input[i]) | static_cast<uint8_t>(input[i + 1]) << 8) % chain.size();
    chain[at] = input[i + 2];
  }
  if (chain == SignedChain()) return;
  const std::vector<std::string_view> lines = SplitLines(chain);
  if (Verify(lines, false, true).ok) std::abort();  // a changed journal byte must be detected
  const audit::VerifyReport copy = Verify(lines, true, true);
  if (copy.ok && copy.records >= 5) std::abort();  // a receiver copy may only have lost its tail
}

void ForgedChain(std::string_view input) {
  static const char* const kKinds[] = {
      "decision",     "checkpoint", "controller-start",   "controller-stop",    "connector-action",
      "budget-alert", "x",          "workload-submitted", "workload-cancelled", "key-rotated"};
  std::string chain;
  std::string prev(audit::kGenesisHash);
  uint64_t seq = 0;
  for (std::string_view entry : SplitLines(input)) {
    if (entry.size() < 2 || seq >= 64) continue;
    const uint8_t pick = static_cast<uint8_t>(entry[0]), flags = static_cast<uint8_t>(entry[1]);
    nlohmann::json payload = nlohmann::json::parse(entry.substr(2), nullptr, /*allow_exceptions=*/false);
    if (payload.is_discarded() || !payload.is_object()) payload = nlohmann::json::object();
    seq = flags & 1 ? 1 + (flags >> 2) % 8 : seq + 1;  // sometimes a gap, a repeat or going back
    if (flags & 2) prev = std::string(audit::kGenesisHash);
    AppendRecord(seq, kKinds[pick % std::size(kKinds)], std::move(payload), &prev, &chain);
  }
  const std::vector<std::string_view> lines = SplitLines(chain);
  for (bool receiver_copy : {false, true}) {
    for (bool with_key : {false, true}) (void)Verify(lines, receiver_copy, with_key);
  }
  // What `gpufed audit query` does with records its reader accepted.
  audit::QueryFilter by_rule;
  by_rule.rule = "stdlib/compliance-zones";
  audit::QueryFilter by_time;
  by_time.from_micros = 1'800'000'000'000'010;
  by_time.outcome = "placed";
  audit::QueryFilter by_principal;  // who submitted or cancelled
  by_principal.principal = "alice";
  std::vector<nlohmann::json> matched;
  for (std::string_view line : lines) {
    gpufed::Result<nlohmann::json> record = audit::RecordJson(line);
    if (!record.ok()) continue;
    if (audit::MatchesFilter(*record, by_rule) || audit::MatchesFilter(*record, by_time) ||
        audit::MatchesFilter(*record, by_principal) || audit::MatchesFilter(*record, audit::QueryFilter{})) {
      matched.push_back(std::move(*record));
    }
  }
  (void)audit::RenderQueryTable(matched);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > (64u << 10)) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: RawLines(input); break;
    case 1: MutatedChain(input); break;
    default: ForgedChain(input); break;
  }
  return 0;
}
