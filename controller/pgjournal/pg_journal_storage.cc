#include "controller/pgjournal/pg_journal_storage.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "controller/audit/journal_checks.h"
#include "controller/pgjournal/schema.h"

namespace gpufed::pgjournal {
namespace {

using audit::JournalHead;

// Recovery reads the rows from the last checkpoint to the head into memory. With a
// signer every commit ends with a checkpoint (and a large one has one every
// JournalOptions::checkpoint_every records), so that is normally the checkpoint alone;
// past this many rows the open is refused (with a signer: records no checkpoint signs)
// or, without one, only the newest rows' chain is checked. A line is at most ~65 KB, so
// this bounds what an open holds to about 65 MB.
constexpr uint64_t kMaxRecoveredRows = 1'000;

Result<std::optional<uint64_t>> NewestSeq(pg::Connection& connection, std::string_view purpose, std::string_view sql) {
  Result<pg::Rows> rows = connection.Exec(purpose, sql);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<uint64_t>();
  Result<int64_t> seq = rows->Int64(0, "seq");
  if (!seq.ok()) return seq.status();
  return std::optional<uint64_t>(static_cast<uint64_t>(*seq));
}

}  // namespace

PgJournalStorage::PgJournalStorage(std::unique_ptr<pg::Connection> connection, PgJournalStorageOptions options)
    : connection_(std::move(connection)), options_(std::move(options)) {}

PgJournalStorage::~PgJournalStorage() { (void)Close(); }

Status PgJournalStorage::TakeWriterRole() {
  if (options_.fence) {
    Result<pg::Transaction> tx = pg::Transaction::Begin(*connection_, "take the journal's writer role");
    if (!tx.ok()) return tx.status();
    GPUFED_RETURN_IF_ERROR(options_.fence(*tx));
    return tx->Commit();
  }
  Result<pg::Rows> locked = connection_->Exec("take the journal's writer lock",
                                              "SELECT pg_try_advisory_lock($1) AS locked", {kJournalWriterLockKey});
  if (!locked.ok()) return locked.status();
  Result<bool> got = locked->Bool(0, "locked");
  if (!got.ok()) return got.status();
  if (!*got) return FailedPrecondition("another session holds the journal's writer role (gpufed_journal)");
  advisory_locked_ = true;
  return Status::Ok();
}

Result<audit::JournalHead> PgJournalStorage::Recover(const audit::RecoveryKeys& keys, audit::MerkleHasher& merkle,
                                                     audit::RecoveryInfo* info) {
  if (connection_ == nullptr) return FailedPrecondition("the journal's PostgreSQL storage has no connection");
  if (writer_) return FailedPrecondition("the journal's PostgreSQL storage was recovered already");
  GPUFED_RETURN_IF_ERROR(options_.migrate ? MigrateJournal(*connection_) : CheckJournalSchema(*connection_));
  GPUFED_RETURN_IF_ERROR(TakeWriterRole());
  Result<JournalHead> head = ReadAndCheck(keys, merkle);
  if (!head.ok()) {
    (void)Close();  // a refused recovery holds no role
    return head.status();
  }
  writer_ = true;
  head_seq_ = head->last_seq;
  head_hash_ = head->last_hash;
  info->last_seq = head->last_seq;
  info->segments = 0;
  return head;
}

Result<audit::JournalHead> PgJournalStorage::ReadAndCheck(const audit::RecoveryKeys& keys,
                                                          audit::MerkleHasher& merkle) {
  JournalHead head;
  Result<std::optional<uint64_t>> newest =
      NewestSeq(*connection_, "read the journal's head", "SELECT seq FROM gpufed_journal ORDER BY seq DESC LIMIT 1");
  if (!newest.ok()) return newest.status();
  if (!newest->has_value()) return head;
  const uint64_t last = **newest;
  Result<std::optional<uint64_t>> checkpoint =
      NewestSeq(*connection_, "find the journal's last checkpoint",
                "SELECT seq FROM gpufed_journal WHERE kind = 'checkpoint' ORDER BY seq DESC LIMIT 1");
  if (!checkpoint.ok()) return checkpoint.status();
  const uint64_t signed_seq = checkpoint->value_or(0);
  uint64_t start = signed_seq == 0 ? 1 : signed_seq;
  if (last - start + 1 > kMaxRecoveredRows) {
    if (keys.signer != nullptr) {
      return FailedPrecondition("records seq " + std::to_string(signed_seq + 1) + " to " + std::to_string(last) +
                                " of gpufed_journal follow its last checkpoint (seq " + std::to_string(signed_seq) +
                                "): a table holds no torn commit, so this journal did not write them; nothing was "
                                "changed: run gpufed audit verify");
    }
    start = last - kMaxRecoveredRows + 1;
  }

  std::string text;
  for (uint64_t next = start; next <= last;) {
    std::vector<StoredRow> rows;
    Result<size_t> n = SelectRows(*connection_, next, last, kRowsPerPage, &rows);
    if (!n.ok()) return n.status();
    for (const StoredRow& row : rows) {
      if (row.seq != next) {
        return Status(StatusCode::kDataLoss, "gpufed_journal: seq " + std::to_string(next) +
                                                 " is missing; nothing was changed: run gpufed audit verify");
      }
      text.append(row.line).push_back('\n');
      ++next;
    }
    if (*n == 0) {
      return Status(StatusCode::kDataLoss, "gpufed_journal: seq " + std::to_string(next) +
                                               " is missing; nothing was changed: run gpufed audit verify");
    }
  }
  audit::LineHasher hasher;
  Result<audit::ScannedLines> scanned =
      audit::ScanLines("gpufed_journal from seq " + std::to_string(start), std::move(text), start, hasher);
  if (!scanned.ok()) return scanned.status();
  if (scanned->lines.size() != last - start + 1) {
    return Status(StatusCode::kDataLoss, "gpufed_journal: a line holds a newline; nothing was changed");
  }

  if (keys.signer != nullptr) {
    Result<int> first = audit::FindCheckpoint(*scanned, /*last=*/false);
    if (!first.ok()) return first.status();
    if (*first < 0) {
      return FailedPrecondition("records seq " + std::to_string(start) + " to " + std::to_string(last) +
                                " of gpufed_journal are signed by no checkpoint, and a table holds no torn commit: "
                                "this journal did not write them unsigned; nothing was changed: run gpufed audit "
                                "verify");
    }
    Result<audit::TreeRecovery> tree =
        audit::RecoverTreeFrom({&*scanned}, *first, *keys.signer, keys.rotation_from, keys.origin, merkle);
    if (!tree.ok()) return tree.status();
    if (tree->kept_lines < scanned->lines.size()) {
      return FailedPrecondition(
          "records seq " + std::to_string(scanned->lines[tree->kept_lines].seq) + " to " + std::to_string(last) +
          " of gpufed_journal follow its last signed checkpoint: a table holds no torn commit, so this journal did "
          "not write them; nothing was changed: run gpufed audit verify");
    }
    head.tree = std::move(tree->range);
  }
  audit::HeadOfKeptLines(*scanned, scanned->lines.size(), &head);
  head.since_checkpoint = last - signed_seq;
  return head;
}

pg::Transaction* TransactionOf(audit::CommitScope& scope) {
  auto* pg_scope = dynamic_cast<PgCommitScope*>(&scope);
  return pg_scope != nullptr ? &pg_scope->transaction() : nullptr;
}

bool RefusalFailsCommit(audit::CommitScope& scope) {
  const auto* pg_scope = dynamic_cast<const PgCommitScope*>(&scope);
  return pg_scope != nullptr && pg_scope->refusal_fails_commit();
}

Status PgJournalStorage::AppendCommit(std::string_view lines, uint64_t first_seq) {
  return AppendCommitWith(lines, first_seq, {});
}

Status PgJournalStorage::AppendCommitWith(std::string_view lines, uint64_t first_seq,
                                          std::span<audit::RidingWork* const> riding) {
  if (!writer_) return FailedPrecondition("the journal's PostgreSQL storage does not hold the writer role");
  if (first_seq != head_seq_ + 1) {
    return FailedPrecondition("a commit from seq " + std::to_string(first_seq) + " does not follow the head " +
                              std::to_string(head_seq_));
  }
  if (lines.empty() || lines.back() != '\n') return InvalidArgument("a commit is complete lines, each ending with \\n");
  // The columns beside each line come from the line itself, checked as a reader will.
  std::string times = "{", kinds = "{", hashes = "{";
  std::string prev = head_hash_;
  uint64_t seq = first_seq;
  audit::LineHasher hasher;
  for (size_t pos = 0; pos < lines.size(); ++seq) {
    const size_t nl = lines.find('\n', pos);
    Result<audit::ParsedLine> line = audit::ParseRecordLine(lines.substr(pos, nl - pos), &hasher);
    if (!line.ok()) return line.status();
    if (line->header.seq != seq || line->header.prev != prev) {
      return InvalidArgument("the commit's line for seq " + std::to_string(seq) + " is out of sequence or chain");
    }
    if (times.size() > 1) times.push_back(',');
    times += std::to_string(line->header.time_micros);
    AppendArrayElement(line->header.kind, &kinds);
    AppendArrayElement(line->hash, &hashes);
    prev = std::string(line->hash);
    pos = nl + 1;
  }
  times.push_back('}');
  kinds.push_back('}');
  hashes.push_back('}');
  const uint64_t count = seq - first_seq;

  std::vector<pg::Param> insert = {pg::Param(static_cast<int64_t>(first_seq)),
                                   pg::Param(times),
                                   pg::Param(kinds),
                                   pg::Param(hashes),
                                   pg::Param(lines.substr(0, lines.size() - 1)),
                                   pg::Param(static_cast<int64_t>(count))};
  // Rerunnable work (a submission group's rows) lets the commit go in one round trip: its
  // writes' replies come with the COMMIT's. Work that must learn of its own refusal before
  // the COMMIT (a pass's rows) takes two. A refusal in one trip fails the whole commit: it
  // is run again, two round trips, so the refusal is the work's alone (or the fence's or
  // the INSERT's again, then returned). Not after a lost session (the outcome unknown) or
  // a timeout (it would wait as long again).
  const bool one_trip = !riding.empty() && std::all_of(riding.begin(), riding.end(),
                                                       [](const audit::RidingWork* w) { return w->rerunnable; });
  Status stored = StoreCommit(insert, riding, one_trip);
  if (one_trip && !stored.ok() && connection_->Healthy() && !connection_->InTransaction() &&
      stored.code() != StatusCode::kUnavailable && stored.code() != StatusCode::kDeadlineExceeded) {
    stored = StoreCommit(insert, riding, false);
  }
  GPUFED_RETURN_IF_ERROR(stored);
  head_seq_ = seq - 1;
  head_hash_ = std::move(prev);
  return Status::Ok();
}

Status PgJournalStorage::StoreCommit(const std::vector<pg::Param>& insert, std::span<audit::RidingWork* const> riding,
                                     bool refusal_fails_commit) {
  // BEGIN, the fence (when it defers its check) and the INSERT go with the first riding
  // work's first statement, or with the COMMIT: the whole commit is one or two round trips.
  // The lines are one text split on '\n' (a record line holds none), the other columns
  // arrays in text form. The INSERT checks its own row count, since nobody reads its reply:
  // a count other than the commit's (a trigger that dropped a row) divides by zero, which
  // fails the INSERT and with it the commit.
  pg::Transaction tx = pg::Transaction::BeginDeferred(*connection_, "append to the journal");
  if (options_.fence) GPUFED_RETURN_IF_ERROR(options_.fence(tx));
  connection_->DeferStatement("append to the journal",
                              "WITH stored AS (INSERT INTO gpufed_journal (seq, time_micros, kind, hash, line) "
                              "SELECT $1::bigint + r.n - 1, r.t, r.k, r.h, r.l "
                              "FROM unnest($2::bigint[], $3::text[], $4::text[], string_to_array($5::text, E'\\n')) "
                              "WITH ORDINALITY AS r(t, k, h, l, n) RETURNING 1) "
                              "SELECT 1 / (count(*) = $6::bigint)::int AS whole FROM stored",
                              insert);
  for (audit::RidingWork* work : riding) {
    PgCommitScope scope(tx, refusal_fails_commit);
    if (refusal_fails_commit) {
      // In one trip nothing is undone alone, so the work needs no savepoint (a
      // subtransaction the server would have to begin, assign and fold into the COMMIT):
      // any failure of it, here or at the server, fails the commit, which the caller runs
      // again.
      work->result = work->run(scope);
      if (!work->result.ok()) return work->result;
      continue;
    }
    // The SAVEPOINT rides with the work's first statement (pg::Connection::Defer). When
    // the work left a write unanswered, the RELEASE is sent and answered before the next
    // work: that write fails there at the latest, so its error is the work's own and
    // undone alone, never the COMMIT's.
    connection_->Defer("begin work riding with the journal's commit", "SAVEPOINT gpufed_riding");
    work->result = work->run(scope);
    if (work->result.ok() && !connection_->HasDeferredStatement()) {
      // Every write of the work has been answered, so its RELEASE cannot fail but for
      // the session's loss: it goes with the next work's first statement or the COMMIT.
      connection_->Defer("keep the work riding with the journal's commit", "RELEASE SAVEPOINT gpufed_riding");
      continue;
    }
    if (work->result.ok()) {
      Result<pg::Rows> kept =
          tx.Exec("keep the work riding with the journal's commit", "RELEASE SAVEPOINT gpufed_riding");
      if (kept.ok()) continue;
      work->result = kept.status();
    }
    // Undone alone; a transaction that cannot be brought back to the savepoint commits
    // nothing (the records neither).
    connection_->Defer("undo the work riding with the journal's commit", "ROLLBACK TO SAVEPOINT gpufed_riding");
    Result<pg::Rows> undone = tx.Exec("end the undone work's savepoint", "RELEASE SAVEPOINT gpufed_riding");
    if (!undone.ok()) return undone.status();
  }
  return tx.Commit();
}

Status PgJournalStorage::Close() {
  writer_ = false;
  if (!advisory_locked_) return Status::Ok();
  advisory_locked_ = false;
  if (connection_ == nullptr || !connection_->Healthy()) return Status::Ok();  // a lost session holds no lock
  Result<pg::Rows> unlocked = connection_->Exec("release the journal's writer lock",
                                                "SELECT pg_advisory_unlock($1) AS released", {kJournalWriterLockKey});
  return unlocked.ok() ? Status::Ok() : unlocked.status();
}

}  // namespace gpufed::pgjournal
