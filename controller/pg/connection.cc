#include "controller/pg/connection.h"

#include <libpq-fe.h>

#include <array>
#include <cstdlib>
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

bool Connection::Healthy() const { return PQstatus(conn_) == CONNECTION_OK; }

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
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& param : params) values.push_back(param.text() ? param.text()->c_str() : nullptr);
  // Text format in and out (null formats), types inferred by the server from the SQL.
  if (PQsendQueryParams(conn_, statement.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                        nullptr, 0) == 0) {
    return LostOrServerError(purpose, "could not send the statement: " + OneLine(PQerrorMessage(conn_)));
  }
  return ReadReply(purpose);
}

Result<Rows> Connection::ExecScript(std::string_view purpose, std::string_view script) {
  const std::string text(script);
  if (PQsendQuery(conn_, text.c_str()) == 0) {
    return LostOrServerError(purpose, "could not send the script: " + OneLine(PQerrorMessage(conn_)));
  }
  return ReadReply(purpose);
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
    } else if (status == PGRES_EMPTY_QUERY) {
      // Nothing ran.
    } else if (failure.ok() && !over_limit) {
      const std::string sqlstate = Field(result.get(), PG_DIAG_SQLSTATE);
      if (sqlstate.empty()) {
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
