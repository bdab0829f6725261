#include "controller/reconcile/detached_attempts.h"

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace gpufed::reconcile {
namespace {

Status Damaged(const std::string& what) {
  return Status(StatusCode::kDataLoss, std::string("store meta ") + DetachedAttempts::kMetaKey + ": " + what);
}

}  // namespace

std::string DetachedAttempts::Encode(const std::map<std::string, DetachedAttempt>& entries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, a] : entries) {
    out.push_back({{"key", a.key},
                   {"uid", a.uid},
                   {"workload", a.workload},
                   {"tenant", a.tenant},
                   {"attempt", a.attempt},
                   {"cluster", a.cluster},
                   {"cloud", a.cloud},
                   {"outcome", a.outcome},
                   {"detached_ms", a.detached.millis()},
                   {"last_gpu_seconds", a.last_gpu_seconds},
                   {"last_cost_micros", a.last_cost.micros()},
                   {"currency", a.last_cost.currency()},
                   {"started_ms", a.started.millis()},
                   {"last_heard_ms", a.last_heard.millis()}});
  }
  return out.dump();
}

Result<std::map<std::string, DetachedAttempt>> DetachedAttempts::Decode(const std::string& text) {
  nlohmann::json in = nlohmann::json::parse(text, nullptr, false);
  if (!in.is_array()) return Damaged("not a JSON array");
  std::map<std::string, DetachedAttempt> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const nlohmann::json& e = in[i];
    const std::string at = "entry " + std::to_string(i);
    if (!e.is_object()) return Damaged(at + " is not an object");
    DetachedAttempt a;
    std::string currency;
    for (auto [field, target] : {std::pair{"key", &a.key},
                                 {"uid", &a.uid},
                                 {"workload", &a.workload},
                                 {"tenant", &a.tenant},
                                 {"cluster", &a.cluster},
                                 {"outcome", &a.outcome},
                                 {"currency", &currency}}) {
      auto it = e.find(field);
      if (it == e.end() || !it->is_string()) return Damaged(at + ": " + field + " is not a string");
      *target = it->get<std::string>();
    }
    auto integer = [&e](const char* field) -> std::optional<int64_t> {
      auto it = e.find(field);
      if (it == e.end() || !it->is_number_integer()) return std::nullopt;
      return it->get<int64_t>();
    };
    auto cloud = e.find("cloud");
    auto gpu_seconds = e.find("last_gpu_seconds");
    std::optional<int64_t> attempt = integer("attempt"), detached = integer("detached_ms"),
                           cost = integer("last_cost_micros"), started = integer("started_ms"),
                           heard = integer("last_heard_ms");
    if (!attempt || !detached || !cost || !started || !heard || cloud == e.end() || !cloud->is_boolean() ||
        gpu_seconds == e.end() || !gpu_seconds->is_number() || *attempt < 0 || *attempt > INT32_MAX) {
      return Damaged(at + ": a number or flag is missing or of the wrong type");
    }
    a.attempt = static_cast<int>(*attempt);
    a.cloud = cloud->get<bool>();
    a.detached = Duration::FromMillis(*detached);
    a.last_gpu_seconds = gpu_seconds->get<double>();
    a.last_cost = Money(*cost, currency);
    a.started = Duration::FromMillis(*started);
    a.last_heard = Duration::FromMillis(*heard);
    if (a.key.empty()) return Damaged(at + ": an empty key");
    out[a.key] = std::move(a);
  }
  return out;
}

Status DetachedAttempts::Load(store::Store& store) {
  if (loaded_) return Status::Ok();
  Result<std::optional<std::string>> saved = store.GetMeta(kMetaKey);
  if (!saved.ok()) return saved.status();
  if (*saved) {
    Result<std::map<std::string, DetachedAttempt>> decoded = Decode(**saved);
    if (!decoded.ok()) return decoded.status();
    entries_ = std::move(decoded).value();
  }
  loaded_ = true;
  return Status::Ok();
}

Status DetachedAttempts::Add(const DetachedAttempt& attempt, store::Store& store) {
  GPUFED_RETURN_IF_ERROR(Load(store));
  entries_[attempt.key] = attempt;
  return Save(store);
}

Status DetachedAttempts::Remove(const std::string& key, store::Store& store) {
  GPUFED_RETURN_IF_ERROR(Load(store));
  if (entries_.erase(key) == 0) return Status::Ok();
  return Save(store);
}

Status DetachedAttempts::Save(store::Store& store) const { return store.SetMeta(kMetaKey, Encode(entries_)); }

}  // namespace gpufed::reconcile
