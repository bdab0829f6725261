#include "controller/audit/record.h"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "controller/audit/canonical_json.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

constexpr std::string_view kHashKey = ",\"hash\":\"";
constexpr size_t kHashHexLen = 64;
// `,"hash":"` + 64 hex + `"}`
constexpr size_t kTrailerLen = kHashKey.size() + kHashHexLen + 2;

struct KindName {
  RecordKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {RecordKind::kDecision, "decision"},
    {RecordKind::kPolicyActivated, "policy-activated"},
    {RecordKind::kPolicyRejected, "policy-rejected"},
    {RecordKind::kConnectorAction, "connector-action"},
    {RecordKind::kControllerStart, "controller-start"},
    {RecordKind::kControllerStop, "controller-stop"},
    {RecordKind::kCheckpoint, "checkpoint"},
    {RecordKind::kJournalRepaired, "journal-repaired"},
    {RecordKind::kSinkLagging, "sink-lagging"},
    {RecordKind::kSinkRecovered, "sink-recovered"},
    {RecordKind::kBudgetAlert, "budget-alert"},
    {RecordKind::kPolicyDegraded, "policy-degraded"},
    {RecordKind::kAttemptMetered, "attempt-metered"},
    {RecordKind::kClusterConnector, "cluster-connector"},
    {RecordKind::kWorkloadSubmitted, "workload-submitted"},
    {RecordKind::kWorkloadCancelled, "workload-cancelled"},
    {RecordKind::kKeyRotated, "key-rotated"},
};

}  // namespace

