#include "controller/audit/record.h"

#include <charconv>
#include <cstdio>
#include <ctime>

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
};

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

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

std::string FormatTimeMicros(int64_t micros) {
  int64_t secs = micros >= 0 ? micros / 1000000 : (micros - 999999) / 1000000;
  int64_t frac = micros - secs * 1000000;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(frac));
  return buf;
}

std::optional<int64_t> ParseTimeMicros(std::string_view text) {
  // Accepts "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" and a bare date "YYYY-MM-DD" (midnight UTC).
  std::tm tm{};
  int frac = 0;
  std::string s(text);
  if (s.size() == 10) s += "T00:00:00Z";
  int year, mon, day, hh, mm, ss;
  char tail[16] = {0};
  int n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%15s", &year, &mon, &day, &hh, &mm, &ss, tail);
  if (n < 6) return std::nullopt;
  std::string_view rest = tail;
  if (!rest.empty() && rest[0] == '.') {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') {
      if (digits < 6) {
        frac = frac * 10 + (rest[0] - '0');
        ++digits;
      }
      rest.remove_prefix(1);
    }
    while (digits++ < 6) frac *= 10;
  }
  if (rest != "Z" && !(n == 6 && rest.empty())) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hh;
  tm.tm_min = mm;
  tm.tm_sec = ss;
  return static_cast<int64_t>(timegm(&tm)) * 1000000 + frac;
}

std::string DumpPayload(const nlohmann::json& payload) {
  // nlohmann's ensure_ascii path escapes character by character and dominates append
  // cost; dump UTF-8 instead and escape the (rare) non-ASCII bytes here. Outside
  // strings JSON is ASCII, so every such byte is inside a string, where \uXXXX is valid.
  std::string out = payload.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
  size_t first = 0;
  while (first < out.size() && static_cast<unsigned char>(out[first]) < 0x80) ++first;
  if (first == out.size()) return out;
  std::string escaped = out.substr(0, first);
  char buf[16];
  for (size_t i = first; i < out.size();) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c < 0x80) {
      escaped += out[i++];
      continue;
    }
    // The dump is valid UTF-8 (invalid input was replaced with U+FFFD).
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < len && i + k < out.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(out[i + k]) & 0x3F);
    i += static_cast<size_t>(len);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    }
    escaped += buf;
  }
  return escaped;
}

std::string EncodeRecordLine(const RecordHeader& h, std::string_view payload_json, std::string* hash_hex) {
  std::string line;
  line.reserve(payload_json.size() + 260);
  line += "{\"seq\":";
  line += std::to_string(h.seq);
  line += ",\"time\":\"";
  line += FormatTimeMicros(h.time_micros);
  line += "\",\"kind\":\"";
  line += h.kind;
  line += "\",\"controller\":\"";
  line += h.controller;
  line += "\",\"prev\":\"";
  line += h.prev;
  line += '"';
  // The payload object's members follow the header's.
  if (payload_json.size() > 2) {
    line += ',';
    line.append(payload_json.substr(1, payload_json.size() - 2));
  }
  line += '}';
  std::string hash = Sha256Hex(line);
  line.pop_back();
  line += kHashKey;
  line += hash;
  line += "\"}";
  if (hash_hex != nullptr) *hash_hex = std::move(hash);
  return line;
}

Result<ParsedLine> ParseRecordLine(std::string_view line) {
  if (line.size() < kTrailerLen + 10 || line.substr(0, 7) != "{\"seq\":") {
    return Status(StatusCode::kDataLoss, "not an audit record");
  }
  if (line.substr(line.size() - 2) != "\"}" ||
      line.substr(line.size() - kTrailerLen, kHashKey.size()) != kHashKey) {
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

  Sha256 sha;
  sha.Update(line.substr(0, line.size() - kTrailerLen));
  sha.Update("}");
  if (sha.FinishHex() != out.hash) return Status(StatusCode::kDataLoss, "hash mismatch (record altered)");
  return out;
}

Result<nlohmann::json> RecordJson(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("record is not a JSON object");
  return j;
}

}  // namespace gpufed::audit
