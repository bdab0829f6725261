#pragma once
// What gpufed accepts as a PostgreSQL connection target, checked before libpq is asked to
// connect. A libpq URI (postgresql://...) or key=value conninfo is parsed with
// PQconninfoParse (multi-host lists included) and held to gpufed's rules:
//   - no password in the text, nor in PGPASSWORD: passwords come from a passfile
//     (passfile=... or PGPASSFILE, else ~/.pgpass), so they never reach a command line,
//     a config file or a log;
//   - every host that is not a Unix-socket folder (a path starting with '/') is reached
//     with sslmode=verify-full: the server's certificate must chain to the root given by
//     sslrootcert and name the host;
//   - no `service` (a service file could bring a password or a host past these rules);
//   - connect_timeout and application_name get defaults when absent; target_session_attrs
//     (a multi-host list that follows the primary) is allowed and checked.
// Nothing of the text is ever repeated in an error: a refused string may hold a secret.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::pg {

struct PolicyDefaults {
  int connect_timeout_seconds = 5;
  std::string application_name = "gpufed";
};

// Reads an environment variable (nullptr when unset). Injected so tests need not touch the
// process's environment; the default reads getenv.
using EnvironmentLookup = std::function<const char*(const char*)>;
EnvironmentLookup ProcessEnvironment();

class ConnectionPolicy {
 public:
  // Parses and checks `uri_or_conninfo`. InvalidArgument says what to change, never what
  // was written. Environment variables libpq would read for an absent setting (PGHOST,
  // PGHOSTADDR, PGSSLMODE) are judged as if written, then written into the parameters, so
  // the environment cannot weaken what was checked.
  static Result<ConnectionPolicy> Parse(std::string_view uri_or_conninfo, const PolicyDefaults& defaults = {},
                                        const EnvironmentLookup& environment = ProcessEnvironment());

  // Keyword/value pairs for PQconnectdbParams (expand_dbname = 0), in parse order.
  const std::vector<std::pair<std::string, std::string>>& parameters() const { return parameters_; }
  // The value of a keyword, or "" when absent.
  std::string Get(std::string_view keyword) const;
  // The hosts in order: Unix-socket folders and TCP names or addresses.
  const std::vector<std::string>& hosts() const { return hosts_; }
  bool AllHostsAreSockets() const;

  // A form safe for logs: host(s), port(s), dbname, user, sslmode, target_session_attrs,
  // application_name; nothing else (no file paths beyond the socket folders, no options).
  std::string Redacted() const;

  // The same policy with `keyword` set to `value` (tests, and callers that derive a
  // connection, such as one to another database). Refuses `password` and `service`.
  Result<ConnectionPolicy> With(std::string_view keyword, std::string_view value) const;

 private:
  ConnectionPolicy() = default;
  static Result<ConnectionPolicy> FromParameters(std::vector<std::pair<std::string, std::string>> parameters,
                                                 const PolicyDefaults& defaults, const EnvironmentLookup& environment);
  void Set(std::string_view keyword, std::string value);

  std::vector<std::pair<std::string, std::string>> parameters_;
  std::vector<std::string> hosts_;
};

// Splits a libpq comma-separated list ("a,b,,c"): empty items are kept (libpq reads an
// empty host as its default, a Unix socket).
std::vector<std::string> SplitHostList(std::string_view list);

}  // namespace gpufed::pg
