#include "controller/pg/connection.h"

#include <libpq-fe.h>

#include <array>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "controller/pg/sqlstate.h"

namespace gpufed::pg {
namespace {

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// libpq's messages end with a newline and may span lines; one line reads better in a Status.
std::string OneLine(const char* text) {
  std::string out = text == nullptr ? std::string() : std::string(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  return out;
}

std::string Field(const PGresult* result, int field) {
  const char* value = PQresultErrorField(result, field);
  return value == nullptr ? std::string() : std::string(value);
}

std::string MillisSetting(Duration d) { return std::to_string(d.millis()) + "ms"; }

// libpq prints what the server sends besides errors (notices, warnings) to standard error
// by default, past gpufed's log and its format. The session asks for warnings and above
// only (client_min_messages) and drops those too: the server logs its warnings itself
// (log_min_messages), and callers learn of failures from Status values.
void DropNotice(void* /*arg*/, const char* /*message*/) {}

}  // namespace

Result<std::unique_ptr<Connection>> Connection::Open(const ConnectionPolicy& policy, const ConnectOptions& options) {
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  for (const auto& [keyword, value] : policy.parameters()) {
    keywords.push_back(keyword.c_str());
    values.push_back(value.c_str());
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* raw = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/0);
  if (raw == nullptr) return Unavailable("connect to PostgreSQL (" + policy.Redacted() + "): out of memory");
  // Owned from here: a failed connect is finished by the destructor too.
  std::unique_ptr<Connection> connection(new Connection(raw, policy.Redacted(), options));
  if (PQstatus(raw) != CONNECTION_OK) {
    // libpq's reason names the host and what failed (TLS verification, authentication);
    // libpq never puts a password in it.
    return Unavailable("connect to PostgreSQL (" + policy.Redacted() + "): " + OneLine(PQerrorMessage(raw)));
  }
  PQsetNoticeProcessor(raw, DropNotice, nullptr);
  auto set =
      connection->Exec("set the session's timeouts",
                       "SELECT set_config('statement_timeout', $1, false), "
                       "set_config('idle_in_transaction_session_timeout', $2, false), "
                       "set_config('client_min_messages', 'warning', false)",
                       {MillisSetting(options.statement_timeout), MillisSetting(options.idle_in_transaction_timeout)});
  if (!set.ok()) return set.status();
  return connection;
}

Connection::~Connection() { PQfinish(conn_); }

bool Connection::Healthy() const { return !broken_ && PQstatus(conn_) == CONNECTION_OK; }

bool Connection::InTransaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR;
}

void Connection::Defer(std::string purpose, std::string sql) {
  if (!poisoned_.ok()) return;  // nothing more runs in this transaction
  deferred_.push_back(Deferred{std::move(purpose), std::move(sql), {}, false});
}

void Connection::DeferStatement(std::string purpose, std::string sql, std::vector<Param> params) {
  if (!poisoned_.ok()) return;
  deferred_.push_back(Deferred{std::move(purpose), std::move(sql), std::move(params), true});
}

int Connection::BackendPid() const { return PQbackendPID(conn_); }

bool Connection::UsesTls() const { return PQsslInUse(conn_) == 1; }

Result<Rows> Connection::Exec(std::string_view purpose, std::string_view sql, std::initializer_list<Param> params) {
  return Exec(purpose, sql, std::span<const Param>(params.begin(), params.size()));
}

Status Connection::LostOrServerError(std::string_view purpose, const std::string& fallback) const {
  if (!Healthy()) {
    return Unavailable(std::string(purpose) + ": the connection to PostgreSQL was lost (" + target_ + ")");
  }
  return Internal(std::string(purpose) + ": " + fallback);
}

void Connection::CancelRunningStatement() const {
  PGcancel* cancel = PQgetCancel(conn_);
  if (cancel == nullptr) return;
  std::array<char, 256> error{};
  // Best effort: when the cancel does not arrive, the rest of the reply is still read and
  // dropped row by row, so memory stays bounded either way.
  (void)PQcancel(cancel, error.data(), static_cast<int>(error.size()));
  PQfreeCancel(cancel);
}

Result<Rows> Connection::Exec(std::string_view purpose, std::string_view sql, std::span<const Param> params) {
  const std::string statement(sql);
  return Run(Statement{purpose, &statement, params, /*prepare=*/false});
}

Result<Rows> Connection::ExecPrepared(std::string_view purpose, const std::string& sql, std::span<const Param> params) {
  return Run(Statement{purpose, &sql, params, /*prepare=*/true});
}

Result<Rows> Connection::ExecScript(std::string_view purpose, std::string_view script) {
  // A script goes by the simple protocol, which a pipeline cannot carry: the deferred
  // commands go first, on their own.
  if (!deferred_.empty()) {
    Result<Rows> flushed = Run(Statement{purpose, nullptr, {}, false});
    if (!flushed.ok()) return flushed.status();
  }
  if (broken_) return LostOrServerError(purpose, "");
  const std::string text(script);
  GPUFED_RETURN_IF_ERROR(Poisoned(&text));
  failed_sqlstate_.clear();
  ++round_trips_;
  if (PQsendQuery(conn_, text.c_str()) == 0) {
    return LostOrServerError(purpose, "could not send the script: " + OneLine(PQerrorMessage(conn_)));
  }
  return ReadReply(purpose);
}

Status Connection::Poisoned(const std::string* sql) {
  if (poisoned_.ok()) return poisoned_;
  if (!InTransaction() || (sql != nullptr && *sql == "ROLLBACK")) {
    poisoned_ = Status::Ok();
    return poisoned_;
  }
  return poisoned_;
}

Result<Rows> Connection::Run(const Statement& statement, bool retried) {
  if (broken_) return LostOrServerError(statement.purpose, "");
  GPUFED_RETURN_IF_ERROR(Poisoned(statement.sql));
  failed_sqlstate_.clear();
  const std::string* cached_name = nullptr;
  std::string new_name;
  // A failed transaction refuses a Parse as it refuses everything: the statement goes
  // unnamed and fails as any would, and nothing enters the cache.
  if (statement.sql != nullptr && statement.prepare && PQtransactionStatus(conn_) != PQTRANS_INERROR) {
    cached_name = cache_.Find(*statement.sql);
    if (cached_name == nullptr) new_name = cache_.NextName();
  }
  Result<Rows> rows = Rows();
  if (!deferred_.empty() || !new_name.empty() || statement.sql == nullptr) {
    rows = RunPipeline(statement, cached_name, new_name);
  } else {
    std::vector<const char*> values;
    values.reserve(statement.params.size());
    for (const Param& param : statement.params) values.push_back(param.text() ? param.text()->c_str() : nullptr);
    ++round_trips_;
    // Text format in and out (null formats), types inferred by the server from the SQL.
    const int sent = cached_name != nullptr
                         ? PQsendQueryPrepared(conn_, cached_name->c_str(), static_cast<int>(values.size()),
                                               values.data(), nullptr, nullptr, 0)
                         : PQsendQueryParams(conn_, statement.sql->c_str(), static_cast<int>(values.size()), nullptr,
                                             values.data(), nullptr, nullptr, 0);
    if (sent == 0) {
      return LostOrServerError(statement.purpose, "could not send the statement: " + OneLine(PQerrorMessage(conn_)));
    }
    rows = ReadReply(statement.purpose);
  }
  if (rows.ok() || cached_name == nullptr || failed_sqlstate_ != "26000") return rows;
  // The server let go of a statement the cache holds (DISCARD ALL, DEALLOCATE): all of them
  // may be gone. Outside a transaction nothing else was undone, so it is prepared again and
  // run once more; inside one the transaction is aborted and only its owner can redo it.
  cache_.Clear();
  if (!InTransaction() && !retried) return Run(statement, /*retried=*/true);
  return Status(StatusCode::kAborted, std::string(statement.purpose) +
                                          ": the server no longer held the prepared statement (DISCARD or "
                                          "DEALLOCATE); the transaction was aborted, redo it");
}

bool Connection::HasDeferredStatement() const {
  return std::any_of(deferred_.begin(), deferred_.end(), [](const Deferred& d) { return d.statement; });
}

Result<Rows> Connection::RunPipeline(const Statement& statement, const std::string* cached_name,
                                     const std::string& new_name) {
  const std::vector<Deferred> deferred = std::move(deferred_);
  deferred_.clear();
  // One exchange: every command, then one Sync. A pipeline that cannot be sent or read
  // whole leaves libpq's state unknown, so the connection is given up (broken_).
  if (PQenterPipelineMode(conn_) == 0) {
    broken_ = true;
    return LostOrServerError(statement.purpose, "could not enter pipeline mode: " + OneLine(PQerrorMessage(conn_)));
  }
  ++round_trips_;
  bool sent = true;
  // A deferred statement goes by name: the cache's, or one prepared in this pipeline
  // (fresh: kept once its Parse succeeded). Not while the transaction has failed.
  const bool may_prepare = PQtransactionStatus(conn_) != PQTRANS_INERROR;
  std::map<std::string, std::string> fresh;  // SQL -> name prepared by this pipeline
  std::vector<bool> parsed(deferred.size(), false);
  for (size_t i = 0; i < deferred.size(); ++i) {
    const Deferred& d = deferred[i];
    std::vector<const char*> args;
    args.reserve(d.params.size());
    for (const Param& param : d.params) args.push_back(param.text() ? param.text()->c_str() : nullptr);
    const int n = static_cast<int>(args.size());
    const std::string* name = d.statement && may_prepare ? cache_.Find(d.sql) : nullptr;
    if (d.statement && may_prepare && name == nullptr) {
      auto [it, inserted] = fresh.try_emplace(d.sql, std::string());
      if (inserted) {
        it->second = cache_.NextName();
        parsed[i] = true;
        sent = sent && PQsendPrepare(conn_, it->second.c_str(), d.sql.c_str(), 0, nullptr) != 0;
      }
      name = &it->second;
    }
    if (name != nullptr) {
      sent = sent && PQsendQueryPrepared(conn_, name->c_str(), n, args.data(), nullptr, nullptr, 0) != 0;
    } else {
      sent = sent && PQsendQueryParams(conn_, d.sql.c_str(), n, nullptr, args.data(), nullptr, nullptr, 0) != 0;
    }
  }
  std::vector<const char*> values;
  values.reserve(statement.params.size());
  for (const Param& param : statement.params) values.push_back(param.text() ? param.text()->c_str() : nullptr);
  const int count = static_cast<int>(values.size());
  const std::string* main_from_fresh = nullptr;
  if (!new_name.empty()) {
    if (auto it = fresh.find(*statement.sql); it != fresh.end()) main_from_fresh = &it->second;
  }
  const bool main_parse = !new_name.empty() && main_from_fresh == nullptr;
  if (statement.sql != nullptr) {
    if (main_from_fresh != nullptr) {
      // A deferred statement of this pipeline prepares the same text: its name serves.
      sent =
          sent && PQsendQueryPrepared(conn_, main_from_fresh->c_str(), count, values.data(), nullptr, nullptr, 0) != 0;
    } else if (!new_name.empty()) {
      sent = sent && PQsendPrepare(conn_, new_name.c_str(), statement.sql->c_str(), 0, nullptr) != 0;
      sent = sent && PQsendQueryPrepared(conn_, new_name.c_str(), count, values.data(), nullptr, nullptr, 0) != 0;
    } else if (cached_name != nullptr) {
      sent = sent && PQsendQueryPrepared(conn_, cached_name->c_str(), count, values.data(), nullptr, nullptr, 0) != 0;
    } else {
      sent = sent &&
             PQsendQueryParams(conn_, statement.sql->c_str(), count, nullptr, values.data(), nullptr, nullptr, 0) != 0;
    }
  }
  sent = sent && PQpipelineSync(conn_) != 0;
  if (!sent) {
    broken_ = true;
    return LostOrServerError(statement.purpose, "could not send the statements: " + OneLine(PQerrorMessage(conn_)));
  }
  // The first error is the call's: what follows it in the pipeline did not run.
  Status first_failure;
  std::string first_sqlstate;
  auto note = [&](const Status& status) {
    if (!status.ok() && first_failure.ok()) {
      first_failure = status;
      first_sqlstate = failed_sqlstate_;
    }
  };
  // Poisoned when a deferred command failed or did not run (the caller's savepoints are
  // then not what it thinks). A failed statement followed by statements alone is the
  // call's error: what did not run is that statement and everything after it, and a
  // savepoint set before it is still there to roll back to.
  bool poison = false;
  std::vector<std::pair<std::string, std::string>> kept;  // fresh statements whose Parse succeeded
  for (size_t i = 0; i < deferred.size(); ++i) {
    const bool clean = first_failure.ok();
    bool parse_ok = true;
    if (parsed[i]) {
      Result<Rows> parse = ReadReply(deferred[i].purpose);
      parse_ok = parse.ok();
      note(parse.status());
    }
    Result<Rows> reply = ReadReply(deferred[i].purpose);
    note(reply.status());
    if (parsed[i] && parse_ok) kept.emplace_back(deferred[i].sql, fresh[deferred[i].sql]);
    if (clean && !first_failure.ok()) {
      poison = !deferred[i].statement;
      for (size_t later = i + 1; later < deferred.size(); ++later) poison = poison || !deferred[later].statement;
    }
  }
  bool prepared = false;
  Result<Rows> rows = Rows();
  if (statement.sql != nullptr) {
    if (main_parse) {
      Result<Rows> parse = ReadReply(statement.purpose);
      prepared = parse.ok();
      note(parse.status());
    }
    rows = ReadReply(statement.purpose);
    note(rows.status());
  }
  ResultPtr sync(PQgetResult(conn_));
  if (sync == nullptr || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC || PQexitPipelineMode(conn_) == 0) {
    broken_ = true;
    return LostOrServerError(statement.purpose, "the pipeline's reply was not read whole");
  }
  failed_sqlstate_ = first_sqlstate;
  if (poison && InTransaction()) poisoned_ = first_failure;
  // A statement the server no longer holds: none of the cache's names can be trusted.
  if (first_sqlstate == "26000") cache_.Clear();
  for (auto& [sql, name] : kept) Deallocate(cache_.Insert(sql, name));
  if (prepared) Deallocate(cache_.Insert(*statement.sql, new_name));
  if (!first_failure.ok()) return first_failure;
  return rows;
}

void Connection::Deallocate(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (PQtransactionStatus(conn_) == PQTRANS_INERROR || !Healthy()) return;
    // The name is gpufed's own ("gpufed_<n>"), never input. A failure only leaves the
    // statement on the server until the session ends.
    ++round_trips_;
    ResultPtr done(PQexec(conn_, ("DEALLOCATE " + name).c_str()));
  }
}

