// gpufed audit export, and the --store option of verify and query: the audit journal in a
// PostgreSQL table (controller/pgjournal), read over a read-only session whose connection
// string is held to pg::ConnectionPolicy's rules (no password in it, verify-full off a
// Unix socket). Verify and query read the table directly rather than through a temporary
// export: an export would put every tenant's records on a local disk for the length of a
// command, and read and write them all once more.
#include <iostream>
#include <limits>

#include "controller/audit/journal_export.h"
#include "controller/cli/audit_commands.h"
#include "controller/pgjournal/pg_record_source.h"

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

}  // namespace

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

void AddStoreOption(CLI::App* command, std::string* store) {
  command->add_option("--store", *store,
                      "Read the journal from PostgreSQL instead (a libpq URI or conninfo: no password in it, a "
                      "passfile; sslmode=verify-full unless a Unix socket)");
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
