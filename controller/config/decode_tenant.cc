#include "controller/config/decoders.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include "controller/common/base64.h"

namespace gpufed::config {

void DecodeTenantSpec(const YamlField& spec, model::Tenant& out) {
  if (!spec.ExpectObject({"weight", "quota", "budget", "maxPriority", "api"}, Required::kYes)) return;
  YamlField api = spec.Child("api");
  if (api.ExpectObject({"rateLimit", "burst", "maxConcurrentRequests"})) {
    YamlField rate = api.Child("rateLimit");
    if (auto v = rate.String(); v && *v == "0") {
      out.api_rate_per_second = 0;  // lifted explicitly
    } else if (v) {
      // "N/s" or "N/m": requests per second or per minute.
      const size_t slash = v->find('/');
      const std::string unit = slash == std::string::npos ? "" : v->substr(slash + 1);
      const std::optional<double> parsed = ParseYamlFloat(v->substr(0, slash));
      const double n = parsed.value_or(0);
      if (!parsed || !(n > 0) || n > 1e6 || (unit != "s" && unit != "m")) {
        rate.Error(
            "rateLimit must look like '20/s' or '600/m' (a positive number of requests per second or minute), "
            "or '0' for no limit");
      } else {
        out.api_rate_per_second = unit == "s" ? n : n / 60.0;
        out.api_burst = 0;  // unless given: the written rate's, not the default rate's burst
      }
    }
    if (auto v = api.Child("burst").Int(1, 1000000)) out.api_burst = static_cast<int>(*v);
    if (auto v = api.Child("maxConcurrentRequests").Int(0, 100000))
      out.api_max_concurrent_requests = static_cast<int>(*v);
  }
  WrittenPriority max_priority = DecodePriority(spec.Child("maxPriority"));
  out.max_priority = max_priority.number;
  out.max_priority_class = max_priority.class_name;
  YamlField weight = spec.Child("weight");
  if (auto v = weight.Number(0, 1e6)) {
    if (*v <= 0) weight.Error("weight must be above 0");
    out.weight = *v;
  }
  YamlField quota = spec.Child("quota");
  if (quota.ExpectObject({"guaranteedGpus", "maxGpus"})) {
    if (auto v = quota.Child("guaranteedGpus").Int(0, 10000000)) out.guaranteed_gpus = static_cast<int>(*v);
    if (auto v = quota.Child("maxGpus").Int(0, 10000000)) out.max_gpus = static_cast<int>(*v);
    if (out.max_gpus && *out.max_gpus < out.guaranteed_gpus) {
      quota.Child("maxGpus").Error("maxGpus is below guaranteedGpus");
    }
  }
  YamlField budget = spec.Child("budget");
  if (budget.ExpectObject({"period", "limit", "cloudLimit", "alertAt", "spent", "cloudSpent"})) {
    if (auto v = budget.Child("period").Enum({"daily", "weekly", "monthly"})) {
      out.budget.period = *v == "daily"    ? model::BudgetPeriod::kDaily
                          : *v == "weekly" ? model::BudgetPeriod::kWeekly
                                           : model::BudgetPeriod::kMonthly;
    }
    // Every amount of a budget is in one currency: the first one's, where it is written.
    auto money = [&](const char* key) -> std::optional<Money> {
      YamlField field = budget.Child(key);
      std::optional<Money> m = field.MoneyWithCurrency();
      if (!m) return m;
      if (out.budget.currency.empty()) {
        out.budget.currency = m->currency();
        out.budget.currency_location = field.location();
      } else if (m->currency() != out.budget.currency) {
        field.Error(std::string(key) + " is in " + m->currency() + ", the budget in " + out.budget.currency +
                    ": one budget, one currency");
        return std::nullopt;
      }
      return m;
    };
    out.budget.limit = money("limit");
    out.budget.cloud_limit = money("cloudLimit");
    if (auto m = money("spent")) out.budget.spent = *m;
    if (auto m = money("cloudSpent")) out.budget.cloud_spent = *m;
    for (const YamlField& level : budget.Child("alertAt").Elements()) {
      if (auto v = level.Number(0, 10, Required::kYes)) out.budget.alert_at.push_back(*v);
    }
  }
}

namespace {

// A witness's signed-note verifier key, NAME+<8 hex>+base64(0x04 || 32-byte key), checked
// as far as its shape; the key id is checked against the key when the controller starts.
bool WitnessVerifierKeyShape(const std::string& vkey) {
  const size_t first = vkey.find('+');
  const size_t second = first == std::string::npos ? first : vkey.find('+', first + 1);
  if (first == 0 || second == std::string::npos || second - first != 9) return false;
  for (size_t i = 0; i < first; ++i) {
    if (static_cast<unsigned char>(vkey[i]) <= ' ') return false;
  }
  for (size_t i = first + 1; i < second; ++i) {
    if (std::isxdigit(static_cast<unsigned char>(vkey[i])) == 0) return false;
  }
  Result<std::string> typed = Base64Decode(std::string_view(vkey).substr(second + 1));
  return typed.ok() && typed->size() == 33 && static_cast<unsigned char>((*typed)[0]) == 0x04;
}

}  // namespace

void DecodeAuditWitnessSpec(const YamlField& spec, model::AuditWitness& out) {
  if (!spec.ExpectObject({"url", "vkey", "tls"}, Required::kYes)) return;
  if (auto v = spec.Child("url").String(Required::kYes)) {
    if (v->rfind("https://", 0) != 0) {
      spec.Child("url").Error("must be an https:// URL (requests go to <url>/add-checkpoint)");
    } else {
      out.url = *v;
    }
  }
  if (auto v = spec.Child("vkey").String(Required::kYes)) {
    if (!WitnessVerifierKeyShape(*v)) {
      spec.Child("vkey").Error(
          "must be the witness's verifier key NAME+KEYID+BASE64 of type 0x04 (gpufed audit witness --print-vkey)");
    } else {
      out.vkey = *v;
    }
  }
  YamlField tls = spec.Child("tls");
  if (tls.ExpectObject({"caFile", "certFile", "keyFile"}, Required::kYes)) {
    if (auto v = tls.Child("caFile").String(Required::kYes)) out.tls.ca_file = *v;
    if (auto v = tls.Child("certFile").String()) out.tls.cert_file = *v;
    if (auto v = tls.Child("keyFile").String()) out.tls.key_file = *v;
  }
}

void DecodeAuditSinkSpec(const YamlField& spec, model::AuditSink& out) {
  if (!spec.ExpectObject({"type", "endpoint", "tls", "lagLimit", "batchSize", "onLagLimit"}, Required::kYes)) return;
  if (auto v = spec.Child("type").Enum({"syslog-tls", "https"}, Required::kYes)) {
    out.type = *v == "https" ? model::AuditSinkType::kHttps : model::AuditSinkType::kSyslogTls;
  }
  if (auto v = spec.Child("endpoint").String(Required::kYes)) out.endpoint = *v;
  YamlField tls = spec.Child("tls");
  if (tls.ExpectObject({"caFile", "certFile", "keyFile", "serverName"})) {
    if (auto v = tls.Child("caFile").String()) out.tls.ca_file = *v;
    if (auto v = tls.Child("certFile").String()) out.tls.cert_file = *v;
    if (auto v = tls.Child("keyFile").String()) out.tls.key_file = *v;
    if (auto v = tls.Child("serverName").String()) out.tls.server_name = *v;
  }
  YamlField lag = spec.Child("lagLimit");
  if (lag.ExpectObject({"records", "seconds"})) {
    if (auto v = lag.Child("records").Int(0, int64_t{1} << 40)) out.lag_limit_records = *v;
    if (auto v = lag.Child("seconds").DurationValue()) out.lag_limit_time = *v;
  }
  if (auto v = spec.Child("batchSize").Int(1, 100000)) out.batch_size = static_cast<int>(*v);
  if (auto v = spec.Child("onLagLimit").Enum({"alert", "pause"})) {
    out.on_lag_limit = *v == "pause" ? model::LagAction::kPause : model::LagAction::kAlert;
  }
}

}  // namespace gpufed::config
