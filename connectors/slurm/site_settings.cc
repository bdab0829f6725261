#include "connectors/slurm/site_settings.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gpufed::connectors::slurm {
namespace {

constexpr size_t kMaxAnnotationBytes = size_t{64} * 1024;
constexpr size_t kMaxAccountEntries = 1000;
constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxPathBytes = 1024;

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Slurm account and QOS names: letters, digits, '_', '-', '.'.
bool IsSlurmName(const std::string& s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
}

// gpufed tenant names (lower-case letters, digits, '-', '.'), or "*".
bool IsTenantName(const std::string& s) {
  if (s == "*") return true;
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '-' || c == '.'; });
}

Status Bad(const model::Cluster& cluster, const char* annotation, const std::string& problem) {
  return InvalidArgument("cluster " + cluster.metadata.name + ": annotation " + annotation + ": " + problem);
}

Result<std::map<std::string, SlurmAccount>> ParseAccounts(const model::Cluster& cluster, const std::string& text) {
  std::map<std::string, SlurmAccount> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string entry = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) continue;
    if (out.size() >= kMaxAccountEntries) {
      return Bad(cluster, kAccountsAnnotation, "more than " + std::to_string(kMaxAccountEntries) + " entries");
    }
    size_t eq = entry.find('=');
    if (eq == std::string::npos) {
      return Bad(cluster, kAccountsAnnotation, "entry '" + entry + "' is not tenant=account[/qos]");
    }
    std::string tenant = Trim(entry.substr(0, eq));
    std::string value = Trim(entry.substr(eq + 1));
    SlurmAccount account;
    size_t slash = value.find('/');
    account.account = Trim(value.substr(0, slash));
    if (slash != std::string::npos) account.qos = Trim(value.substr(slash + 1));
    if (!IsTenantName(tenant)) return Bad(cluster, kAccountsAnnotation, "'" + tenant + "' is not a tenant name or *");
    if (!IsSlurmName(account.account)) {
      return Bad(cluster, kAccountsAnnotation,
                 "tenant " + tenant + ": '" + account.account + "' is not a Slurm account name");
    }
    if (slash != std::string::npos && !IsSlurmName(account.qos)) {
      return Bad(cluster, kAccountsAnnotation, "tenant " + tenant + ": '" + account.qos + "' is not a Slurm QOS name");
    }
    if (!out.emplace(tenant, account).second)
      return Bad(cluster, kAccountsAnnotation, "tenant " + tenant + " is listed twice");
  }
  return out;
}

Status CheckWorkDir(const model::Cluster& cluster, const std::string& dir) {
  if (dir.empty() || dir.front() != '/')
    return Bad(cluster, kWorkDirAnnotation, "'" + dir + "' is not an absolute path");
  if (dir.size() > kMaxPathBytes) return Bad(cluster, kWorkDirAnnotation, "longer than 1024 bytes");
  for (unsigned char c : dir) {
    // '%' starts a Slurm file-name pattern (%j, %u) in the output path built from it.
    if (c < 0x20 || c == 0x7f || c == '%') return Bad(cluster, kWorkDirAnnotation, "holds a control character or '%'");
  }
  if (("/" + dir + "/").find("/../") != std::string::npos) return Bad(cluster, kWorkDirAnnotation, "holds '..'");
  std::string trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  for (const char* shared : {"/tmp", "/var/tmp", "/dev/shm"}) {
    // Anyone may create files there: predictable output names could be planted links.
    if (trimmed == shared)
      return Bad(cluster, kWorkDirAnnotation, dir + " is writable by every user; use a folder of its own");
  }
  return Status::Ok();
}

}  // namespace

SlurmAccount SiteSettings::AccountFor(const std::string& tenant) const {
  auto it = accounts.find(tenant);
  if (it != accounts.end()) return it->second;
  it = accounts.find("*");
  return it != accounts.end() ? it->second : SlurmAccount{};
}

Result<SiteSettings> ReadSiteSettings(const model::Cluster& cluster) {
  SiteSettings out;
  const std::map<std::string, std::string>& annotations = cluster.metadata.annotations;
  for (const char* key : {kAccountsAnnotation, kWorkDirAnnotation, kAllowPlainHttpAnnotation}) {
    auto it = annotations.find(key);
    if (it != annotations.end() && it->second.size() > kMaxAnnotationBytes)
      return Bad(cluster, key, "longer than 64 KiB");
  }
  if (auto it = annotations.find(kAccountsAnnotation); it != annotations.end()) {
    Result<std::map<std::string, SlurmAccount>> accounts = ParseAccounts(cluster, it->second);
    if (!accounts.ok()) return accounts.status();
    out.accounts = std::move(accounts).value();
  }
  if (auto it = annotations.find(kWorkDirAnnotation); it != annotations.end()) {
    GPUFED_RETURN_IF_ERROR(CheckWorkDir(cluster, it->second));
    out.work_dir = it->second;
  }
  if (auto it = annotations.find(kAllowPlainHttpAnnotation); it != annotations.end()) {
    if (it->second != "loopback") {
      return Bad(cluster, kAllowPlainHttpAnnotation,
                 "'" + it->second + "' is not accepted: the only value is \"loopback\" (the JWT goes in clear text)");
    }
    out.allow_plain_http_loopback = true;
  }
  return out;
}

bool IsLoopbackHost(const std::string& host) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  std::string lower = h;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

std::string UrlHost(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  std::string rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = rest.rfind('@');  // user info is not the host
  if (at != std::string::npos) rest = rest.substr(at + 1);
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    return close == std::string::npos ? "" : rest.substr(0, close + 1);
  }
  return rest.substr(0, rest.find(':'));
}

Status CheckEndpoint(const std::string& cluster, const std::string& endpoint, const SiteSettings& site) {
  if (endpoint.rfind("https://", 0) == 0) return Status::Ok();
  if (endpoint.rfind("http://", 0) != 0) return Status::Ok();  // the factory names the bad scheme
  std::string host = UrlHost(endpoint);
  std::string where = "cluster " + cluster + ": connector.endpoint " + endpoint;
  if (!IsLoopbackHost(host)) {
    return InvalidArgument(where + " is plain http to a host that is not loopback: every request carries the " +
                           "Slurm JWT, which would travel in clear text; use https:// (slurmrestd behind a TLS proxy)");
  }
  if (!site.allow_plain_http_loopback) {
    return InvalidArgument(where + " is plain http: every request carries the Slurm JWT in clear text; use https://, " +
                           "or, for a slurmrestd on this machine's loopback only, set the annotation " +
                           kAllowPlainHttpAnnotation + ": loopback");
  }
  return Status::Ok();
}

}  // namespace gpufed::connectors::slurm
