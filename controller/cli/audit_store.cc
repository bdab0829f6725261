// gpufed audit export, and the --store option of verify, query, report, replay and prove: the
// audit journal and the passes' snapshots in PostgreSQL tables (controller/pgjournal), read over a read-only session
// whose connection string is held to pg::ConnectionPolicy's rules (no password in it, verify-full off a Unix socket).
// Verify and query read the table directly rather than through a temporary export: an export would put every tenant's
// records on a local disk for the length of a command, and read and write them all once more.
#include <functional>
#include <iostream>
#include <limits>
#include <memory>

#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/journal_export.h"
#include "controller/cli/audit_commands.h"
#include "controller/pg/connection_policy.h"
#include "controller/pgjournal/pg_record_source.h"
#include "controller/pgjournal/pg_snapshot_store.h"

namespace gpufed::cli {
namespace {

struct ExportOptions {
  std::string store;
  std::string out;
  uint64_t segment_bytes = uint64_t{64} << 20;
};

int RunExport(const ExportOptions& o) {
  Result<std::unique_ptr<audit::JournalRecordSource>> source = OpenStoreSource(o.store);
  if (!source.ok()) {
    std::cerr << "gpufed audit export: " << source.status().ToString() << "\n";
    return 2;
  }
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  Result<uint64_t> last = audit::ExportJournal(**source, *env, o.out, {.segment_bytes = o.segment_bytes});
  if (!last.ok()) {
    std::cerr << "gpufed audit export: " << last.status().ToString() << "\n";
    return 1;
  }
  std::cout << "exported " << *last << " records to " << o.out << "/journal (check it with gpufed audit verify "
            << o.out << " --key PUB)\n";
  return 0;
}

// The table first; the folder's files for an object the table does not hold.
class TableThenFolder final : public audit::SnapshotStore {
 public:
  TableThenFolder(std::unique_ptr<audit::SnapshotStore> table, std::unique_ptr<audit::SnapshotStore> folder)
      : table_(std::move(table)), folder_(std::move(folder)) {}
  Result<std::string> Add(std::string_view) override { return FailedPrecondition("a reader stores no snapshot"); }
  Status Sync() override { return FailedPrecondition("a reader stores no snapshot"); }
  Result<std::string> GetText(const std::string& digest) override {
    Result<std::string> text = table_->GetText(digest);
    if (text.ok() || text.status().code() != StatusCode::kNotFound) return text;
    Result<std::string> file = folder_->GetText(digest);
    if (file.ok() || file.status().code() != StatusCode::kNotFound) return file;
    return Status(StatusCode::kNotFound, text.status().message() + ", nor in the audit folder");
  }

 private:
  std::unique_ptr<audit::SnapshotStore> table_, folder_;
};

}  // namespace

Result<std::unique_ptr<audit::SnapshotStore>> OpenSnapshotStore(audit::Env* env, const std::string& audit_dir,
                                                                const std::string& store) {
  std::unique_ptr<audit::SnapshotStore> folder;
  if (!audit_dir.empty()) folder = std::make_unique<audit::FileSnapshotStore>(env, audit_dir);
  if (store.empty()) return folder;
  Result<std::unique_ptr<pgjournal::PgSnapshotStore>> table = pgjournal::PgSnapshotStore::ConnectReader(store);
  if (!table.ok()) return Status(table.status().code(), "--store: " + table.status().message());
  if (folder == nullptr) return std::unique_ptr<audit::SnapshotStore>(std::move(*table));
  return std::unique_ptr<audit::SnapshotStore>(std::make_unique<TableThenFolder>(std::move(*table), std::move(folder)));
}

Result<audit::JournalProver> LoadStoreProver(const std::string& store) {
  Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(store);
  if (!policy.ok()) return Status(policy.status().code(), "--store: " + policy.status().message());
  Result<std::unique_ptr<pg::Connection>> connection = pgjournal::ConnectReadOnly(*policy);
  if (!connection.ok()) return Status(connection.status().code(), "--store: " + connection.status().message());
  return audit::JournalProver::LoadLines(
      [&](const std::function<Status(std::string_view)>& fn) {
        Status failed;
        GPUFED_RETURN_IF_ERROR(pgjournal::ScanStoredLines(**connection, [&](std::string_view line) {
          failed = fn(line);
          return failed.ok();
        }));
        return failed;
      },
      [policy = *policy]() -> std::unique_ptr<audit::JournalRecordSource> {
        return std::make_unique<pgjournal::PgJournalRecordSource>(policy);
      });
}

Result<std::unique_ptr<audit::JournalRecordSource>> OpenStoreSource(const std::string& store) {
  Result<std::unique_ptr<pgjournal::PgJournalRecordSource>> source = pgjournal::PgJournalRecordSource::Connect(store);
  if (!source.ok()) return Status(source.status().code(), "--store: " + source.status().message());
  return std::unique_ptr<audit::JournalRecordSource>(std::move(*source));
}

Result<audit::VerifyReport> VerifyStore(const std::string& store, const audit::VerifyOptions& options) {
  Result<std::unique_ptr<pg::Connection>> connection = pgjournal::ConnectReadOnly(store);
  if (!connection.ok()) return Status(connection.status().code(), "--store: " + connection.status().message());
  audit::ChainVerifier verifier(options);
  GPUFED_RETURN_IF_ERROR(
      pgjournal::ScanStoredLines(**connection, [&](std::string_view line) { return verifier.AddLine(line); }));
  return verifier.Finish();
}

void AddStoreOption(CLI::App* command, std::string* store, std::string_view what) {
  command->add_option("--store", *store,
                      "Read " + std::string(what) +
                          " from PostgreSQL instead (a libpq URI or conninfo: no password in it, a passfile; "
                          "sslmode=verify-full unless a Unix socket)");
}

void AddAuditExportCommand(CLI::App& audit, int* exit_code) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* command = audit.add_subcommand(
      "export", "Write the journal kept in PostgreSQL as a journal folder (segments), which audit verify checks");
  command->add_option("--store", o->store, "The PostgreSQL database (a libpq URI or conninfo, as for --store)")
      ->required();
  command->add_option("--out", o->out, "An empty folder to write (made private, 0700)")->required();
  command->add_option("--segment-bytes", o->segment_bytes, "Start a new segment past this size")->capture_default_str();
  command->callback([o, exit_code] { *exit_code = RunExport(*o); });
}

}  // namespace gpufed::cli
