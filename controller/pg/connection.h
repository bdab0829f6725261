#pragma once
// One libpq connection (PGconn), owned for its life: closed when the Connection is
// destroyed. Statements are parameterised ($1..$n, text format): values never become SQL
// text, and an error names the statement's purpose, never its parameters.
//
// Not thread-safe: one thread uses a Connection at a time (libpq's rule too).
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/pg/connection_policy.h"
#include "controller/pg/rows.h"

struct pg_conn;  // libpq's PGconn, kept out of gpufed's headers

namespace gpufed::pg {

// What one reply may make gpufed allocate. A reply past either limit fails its statement
// with ResourceExhausted (the server is asked to cancel it and the rest is read and
// dropped, row by row), and the connection stays usable. libpq still holds one row whole
// while it is read: a single row is bounded by the server (1 GB per field), not here.
struct ReplyLimits {
  size_t max_rows = 100'000;
  size_t max_bytes = size_t{64} << 20;
};

struct ConnectOptions {
  // Every statement of the session: a hung query fails (DeadlineExceeded) instead of
  // holding a pass or an elector step.
  Duration statement_timeout = Duration::FromSeconds(30);
  // A session idle inside a transaction this long is ended by the server. A leader paused
  // (SIGSTOP, a long GC-like stall, a partition) inside a fenced write holds a FOR SHARE
  // lock on the lease row; this bounds how long a takeover waits for it (controller/ha).
  Duration idle_in_transaction_timeout = Duration::FromSeconds(5);
  ReplyLimits limits;
};

// A statement parameter in text form, or NULL.
class Param {
 public:
  static Param Null() { return Param(std::nullopt); }
  Param(std::string_view text) : text_(std::string(text)) {}  // NOLINT: implicit by design
  Param(const char* text) : text_(std::string(text)) {}       // NOLINT: implicit by design
  Param(const std::string& text) : text_(text) {}             // NOLINT: implicit by design
  Param(int64_t value) : text_(std::to_string(value)) {}      // NOLINT: implicit by design
  Param(int value) : text_(std::to_string(value)) {}          // NOLINT: implicit by design
  Param(bool value) : text_(value ? "t" : "f") {}             // NOLINT: implicit by design

  const std::optional<std::string>& text() const { return text_; }

 private:
  explicit Param(std::optional<std::string> text) : text_(std::move(text)) {}
  std::optional<std::string> text_;
};

class Connection {
 public:
  // Connects as `policy` says (libpq tries each host in order) and sets the session's
  // timeouts. Unavailable with libpq's reason when no host accepts (refused, TLS
  // verification failed, authentication failed, no primary for target_session_attrs);
  // the reason names hosts, never a password.
  static Result<std::unique_ptr<Connection>> Open(const ConnectionPolicy& policy, const ConnectOptions& options = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one statement. `purpose` ("read the lease", "record migration 3") is what an
  // error names. Errors: as sqlstate.h maps them; Unavailable when the connection is lost
  // (Healthy() is then false and the owner opens a new one); ResourceExhausted past the
  // reply limits.
  Result<Rows> Exec(std::string_view purpose, std::string_view sql, std::initializer_list<Param> params = {});
  Result<Rows> Exec(std::string_view purpose, std::string_view sql, std::span<const Param> params);

  // Runs a script of constant SQL, several statements separated by ';' (migrations), with
  // no parameters (the simple query protocol: nothing in it may come from input). The
  // Rows are the last statement's.
  Result<Rows> ExecScript(std::string_view purpose, std::string_view script);

  // False once libpq has seen the connection fail; it never recovers.
  bool Healthy() const;
  // The server process serving this connection (pg_stat_activity.pid).
  int BackendPid() const;
  // Whether the session runs over TLS.
  bool UsesTls() const;
  // The policy's Redacted() form, for logs.
  const std::string& target() const { return target_; }
  const ConnectOptions& options() const { return options_; }

 private:
  Connection(pg_conn* conn, std::string target, ConnectOptions options)
      : conn_(conn), target_(std::move(target)), options_(options) {}
  Status LostOrServerError(std::string_view purpose, const std::string& fallback) const;
  void CancelRunningStatement() const;
  Result<Rows> ReadReply(std::string_view purpose);

  pg_conn* conn_;
  std::string target_;
  ConnectOptions options_;
};

}  // namespace gpufed::pg