Result<Rows> Connection::ReadReply(std::string_view purpose) {
  // Row by row, so the limits are checked before the rows are all in memory. It cannot
  // fail right after a successful send; if it did, the limits would still be checked.
  (void)PQsetSingleRowMode(conn_);

  Rows rows;
  Status failure;
  bool over_limit = false;
  bool have_columns = false;
  size_t bytes = 0;
  bool statement_done = false;  // a script's next statement starts a new Rows
  while (true) {
    ResultPtr result(PQgetResult(conn_));
    if (result == nullptr) break;
    const ExecStatusType status = PQresultStatus(result.get());
    if (statement_done && failure.ok() && !over_limit) {
      rows = Rows();
      have_columns = false;
      bytes = 0;
    }
    statement_done = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY;
    if (status == PGRES_SINGLE_TUPLE || status == PGRES_TUPLES_OK) {
      if (over_limit || !failure.ok()) continue;  // drained and dropped
      const int columns = PQnfields(result.get());
      if (!have_columns) {
        std::vector<std::string> names;
        names.reserve(static_cast<size_t>(columns));
        for (int c = 0; c < columns; ++c) names.emplace_back(PQfname(result.get(), c));
        rows.SetColumns(std::move(names));
        have_columns = true;
      }
      for (int r = 0; r < PQntuples(result.get()); ++r) {
        if (rows.size() + 1 > options_.limits.max_rows) over_limit = true;
        for (int c = 0; c < columns && !over_limit; ++c) {
          bytes += static_cast<size_t>(PQgetlength(result.get(), r, c)) + 1;
          if (bytes > options_.limits.max_bytes) over_limit = true;
        }
        if (over_limit) break;
        for (int c = 0; c < columns; ++c) {
          if (PQgetisnull(result.get(), r, c) != 0) {
            rows.AppendCell(std::nullopt);
          } else {
            rows.AppendCell(
                std::string(PQgetvalue(result.get(), r, c), static_cast<size_t>(PQgetlength(result.get(), r, c))));
          }
        }
      }
      if (over_limit) CancelRunningStatement();
      if (status == PGRES_TUPLES_OK) rows.SetCommand(PQcmdStatus(result.get()), std::atoll(PQcmdTuples(result.get())));
    } else if (status == PGRES_COMMAND_OK) {
      rows.SetCommand(PQcmdStatus(result.get()), std::atoll(PQcmdTuples(result.get())));
      // The session's prepared statements are gone: none of the cache's names is valid.
      if (rows.command_tag() == "DISCARD ALL" || rows.command_tag() == "DEALLOCATE ALL") cache_.Clear();
    } else if (status == PGRES_EMPTY_QUERY) {
      // Nothing ran.
    } else if (failure.ok() && !over_limit) {
      const std::string sqlstate = Field(result.get(), PG_DIAG_SQLSTATE);
      failed_sqlstate_ = sqlstate;
      if (status == PGRES_PIPELINE_ABORTED) {
        failure = Internal(std::string(purpose) + ": not run: an earlier statement of its pipeline failed");
      } else if (sqlstate.empty()) {
        failure = LostOrServerError(purpose, OneLine(PQresultErrorMessage(result.get())));
      } else {
        failure = StatusFromServerError(purpose, sqlstate, Field(result.get(), PG_DIAG_MESSAGE_PRIMARY),
                                        Field(result.get(), PG_DIAG_CONSTRAINT_NAME));
      }
    }
  }
  if (over_limit) {
    return ResourceExhausted(std::string(purpose) + ": the reply exceeds " + std::to_string(options_.limits.max_rows) +
                             " rows or " + std::to_string(options_.limits.max_bytes) + " bytes");
  }
  if (!failure.ok()) return failure;
  if (!Healthy()) return LostOrServerError(purpose, "");
  return rows;
}

}  // namespace gpufed::pg
