#pragma once
// The readers' side of the journal in PostgreSQL: JournalRecordSource over its own
// pg::Connection (shippers, query, report, replay and export each hold one; a Connection
// is one thread's). Reads with SELECT only: the controller's role suffices, and a
// standby's read-only session too.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "controller/audit/journal_storage.h"
#include "controller/audit/record.h"
#include "controller/pg/connection.h"
#include "controller/pg/connection_policy.h"

namespace gpufed::pgjournal {

class PgJournalRecordSource final : public audit::JournalRecordSource {
 public:
  explicit PgJournalRecordSource(std::unique_ptr<pg::Connection> connection);
  // Connects when first read, and again after the connection is lost (its read then
  // fails Unavailable; the next one reconnects), in a read-only session: for readers that
  // live as long as the process and must outlast a server's restart (shippers, tiles).
  explicit PgJournalRecordSource(pg::ConnectionPolicy policy);
  // Connects as `uri_or_conninfo` says, held to pg::ConnectionPolicy's rules (no password
  // in the text, verify-full off a Unix socket), in a session set read-only: a reader
  // never writes, whatever its role may do. Errors: the policy's (InvalidArgument, never
  // repeating the text) and the connection's (Unavailable).
  static Result<std::unique_ptr<PgJournalRecordSource>> Connect(std::string_view uri_or_conninfo);

  Status Seek(uint64_t seq) override;
  // SELECT ... WHERE seq >= next AND seq <= limit ORDER BY seq, in pages of
  // kRowsPerPage (schema.h) until `max` or the stored end. Each line is self-checked
  // (ParseRecordLine) and must carry its row's seq: DataLoss naming the seq otherwise, and
  // for a gap after the first entry returned since Seek. Unavailable when the connection
  // is lost (make a new source).
  Result<size_t> Next(size_t max, uint64_t limit, std::vector<audit::JournalEntry>* out) override;

 private:
  Status EnsureConnected();

  std::unique_ptr<pg::Connection> connection_;
  std::optional<pg::ConnectionPolicy> policy_;  // set: connect (again) when needed
  uint64_t next_ = 1;
  uint64_t last_returned_ = 0;  // 0: nothing returned since Seek
  audit::LineHasher hasher_;
};

// A connection as `uri_or_conninfo` says (pg::ConnectionPolicy's rules), its session set
// read-only. For readers: the CLI's `--store`, and Connect above.
Result<std::unique_ptr<pg::Connection>> ConnectReadOnly(std::string_view uri_or_conninfo);
Result<std::unique_ptr<pg::Connection>> ConnectReadOnly(const pg::ConnectionPolicy& policy);

// Every stored line from seq 1 in seq order, in pages, unchecked, until `fn` returns
// false: for the verifier, which checks each line itself and says where one fails (a
// record source would refuse a damaged line before the verifier could name it).
Status ScanStoredLines(pg::Connection& connection, const std::function<bool(std::string_view line)>& fn);

}  // namespace gpufed::pgjournal
