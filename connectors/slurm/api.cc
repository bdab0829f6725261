// The adapter registry and what the adapters share.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "connectors/slurm/api.h"
#include "connectors/slurm/api_common.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

constexpr int kSlurmInvalidJobId = 2017;

// Slurm errnos that mean "could not talk to slurmctld": retry later.
bool Transient(int number) {
  return number == -1 || number == 4 || number == 11 || number == 110 ||
         (number >= 1000 && number < 2000) || (number >= 5000 && number < 6000);
}

std::string StrOf(const json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string SlurmError::Text() const {
  std::string text = !description.empty() ? description : !error.empty() ? error : "unspecified error";
  if (!error.empty() && !description.empty() && description.find(error) == std::string::npos) text += " (" + error + ")";
  if (number != 0) text += " [slurm errno " + std::to_string(number) + "]";
  return text;
}

std::string SlurmWarning::Text() const {
  std::string text = description.empty() ? "unspecified warning" : description;
  return source.empty() ? text : text + " (at " + source + ")";
}

Status StatusFromSlurmErrors(const std::vector<SlurmError>& errors, int http_status, const std::string& what) {
  if (errors.empty()) {
    if (http_status >= 500) return Unavailable(what + ": HTTP " + std::to_string(http_status));
    if (http_status >= 200 && http_status < 300) return Status::Ok();
    return InvalidArgument(what + ": HTTP " + std::to_string(http_status));
  }
  std::string text;
  for (const SlurmError& e : errors) text += (text.empty() ? "" : "; ") + e.Text();
  bool transient = false, not_found = false;
  for (const SlurmError& e : errors) {
    if (e.number == kSlurmInvalidJobId) not_found = true;
    // 9001 is slurmrestd's "Failure during parsing", which follows the real cause.
    if (Transient(e.number) && e.number != 9001) transient = true;
  }
  if (not_found) return NotFound(what + ": " + text);
  if (transient) {
    return Unavailable(what + ": slurmrestd got no usable answer from slurmctld (" + text +
                       "): slurmctld down or unreachable, or the token was rejected (Slurm 22.05 reports both "
                       "this way)");
  }
  return InvalidArgument(what + ": Slurm refused: " + text);
}

std::vector<SlurmError> ReadErrors(const json& reply) {
  std::vector<SlurmError> out;
  if (!reply.is_object()) return out;
  auto it = reply.find("errors");
  if (it == reply.end() || !it->is_array()) return out;
  for (const json& e : *it) {
    if (!e.is_object()) continue;
    SlurmError err;
    // 22.05 uses three names for the number depending on the code path.
    for (const char* k : {"error_number", "error_code", "errno"}) {
      auto n = e.find(k);
      if (n != e.end() && n->is_number_integer()) err.number = n->get<int>();
    }
    err.error = StrOf(e, "error");
    err.description = StrOf(e, "description");
    out.push_back(std::move(err));
  }
  return out;
}

std::vector<SlurmWarning> ReadWarnings(const json& reply) {
  std::vector<SlurmWarning> out;
  if (!reply.is_object()) return out;
  auto it = reply.find("warnings");
  if (it == reply.end() || !it->is_array()) return out;
  for (const json& w : *it) {
    // A warning we cannot read is still a warning: never let it pass as "no warnings".
    if (!w.is_object()) {
      out.push_back({"unreadable warning entry: " + w.dump().substr(0, 80), ""});
      continue;
    }
    out.push_back({StrOf(w, "description"), StrOf(w, "source")});
  }
  return out;
}

std::vector<GresItem> ParseTresPerNode(std::string text) {
  for (const char* prefix : {"gres:", "gres/"}) {
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix)) text.erase(at, 5);
  }
  return ParseGres(text);
}

void FillJobGres(SlurmJob& job, const std::vector<std::string>& gres_detail, int node_count) {
  for (const std::string& g : gres_detail) {
    for (GresItem& item : ParseGres(g)) job.gres.push_back(std::move(item));
  }
  if (!job.gres.empty()) return;
  for (GresItem item : job.gres_per_node) {
    // Both numbers come from the reply: the product saturates instead of overflowing
    // (found by fuzz_slurm_response: 2 GPUs per node x 1,795,410,511 nodes).
    const int64_t total = int64_t{item.count} * std::max(1, node_count);
    item.count = static_cast<int>(std::clamp<int64_t>(total, 0, std::numeric_limits<int>::max()));
    job.gres.push_back(std::move(item));
  }
}

const ApiMapping* FindApiMapping(std::string_view version) {
  if (version == "v0.0.38") return &ApiV0038();
  if (version == "v0.0.40") return &ApiV0040();
  if (version == "v0.0.41") return &ApiV0041();
  if (version == "v0.0.42") return &ApiV0042();
  return nullptr;
}

std::vector<std::string> SupportedApiVersions() { return {"v0.0.38", "v0.0.40", "v0.0.41", "v0.0.42"}; }

std::vector<std::string> ApiVersionSettings() {
  std::vector<std::string> out = {kAutoApiVersion};
  for (const std::string& v : SupportedApiVersions()) out.push_back(v);
  return out;
}

int64_t ApiVersionOrder(std::string_view v) {
  if (v.size() < 2 || v[0] != 'v') return -1;
  int64_t parts[3] = {0, 0, 0};
  size_t part = 0, digits = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    char c = v[i];
    if (c == '.') {
      if (digits == 0 || ++part > 2) return -1;
      digits = 0;
    } else if (c >= '0' && c <= '9' && digits < 6) {
      parts[part] = parts[part] * 10 + (c - '0');
      ++digits;
    } else {
      return -1;
    }
  }
  if (part != 2 || digits == 0) return -1;
  return (parts[0] * 1000000 + parts[1]) * 1000000 + parts[2];
}

}  // namespace gpufed::connectors::slurm
