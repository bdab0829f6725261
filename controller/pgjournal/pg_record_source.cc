#include "controller/pgjournal/pg_record_source.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "controller/pgjournal/schema.h"

namespace gpufed::pgjournal {

PgJournalRecordSource::PgJournalRecordSource(std::unique_ptr<pg::Connection> connection)
    : connection_(std::move(connection)) {}

Result<std::unique_ptr<pg::Connection>> ConnectReadOnly(std::string_view uri_or_conninfo) {
  Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(uri_or_conninfo);
  if (!policy.ok()) return policy.status();
  return ConnectReadOnly(*policy);
}

Result<std::unique_ptr<pg::Connection>> ConnectReadOnly(const pg::ConnectionPolicy& policy) {
  Result<std::unique_ptr<pg::Connection>> connection = pg::Connection::Open(policy);
  if (!connection.ok()) return connection.status();
  Result<pg::Rows> read_only =
      (*connection)->Exec("make the session read-only", "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
  if (!read_only.ok()) return read_only.status();
  return connection;
}

Status ScanStoredLines(pg::Connection& connection, const std::function<bool(std::string_view line)>& fn) {
  for (uint64_t next = 1;;) {
    std::vector<StoredRow> rows;
    Result<size_t> n = SelectRows(connection, next, std::numeric_limits<uint64_t>::max(), kRowsPerPage, &rows);
    if (!n.ok()) return n.status();
    for (const StoredRow& row : rows) {
      if (!fn(row.line)) return Status::Ok();
      next = row.seq + 1;
    }
    if (*n < kRowsPerPage) return Status::Ok();
  }
}

Result<std::unique_ptr<PgJournalRecordSource>> PgJournalRecordSource::Connect(std::string_view uri_or_conninfo) {
  Result<std::unique_ptr<pg::Connection>> connection = ConnectReadOnly(uri_or_conninfo);
  if (!connection.ok()) return connection.status();
  return std::make_unique<PgJournalRecordSource>(std::move(*connection));
}

PgJournalRecordSource::PgJournalRecordSource(pg::ConnectionPolicy policy) : policy_(std::move(policy)) {}

Status PgJournalRecordSource::EnsureConnected() {
  if (connection_ != nullptr && connection_->Healthy()) return Status::Ok();
  if (!policy_) return FailedPrecondition("the journal's record source has no connection");
  connection_.reset();
  Result<std::unique_ptr<pg::Connection>> connection = ConnectReadOnly(*policy_);
  if (!connection.ok()) return connection.status();
  connection_ = std::move(*connection);
  return Status::Ok();
}

Status PgJournalRecordSource::Seek(uint64_t seq) {
  next_ = seq == 0 ? 1 : seq;
  last_returned_ = 0;
  return Status::Ok();
}

Result<size_t> PgJournalRecordSource::Next(size_t max, uint64_t limit, std::vector<audit::JournalEntry>* out) {
  GPUFED_RETURN_IF_ERROR(EnsureConnected());
  size_t returned = 0;
  while (returned < max && next_ <= limit) {
    const size_t asked = std::min(max - returned, kRowsPerPage);
    std::vector<StoredRow> rows;
    Result<size_t> n = SelectRows(*connection_, next_, limit, asked, &rows);
    if (!n.ok()) return n.status();
    for (StoredRow& row : rows) {
      if (last_returned_ != 0 && row.seq != last_returned_ + 1) {
        return Status(StatusCode::kDataLoss, "gpufed_journal: seq " + std::to_string(last_returned_ + 1) + " to " +
                                                 std::to_string(row.seq - 1) + " are missing");
      }
      Result<audit::ParsedLine> line = audit::ParseRecordLine(row.line, &hasher_);
      if (!line.ok() || line->header.seq != row.seq) {
        return Status(StatusCode::kDataLoss,
                      "gpufed_journal: damaged record at seq " + std::to_string(row.seq) +
                          (line.ok() ? " (its line says seq " + std::to_string(line->header.seq) + ")"
                                     : ": " + line.status().message()));
      }
      out->push_back({row.seq, line->header.time_micros, line->header.kind, std::string(line->hash), {}});
      out->back().line = std::move(row.line);
      last_returned_ = row.seq;
      next_ = row.seq + 1;
      ++returned;
    }
    if (*n < asked) break;  // the stored end (or the limit)
  }
  return returned;
}

}  // namespace gpufed::pgjournal
