#include "controller/audit/snapshot_store.h"

#include "controller/audit/record.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

constexpr std::string_view kPrefix = "sha256:";
constexpr size_t kHexLength = 64;

}  // namespace

std::string SnapshotDigest(std::string_view text) { return std::string(kPrefix) + Sha256Hex(text); }

std::string DigestHex(const std::string& digest) {
  if (digest.size() != kPrefix.size() + kHexLength || digest.compare(0, kPrefix.size(), kPrefix) != 0) return "";
  std::string hex = digest.substr(kPrefix.size());
  return IsLowerHex(hex) ? hex : "";
}

Result<std::string> SnapshotStore::Put(const nlohmann::json& document) {
  Result<std::string> digest = Add(DumpPayload(document));
  if (!digest.ok()) return digest.status();
  GPUFED_RETURN_IF_ERROR(Sync());
  return digest;
}

Result<nlohmann::json> SnapshotStore::Get(const std::string& digest) {
  Result<std::string> text = GetText(digest);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kDataLoss, "snapshot " + digest + " is not JSON");
  return j;
}

}  // namespace gpufed::audit
