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
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/pg/connection_policy.h"
#include "controller/pg/rows.h"
#include "controller/pg/statement_cache.h"

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
  // Server-side prepared statements ExecPrepared keeps per connection; past this many the
  // least recently used is deallocated (each holds a parse tree and maybe a plan on the
  // server, for the session's life).
  size_t max_prepared_statements = 256;
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

  // Runs `sql` as a named prepared statement of this connection: the first run of a text
  // prepares it (Parse) in the same round trip as its execution, later runs skip the parse
  // and the planning the server can reuse. Same errors as Exec. A statement the server no
  // longer holds (DISCARD ALL, DEALLOCATE, SQLSTATE 26000) is prepared again and run once
  // more when no transaction is open; inside one, that error has aborted the transaction,
  // so it is Aborted (redo the transaction) and the next run prepares afresh. Nothing is
  // prepared while the session's transaction has failed (the server would refuse it): the
  // statement then runs unnamed, as Exec, and fails as any statement there does.
  Result<Rows> ExecPrepared(std::string_view purpose, const std::string& sql, std::span<const Param> params);

  // Queues a constant command without parameters whose outcome the caller need not know
  // before its next statement (BEGIN, SAVEPOINT, RELEASE SAVEPOINT): it is sent ahead of
  // the next Exec, ExecPrepared or ExecScript in one pipeline (libpq's pipeline mode, one
  // round trip for both), and its error, if any, is that call's error (the statements
  // after a failed one in the pipeline do not run, as if each had been sent alone and the
  // caller had stopped at the first error). Only for commands of the transaction that
  // follows: DropDeferred (before a ROLLBACK) throws them away unsent. When a deferred
  // command fails inside a transaction, every later call but ROLLBACK fails with its error
  // until the transaction ends: a later statement (a ROLLBACK TO SAVEPOINT that now finds
  // an older savepoint) must not go on as if the command had run.
  void Defer(std::string purpose, std::string sql);
  // Queues a statement with parameters the same way, run as ExecPrepared would (by name,
  // prepared in the same pipeline the first time): a write whose reply the caller does not
  // read. When it fails and only statements were queued after it, the next call fails
  // with its error (neither it nor anything after it ran) and nothing is poisoned: no
  // savepoint command was skipped, so the caller may roll back to a savepoint set before
  // it, as after any failed statement. A command queued after it poisons as above.
  void DeferStatement(std::string purpose, std::string sql, std::vector<Param> params);
  void DropDeferred() { deferred_.clear(); }
  size_t deferred() const { return deferred_.size(); }
  // Whether a DeferStatement write waits to be sent (its outcome still unknown).
  bool HasDeferredStatement() const;

  // Runs a script of constant SQL, several statements separated by ';' (migrations), with
  // no parameters (the simple query protocol: nothing in it may come from input). The
  // Rows are the last statement's.
  Result<Rows> ExecScript(std::string_view purpose, std::string_view script);

  // False once libpq has seen the connection fail (or a pipeline could not be sent whole);
  // it never recovers.
  bool Healthy() const;
  // The server is inside a transaction block (open or failed), as of its last reply.
  bool InTransaction() const;
  // Exchanges with the server that waited for a reply (one per Exec, ExecPrepared or
  // ExecScript, deferred commands included): what tests count instead of timing.
  uint64_t round_trips() const { return round_trips_; }
  // Statements ExecPrepared holds prepared on the server now.
  size_t prepared_statements() const { return cache_.size(); }
  // The server process serving this connection (pg_stat_activity.pid).
  int BackendPid() const;
  // Whether the session runs over TLS.
  bool UsesTls() const;
  // The policy's Redacted() form, for logs.
  const std::string& target() const { return target_; }
  const ConnectOptions& options() const { return options_; }

 private:
  struct Deferred {
    std::string purpose;
    std::string sql;
    std::vector<Param> params;
    bool statement = false;  // DeferStatement's (prepared); else a command (BEGIN, SAVEPOINT)
  };
  // What Run sends after the deferred commands: a statement, unnamed or by name.
  struct Statement {
    std::string_view purpose;
    const std::string* sql = nullptr;
    std::span<const Param> params;
    bool prepare = false;  // by name, from (or into) the statement cache
  };

  Connection(pg_conn* conn, std::string target, ConnectOptions options)
      : conn_(conn), target_(std::move(target)), options_(options), cache_(options.max_prepared_statements) {}
  Status LostOrServerError(std::string_view purpose, const std::string& fallback) const;
  void CancelRunningStatement() const;
  Result<Rows> ReadReply(std::string_view purpose);
  // poisoned_ when it holds and `sql` is not the ROLLBACK that ends it.
  Status Poisoned(const std::string* sql);
  // Sends the deferred commands and `statement` (when it has SQL), then reads their
  // replies: in one pipeline when there is more than one thing to send.
  Result<Rows> Run(const Statement& statement, bool retried = false);
  Result<Rows> RunPipeline(const Statement& statement, const std::string* cached_name, const std::string& new_name);
  // Deallocates the statements the cache let go (never inside a failed transaction, where
  // the server refuses even that: those stay prepared until the session ends).
  void Deallocate(const std::vector<std::string>& names);

  pg_conn* conn_;
  std::string target_;
  ConnectOptions options_;
  StatementCache cache_;
  std::vector<Deferred> deferred_;
  bool broken_ = false;          // a pipeline could not be sent or read whole
  std::string failed_sqlstate_;  // the SQLSTATE of the last ReadReply's error
  Status poisoned_;              // a deferred command's failure, until the transaction ends
  uint64_t round_trips_ = 0;
};

}  // namespace gpufed::pg
