#include "controller/pg/connection_policy.h"

#include <libpq-fe.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <memory>

namespace gpufed::pg {
namespace {

constexpr std::string_view kPasswordAdvice =
    "put the password in a passfile (passfile=PATH in the URI, or PGPASSFILE; mode 0600), never in the URI, "
    "the command line or the environment";

// Keywords Redacted() may show: where and as whom, never how to authenticate.
constexpr std::array<std::string_view, 7> kLoggable = {
    "host", "hostaddr", "port", "dbname", "user", "sslmode", "target_session_attrs"};

constexpr std::array<std::string_view, 6> kSslModes = {"disable", "allow",     "prefer",
                                                       "require", "verify-ca", "verify-full"};

constexpr std::array<std::string_view, 6> kSessionAttrs = {"any",     "read-write", "read-only",
                                                           "primary", "standby",    "prefer-standby"};

bool IsSocketFolder(std::string_view host) { return host.empty() || host.front() == '/'; }

struct OptionsDeleter {
  void operator()(PQconninfoOption* options) const { PQconninfoFree(options); }
};

}  // namespace

EnvironmentLookup ProcessEnvironment() {
  return [](const char* name) -> const char* { return std::getenv(name); };  // NOLINT(concurrency-mt-unsafe)
}

std::vector<std::string> SplitHostList(std::string_view list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    items.emplace_back(list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

Result<ConnectionPolicy> ConnectionPolicy::Parse(std::string_view uri_or_conninfo, const PolicyDefaults& defaults,
                                                 const EnvironmentLookup& environment) {
  const std::string text(uri_or_conninfo);
  char* parse_error = nullptr;
  std::unique_ptr<PQconninfoOption, OptionsDeleter> options(PQconninfoParse(text.c_str(), &parse_error));
  if (options == nullptr) {
    // libpq's message quotes the text it could not read, which may be the password: say
    // only that it did not parse.
    PQfreemem(parse_error);
    return InvalidArgument(
        "the PostgreSQL connection string is neither a valid libpq URI (postgresql://...) nor key=value "
        "conninfo (its text is not repeated here: it may hold a secret)");
  }
  std::vector<std::pair<std::string, std::string>> parameters;
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (option->val != nullptr) parameters.emplace_back(option->keyword, option->val);
  }
  return FromParameters(std::move(parameters), defaults, environment);
}

Result<ConnectionPolicy> ConnectionPolicy::FromParameters(std::vector<std::pair<std::string, std::string>> parameters,
                                                          const PolicyDefaults& defaults,
                                                          const EnvironmentLookup& environment) {
  ConnectionPolicy policy;
  policy.parameters_ = std::move(parameters);
  // An empty password= counts too: the text meant to carry one.
  if (std::any_of(policy.parameters_.begin(), policy.parameters_.end(),
                  [](const auto& kv) { return kv.first == "password"; })) {
    return InvalidArgument("the PostgreSQL connection string holds a password: " + std::string(kPasswordAdvice));
  }
  if (const char* env_password = environment("PGPASSWORD"); env_password != nullptr) {
    return InvalidArgument("PGPASSWORD is set: " + std::string(kPasswordAdvice) + ", and unset PGPASSWORD");
  }
  if (!policy.Get("service").empty() || environment("PGSERVICE") != nullptr) {
    return InvalidArgument(
        "a PostgreSQL service (service= or PGSERVICE) is not accepted: a service file could bring a password or an "
        "unchecked host; write host, port, dbname, user and sslmode in the URI");
  }
  // What libpq would take from the environment for an absent setting is judged (and then
  // pinned) as if written.
  for (const char* keyword : {"host", "hostaddr", "sslmode"}) {
    if (!policy.Get(keyword).empty()) continue;
    std::string variable = std::string("PG") + keyword;
    std::transform(variable.begin(), variable.end(), variable.begin(), [](unsigned char c) { return std::toupper(c); });
    if (const char* value = environment(variable.c_str()); value != nullptr && *value != '\0') {
      policy.Set(keyword, value);
    }
  }

  const std::vector<std::string> hosts = SplitHostList(policy.Get("host"));
  const std::string hostaddr_list = policy.Get("hostaddr");
  const std::vector<std::string> hostaddrs =
      hostaddr_list.empty() ? std::vector<std::string>{} : SplitHostList(hostaddr_list);
  if (!hostaddrs.empty() && !policy.Get("host").empty() && hostaddrs.size() != hosts.size()) {
    return InvalidArgument("the PostgreSQL connection string lists " + std::to_string(hosts.size()) + " hosts but " +
                           std::to_string(hostaddrs.size()) + " hostaddrs; give one hostaddr per host");
  }
  const size_t entries = std::max(hosts.size(), hostaddrs.size());
  bool needs_tls = false;
  for (size_t i = 0; i < entries; ++i) {
    const bool has_address = i < hostaddrs.size() && !hostaddrs[i].empty();
    const std::string host = i < hosts.size() ? hosts[i] : std::string();
    if (has_address || !IsSocketFolder(host)) needs_tls = true;
    policy.hosts_.push_back(has_address && host.empty() ? hostaddrs[i] : host);
  }
  if (needs_tls && policy.Get("sslmode") != "verify-full") {
    // Only libpq's own mode names are repeated: anything else is text from the string.
    const std::string mode = policy.Get("sslmode");
    const bool known = std::find(kSslModes.begin(), kSslModes.end(), mode) != kSslModes.end();
    return InvalidArgument(
        "the PostgreSQL connection string reaches a host over TCP without sslmode=verify-full (found " +
        (mode.empty() ? std::string("none: libpq's default is prefer")
         : known      ? "sslmode=" + mode
                      : "an unknown sslmode") +
        "): add sslmode=verify-full and sslrootcert=PATH (the CA that issued the server's certificate), or use a "
        "Unix-socket folder as the host");
  }
  if (std::string attrs = policy.Get("target_session_attrs"); !attrs.empty()) {
    if (std::find(kSessionAttrs.begin(), kSessionAttrs.end(), attrs) == kSessionAttrs.end()) {
      return InvalidArgument(
          "target_session_attrs is not one of any, read-write, read-only, primary, standby, prefer-standby");
    }
  }
  if (policy.Get("connect_timeout").empty()) {
    policy.Set("connect_timeout", std::to_string(defaults.connect_timeout_seconds));
  }
  if (policy.Get("application_name").empty()) policy.Set("application_name", defaults.application_name);
  return policy;
}

std::string ConnectionPolicy::Get(std::string_view keyword) const {
  for (const auto& [key, value] : parameters_) {
    if (key == keyword) return value;
  }
  return {};
}

void ConnectionPolicy::Set(std::string_view keyword, std::string value) {
  for (auto& [key, existing] : parameters_) {
    if (key == keyword) {
      existing = std::move(value);
      return;
    }
  }
  parameters_.emplace_back(keyword, std::move(value));
}

bool ConnectionPolicy::AllHostsAreSockets() const {
  return Get("hostaddr").empty() && std::all_of(hosts_.begin(), hosts_.end(), IsSocketFolder);
}

std::string ConnectionPolicy::Redacted() const {
  std::string out;
  for (std::string_view keyword : kLoggable) {
    std::string value = Get(keyword);
    if (value.empty()) continue;
    if (!out.empty()) out += ' ';
    out += std::string(keyword) + "=" + value;
  }
  return out.empty() ? std::string("<libpq defaults>") : out;
}

Result<ConnectionPolicy> ConnectionPolicy::With(std::string_view keyword, std::string_view value) const {
  auto parameters = parameters_;
  bool replaced = false;
  for (auto& [key, existing] : parameters) {
    if (key == keyword) {
      existing = std::string(value);
      replaced = true;
    }
  }
  if (!replaced) parameters.emplace_back(keyword, value);
  // The defaults are already in the parameters; the environment was read at Parse.
  return FromParameters(std::move(parameters), PolicyDefaults{}, [](const char*) -> const char* { return nullptr; });
}

}  // namespace gpufed::pg