std::string RecordKindNames() {
  std::string names;
  for (const KindName& k : kKinds) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

namespace {

// Consumes `"key":` at the front of `*rest`.
bool ConsumeKey(std::string_view* rest, std::string_view key) {
  if (rest->size() < key.size() + 3 || (*rest)[0] != '"') return false;
  if (rest->substr(1, key.size()) != key) return false;
  if (rest->substr(1 + key.size(), 2) != "\":") return false;
  rest->remove_prefix(key.size() + 3);
  return true;
}

// Consumes a JSON string without escapes (header values are ASCII identifiers).
bool ConsumePlainString(std::string_view* rest, std::string_view* out) {
  if (rest->empty() || (*rest)[0] != '"') return false;
  size_t end = rest->find('"', 1);
  if (end == std::string_view::npos) return false;
  std::string_view value = rest->substr(1, end - 1);
  if (value.find('\\') != std::string_view::npos) return false;
  *out = value;
  rest->remove_prefix(end + 1);
  return true;
}

bool ConsumeChar(std::string_view* rest, char c) {
  if (rest->empty() || (*rest)[0] != c) return false;
  rest->remove_prefix(1);
  return true;
}

}  // namespace

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

const char* RecordKindName(RecordKind kind) {
  for (const KindName& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

std::optional<RecordKind> ParseRecordKind(std::string_view name) {
  for (const KindName& k : kKinds) {
    if (name == k.name) return k.kind;
  }
  return std::nullopt;
}

struct LineHasher::State {
  EVP_MD* fetched = nullptr;      // owned; null if the explicit fetch failed
  const EVP_MD* md = nullptr;
  EVP_MD_CTX* ctx = nullptr;
  ~State() {
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(fetched);
  }
};

LineHasher::LineHasher() : state_(std::make_unique<State>()) {
  state_->fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  state_->md = state_->fetched != nullptr ? state_->fetched : EVP_sha256();
  state_->ctx = EVP_MD_CTX_new();
}

LineHasher::~LineHasher() = default;
LineHasher::LineHasher(LineHasher&&) noexcept = default;
LineHasher& LineHasher::operator=(LineHasher&&) noexcept = default;

void LineHasher::Hex(std::string_view a, std::string_view b, char (&hex)[64]) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  bool ok = state_->ctx != nullptr && EVP_DigestInit_ex(state_->ctx, state_->md, nullptr) == 1 &&
            EVP_DigestUpdate(state_->ctx, a.data(), a.size()) == 1 &&
            EVP_DigestUpdate(state_->ctx, b.data(), b.size()) == 1 &&
            EVP_DigestFinal_ex(state_->ctx, digest, &length) == 1 && length == 32;
  if (!ok) {
    // Only out of memory gets here; the common helper allocates its own context.
    Sha256 sha;
    sha.Update(a);
    sha.Update(b);
    std::string h = sha.FinishHex();
    std::copy(h.begin(), h.end(), hex);
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 32; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
}

std::string DumpPayload(const nlohmann::json& payload) {
  std::string out;
  AppendCanonicalJson(payload, &out);
  return out;
}

std::string EncodeRecordLine(const RecordHeader& h, std::string_view payload_json, std::string* hash_hex) {
  std::string line;
  line.reserve(payload_json.size() + 260);
  RecordLineEncoder encoder;
  std::string_view hash = encoder.Append(h.seq, h.time_micros, h.kind, h.controller, h.prev, payload_json, &line);
  if (hash_hex != nullptr) *hash_hex = std::string(hash);
  return line;
}

std::string_view RecordLineEncoder::Append(uint64_t seq, int64_t time_micros, std::string_view kind,
                                           std::string_view controller, std::string_view prev,
                                           std::string_view payload_json, std::string* out) {
  if (!have_time_ || time_micros != time_micros_) {
    time_text_ = FormatTimeMicros(time_micros);
    time_micros_ = time_micros;
    have_time_ = true;
  }
  const size_t start = out->size();
  char seq_text[24];
  char* seq_end = std::to_chars(seq_text, seq_text + sizeof seq_text, seq).ptr;
  out->append("{\"seq\":");
  out->append(seq_text, static_cast<size_t>(seq_end - seq_text));
  out->append(",\"time\":\"");
  out->append(time_text_);
  out->append("\",\"kind\":\"");
  out->append(kind);
  out->append("\",\"controller\":\"");
  out->append(controller);
  out->append("\",\"prev\":\"");
  out->append(prev);
  out->push_back('"');
  // The payload object's members follow the header's.
  if (payload_json.size() > 2) {
    out->push_back(',');
    out->append(payload_json.substr(1, payload_json.size() - 2));
  }
  // The hash covers the line without its hash member, closed by '}'.
  hasher_.Hex(std::string_view(*out).substr(start), "}", hash_);
  out->append(kHashKey);
  out->append(hash_, sizeof hash_);
  out->append("\"}");
  return std::string_view(hash_, sizeof hash_);
}

Result<ParsedLine> ParseRecordLine(std::string_view line) {
  LineHasher hasher;
  return ParseRecordLine(line, &hasher);
}

Result<ParsedLine> ParseRecordLine(std::string_view line, LineHasher* hasher) {
  if (line.size() < kTrailerLen + 10 || line.substr(0, 7) != "{\"seq\":") {
    return Status(StatusCode::kDataLoss, "not an audit record");
  }
  if (line.substr(line.size() - 2) != "\"}" || line.substr(line.size() - kTrailerLen, kHashKey.size()) != kHashKey) {
    return Status(StatusCode::kDataLoss, "record has no trailing hash (truncated or altered)");
  }
  ParsedLine out;
  out.line = line;
  out.hash = line.substr(line.size() - 2 - kHashHexLen, kHashHexLen);
  if (!IsLowerHex(out.hash)) return Status(StatusCode::kDataLoss, "record hash is not hex");

  std::string_view rest = line.substr(7);
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), out.header.seq);
  if (ec != std::errc() || out.header.seq == 0) return Status(StatusCode::kDataLoss, "malformed seq");
  rest.remove_prefix(static_cast<size_t>(ptr - rest.data()));
  std::string_view time, kind, controller, prev;
  if (!ConsumeChar(&rest, ',') || !ConsumeKey(&rest, "time") || !ConsumePlainString(&rest, &time) ||
      !ConsumeChar(&rest, ',') || !ConsumeKey(&rest, "kind") || !ConsumePlainString(&rest, &kind) ||
      !ConsumeChar(&rest, ',') || !ConsumeKey(&rest, "controller") || !ConsumePlainString(&rest, &controller) ||
      !ConsumeChar(&rest, ',') || !ConsumeKey(&rest, "prev") || !ConsumePlainString(&rest, &prev)) {
    return Status(StatusCode::kDataLoss, "malformed record header");
  }
  std::optional<int64_t> micros = ParseTimeMicros(time);
  if (!micros || prev.size() != kHashHexLen || !IsLowerHex(prev)) {
    return Status(StatusCode::kDataLoss, "malformed record header");
  }
  out.header.time_micros = *micros;
  out.header.kind = std::string(kind);
  out.header.controller = std::string(controller);
  out.header.prev = std::string(prev);

  char hex[64];
  hasher->Hex(line.substr(0, line.size() - kTrailerLen), "}", hex);
  if (std::string_view(hex, sizeof hex) != out.hash)
    return Status(StatusCode::kDataLoss, "hash mismatch (record altered)");
  return out;
}

Result<nlohmann::json> RecordJson(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("record is not a JSON object");
  return j;
}

}  // namespace gpufed::audit
