// The journal in PostgreSQL: the storage contract every JournalStorage passes
// (audit/testing/journal_storage_contract.h), then what only the table has: triggers that
// refuse UPDATE, DELETE and TRUNCATE to every role, a controller role with INSERT and
// SELECT only, the fence in every write, a signed journal end to end with its export
// verified as a file journal, and recovery's refusals. Each test has a database of its
// own (pg_cluster fixture).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/audit_trail.h"
#include "controller/audit/journal.h"
#include "controller/audit/journal_export.h"
#include "controller/audit/signing.h"
#include "controller/audit/testing/journal_storage_contract.h"
#include "controller/audit/verify.h"
#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgjournal/pg_record_source.h"
#include "controller/pgjournal/schema.h"
#include "controller/pgjournal/test_lease.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::pgjournal {
namespace {

using audit::AuditJournal;
using audit::AuditRecord;
using audit::JournalEntry;
using audit::JournalOptions;
using audit::RecordKind;

// A database of its own for a Backend of the typed contract suite, which cannot be a
// PgTest fixture itself (the suite's fixture is the contract's).
class TestDatabase : public pg::testing::PgTest {
 public:
  TestDatabase() { SetUp(); }
  ~TestDatabase() override { TearDown(); }
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;
  void TestBody() override {}
  std::string SkipReason() const { return server().missing; }
  using PgTest::Connect;
};

class PgBackend {
 public:
  audit::Env& env() { return *env_; }
  std::unique_ptr<audit::JournalStorage> NewStorage() {
    return std::make_unique<PgJournalStorage>(database_.Connect(), PgJournalStorageOptions{});
  }
  std::unique_ptr<audit::JournalRecordSource> NewSource() {
    return std::make_unique<PgJournalRecordSource>(database_.Connect());
  }
  std::string SkipReason() const { return database_.SkipReason(); }

 private:
  std::unique_ptr<audit::Env> env_ = audit::NewPosixEnv();
  TestDatabase database_;
};

}  // namespace
}  // namespace gpufed::pgjournal

namespace gpufed::audit::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Postgres, JournalStorageContract, ::testing::Types<gpufed::pgjournal::PgBackend>);
}  // namespace gpufed::audit::testing

namespace gpufed::pgjournal {
namespace {

AuditRecord Record(int i) { return {RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}, {"n", i}}}; }

class PgJournal : public pg::testing::PgTest {
 protected:
  std::unique_ptr<AuditJournal> Open(std::unique_ptr<pg::Connection> connection, const PgJournalStorageOptions& options,
                                     const audit::Signer* signer = &signer_) {
    JournalOptions o;
    o.env = env_.get();
    o.controller_id = "pg-ctl";
    o.signer = signer;
    auto journal = AuditJournal::OpenWith(o, std::make_unique<PgJournalStorage>(std::move(connection), options));
    EXPECT_TRUE(journal.ok()) << journal.status().ToString();
    return journal.ok() ? std::move(*journal) : nullptr;
  }
  Status OpenStatus(PgJournalStorageOptions options = {}) {
    JournalOptions o;
    o.env = env_.get();
    o.controller_id = "pg-ctl";
    o.signer = &signer_;
    return AuditJournal::OpenWith(o, std::make_unique<PgJournalStorage>(Connect(), std::move(options))).status();
  }
  int64_t RowCount() {
    auto rows = Connect()->Exec("count", "SELECT count(*) AS n FROM gpufed_journal");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->Int64(0, "n").value() : -1;
  }
  std::vector<JournalEntry> ReadAll() {
    PgJournalRecordSource source(Connect());
    EXPECT_TRUE(source.Seek(1).ok());
    std::vector<JournalEntry> out;
    for (;;) {
      auto n = source.Next(1000, std::numeric_limits<uint64_t>::max(), &out);
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) return out;
    }
  }

  std::unique_ptr<audit::Env> env_ = audit::NewPosixEnv();
  static inline const audit::Signer signer_ = audit::Signer::Generate().value();
};

TEST_F(PgJournal, TriggersRefuseUpdateDeleteAndTruncateToTheOwnerAndASuperuser) {
  auto journal = Open(Connect(), {});
  ASSERT_TRUE(journal->Append(Record(1)).ok());
  ASSERT_TRUE(journal->Close().ok());
  const int64_t rows = RowCount();
  ASSERT_EQ(rows, 2);  // the record and its checkpoint
  // The owner (gpufed) and a superuser hold every privilege: only the trigger refuses.
  std::unique_ptr<pg::Connection> owner = Connect(), superuser = ConnectAsAdmin();
  for (pg::Connection* c : {owner.get(), superuser.get()}) {
    EXPECT_EQ(c->Exec("update", "UPDATE gpufed_journal SET kind = 'x' WHERE seq = 1").status().code(),
              StatusCode::kPermissionDenied);
    EXPECT_EQ(c->Exec("delete", "DELETE FROM gpufed_journal WHERE seq = 2").status().code(),
              StatusCode::kPermissionDenied);
    EXPECT_EQ(c->Exec("truncate", "TRUNCATE gpufed_journal").status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(c->Exec("upsert",
                      "INSERT INTO gpufed_journal SELECT * FROM gpufed_journal WHERE seq = 1 "
                      "ON CONFLICT (seq) DO UPDATE SET line = 'x'")
                  .status()
                  .code(),
              StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(RowCount(), rows);
  EXPECT_TRUE(OpenStatus().ok());
}

TEST_F(PgJournal, ARoleWithInsertAndSelectOnlyAppendsAndRecovers) {
  // The owner migrates; the controller's role gets INSERT and SELECT only (README.md).
  ASSERT_TRUE(MigrateJournal(*Connect()).ok());
  const std::string role = "writer_" + database();  // roles are the cluster's: one per test database
  auto admin = ConnectAsAdmin();
  for (const std::string& sql :
       {"CREATE ROLE " + role + " NOLOGIN", "GRANT INSERT, SELECT ON gpufed_journal TO " + role,
        "GRANT SELECT ON gpufed_schema TO " + role, "GRANT " + role + " TO gpufed"}) {
    ASSERT_TRUE(admin->Exec("set up the controller's role", sql).ok()) << sql;
  }
  auto as_role = [&] {
    std::unique_ptr<pg::Connection> c = Connect();
    EXPECT_TRUE(c->Exec("become the controller's role", "SET ROLE " + role).ok());
    return c;
  };
  {
    auto journal = Open(as_role(), {.migrate = false});
    ASSERT_NE(journal, nullptr);
    ASSERT_TRUE(journal->Append(Record(1)).ok());
    ASSERT_TRUE(journal->Close().ok());
  }
  auto journal = Open(as_role(), {.migrate = false});
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->last_seq(), 2u);
  ASSERT_TRUE(journal->Append(Record(2)).ok());
  ASSERT_TRUE(journal->Close().ok());
  // The role cannot change what it wrote, by privilege before any trigger.
  auto c = as_role();
  EXPECT_EQ(c->Exec("update", "UPDATE gpufed_journal SET kind = 'x'").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(c->Exec("delete", "DELETE FROM gpufed_journal").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(c->Exec("truncate", "TRUNCATE gpufed_journal").status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(RowCount(), 4);
  // Nor migrate (it would create): a role that may not must be told to let the owner do it.
  const std::string newer = std::to_string(JournalMigrations().size() + 1);
  auto fresh = admin->Exec("a newer schema", "INSERT INTO gpufed_schema VALUES ('journal', " + newer + ", 'future')");
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(CheckJournalSchema(*as_role()).code(), StatusCode::kFailedPrecondition);
}

TEST_F(PgJournal, AFailingFenceFailsTheAppendAndWritesNothing) {
  std::atomic<bool> deposed{false};
  std::atomic<int> calls{0};
  PgJournalStorageOptions options;
  options.fence = [&](pg::Transaction& tx) -> Status {
    ++calls;
    // Inside the write's transaction, as ha::CheckFence runs.
    if (!tx.Exec("fence", "SELECT 1").ok()) return Status(StatusCode::kInternal, "fence query");
    return deposed ? FailedPrecondition("fenced: epoch 1 is no longer the lease's") : Status::Ok();
  };
  auto journal = Open(Connect(), options);
  EXPECT_GE(calls.load(), 1);  // Recover took the writer role through it
  ASSERT_TRUE(journal->Append(Record(1)).ok());
  const int64_t rows = RowCount();
  const int before = calls.load();
  deposed = true;
  auto refused = journal->Append(Record(2));
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_GT(calls.load(), before);
  EXPECT_EQ(RowCount(), rows);
  EXPECT_FALSE(journal->health().ok());  // a failed append fails the journal for good
  // Recovery is refused by the fence too.
  EXPECT_EQ(OpenStatus(options).code(), StatusCode::kFailedPrecondition);
}

TEST_F(PgJournal, OfTwoWritersTheDeposedOnesFenceFailsAndTheNewLeaderGoesOn) {
  auto setup = Connect();
  testing::CreateTestLease(*setup);
  const auto fence_of = testing::TestFence;
  auto first = Open(Connect(), {.fence = fence_of(1)});
  ASSERT_TRUE(first->Append(Record(1)).ok());
  // A takeover moves the epoch on: the first writer's next transaction fails its fence,
  // a writer of the old epoch cannot recover, the new one goes on from the head.
  testing::TakeOverTestLease(*setup);
  EXPECT_EQ(first->Append(Record(2)).status().code(), StatusCode::kFailedPrecondition);
  const int64_t rows = RowCount();
  EXPECT_EQ(OpenStatus({.fence = fence_of(1)}).code(), StatusCode::kFailedPrecondition);
  auto second = Open(Connect(), {.fence = fence_of(2)});
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->last_seq(), static_cast<uint64_t>(rows));
  ASSERT_TRUE(second->Append(Record(3)).ok());
  ASSERT_TRUE(second->Close().ok());
  EXPECT_EQ(RowCount(), rows + 2);
}

// BEGIN, a deferred fence and the INSERT go with the riding work's first statement, and
// the work's RELEASE with the COMMIT; without work, all of it is one exchange. After a
// takeover the fence refuses: neither the records nor the work are stored.
TEST_F(PgJournal, ACommitWithItsFenceAndRidingWorkIsTwoRoundTrips) {
  auto setup = Connect();
  testing::CreateTestLease(*setup);
  ASSERT_TRUE(setup->Exec("work", "CREATE TABLE rider (n int NOT NULL)").ok());
  auto connection = Connect();
  const pg::Connection* wire = connection.get();
  auto journal = Open(std::move(connection), {.fence = testing::TestDeferredFence(1)});
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->carries_work());
  auto rider = [](int n) {
    return audit::RidingWork{[n](audit::CommitScope& scope) {
      auto& tx = dynamic_cast<PgCommitScope&>(scope).transaction();
      auto inserted = tx.Exec("ride", "INSERT INTO rider VALUES ($1)", {n});
      return inserted.ok() ? Status::Ok() : inserted.status();
    }};
  };
  const AuditRecord records[] = {Record(1), Record(2)};
  audit::RidingWork work = rider(1);
  uint64_t before = wire->round_trips();
  ASSERT_TRUE(journal->AppendBatch(records, nullptr, &work).ok());
  EXPECT_TRUE(work.result.ok()) << work.result.ToString();
  EXPECT_EQ(wire->round_trips() - before, 2U);
  before = wire->round_trips();
  ASSERT_TRUE(journal->Append(Record(3)).ok());
  EXPECT_EQ(wire->round_trips() - before, 1U) << "BEGIN, the fence, the INSERT and COMMIT";
  const int64_t rows = RowCount();

  testing::TakeOverTestLease(*setup);
  audit::RidingWork refused_work = rider(2);
  EXPECT_FALSE(journal->AppendBatch(records, nullptr, &refused_work).ok());
  EXPECT_FALSE(refused_work.result.ok());
  EXPECT_EQ(RowCount(), rows);
  auto ridden = setup->Exec("count", "SELECT count(*) AS n, min(n) AS first FROM rider");
  ASSERT_TRUE(ridden.ok()) << ridden.status().ToString();
  EXPECT_EQ(*ridden->Int64(0, "n"), 1);
  EXPECT_EQ(*ridden->Int64(0, "first"), 1);
}

// Work that may run twice goes with the COMMIT: one round trip. A write of it the server
// refuses fails that commit, which is run again the two-trip way: the refusal is then the
// work's alone and the records commit. A deposed writer's fence refuses both tries.
TEST_F(PgJournal, RerunnableWorkCommitsInOneRoundTripAndARefusalRunsTheCommitAgain) {
  auto setup = Connect();
  testing::CreateTestLease(*setup);
  ASSERT_TRUE(setup->Exec("work", "CREATE TABLE rider (n int NOT NULL CHECK (n > 0))").ok());
  auto connection = Connect();
  const pg::Connection* wire = connection.get();
  auto journal = Open(std::move(connection), {.fence = testing::TestDeferredFence(1)});
  ASSERT_NE(journal, nullptr);
  std::vector<bool> runs;  // each run's RefusalFailsCommit
  auto rider = [&runs](int n) {
    return audit::RidingWork{.run = [n, &runs](audit::CommitScope& scope) -> Status {
                               runs.push_back(RefusalFailsCommit(scope));
                               if (n == 0) return InvalidArgument("refused before anything was sent");
                               pg::Transaction& tx = *TransactionOf(scope);
                               if (runs.back()) {
                                 tx.connection().DeferStatement("ride", "INSERT INTO rider VALUES ($1)", {n});
                                 return Status::Ok();
                               }
                               auto inserted = tx.Exec("ride", "INSERT INTO rider VALUES ($1)", {n});
                               return inserted.ok() ? Status::Ok() : inserted.status();
                             },
                             .rerunnable = true};
  };
  auto riders = [&] {
    auto n = setup->Exec("count", "SELECT count(*) AS n FROM rider");
    return n.ok() ? *n->Int64(0, "n") : -1;
  };
  const AuditRecord records[] = {Record(1), Record(2)};
  audit::RidingWork work = rider(1);
  uint64_t before = wire->round_trips();
  ASSERT_TRUE(journal->AppendBatch(records, nullptr, &work).ok());
  EXPECT_TRUE(work.result.ok()) << work.result.ToString();
  EXPECT_EQ(wire->round_trips() - before, 1U) << "BEGIN, the fence, the INSERT, the work and COMMIT";
  EXPECT_EQ(runs, std::vector<bool>({true}));
  EXPECT_EQ(riders(), 1);

  // Refused by the CHECK: the one-trip commit fails whole, the second keeps the records.
  runs.clear();
  int64_t rows = RowCount();
  audit::RidingWork refused = rider(-1);
  ASSERT_TRUE(journal->AppendBatch(records, nullptr, &refused).ok());
  EXPECT_EQ(refused.result.code(), StatusCode::kFailedPrecondition) << refused.result.ToString();
  EXPECT_EQ(runs, std::vector<bool>({true, false}));
  EXPECT_EQ(RowCount(), rows + 3);  // two records and their checkpoint
  EXPECT_EQ(riders(), 1);
  EXPECT_TRUE(journal->health().ok());
  ASSERT_TRUE(journal->AppendBatch(records, nullptr, &work).ok());
  EXPECT_EQ(riders(), 2);
  // An error the work returns itself fails the one trip too; run again, it is its own.
  runs.clear();
  rows = RowCount();
  audit::RidingWork failing = rider(0);
  ASSERT_TRUE(journal->AppendBatch(records, nullptr, &failing).ok());
  EXPECT_EQ(failing.result.code(), StatusCode::kInvalidArgument) << failing.result.ToString();
  EXPECT_EQ(runs, std::vector<bool>({true, false}));
  EXPECT_EQ(RowCount(), rows + 3);
  EXPECT_EQ(riders(), 2);

  // A takeover: the fence refuses the first try and the second, and nothing is stored.
  testing::TakeOverTestLease(*setup);
  runs.clear();
  rows = RowCount();
  audit::RidingWork deposed = rider(3);
  const Status fenced = journal->AppendBatch(records, nullptr, &deposed).status();
  EXPECT_FALSE(fenced.ok());
  EXPECT_THAT(fenced.message(), ::testing::HasSubstr("fence")) << "the fence's refusal, both times";
  EXPECT_EQ(runs, std::vector<bool>({true, false}));
  EXPECT_FALSE(deposed.result.ok());
  EXPECT_EQ(RowCount(), rows);
  EXPECT_EQ(riders(), 2);
}

// Nobody reads the INSERT's reply: it checks its own row count. A trigger that silently
// drops a row fails the commit, and nothing of it is stored.
TEST_F(PgJournal, AnInsertThatStoresFewerRowsThanItsCommitFailsIt) {
  auto journal = Open(Connect(), {});
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Append(Record(1)).ok());
  const int64_t rows = RowCount();
  auto setup = Connect();
  ASSERT_TRUE(setup
                  ->ExecScript("drop a row",
                               "CREATE FUNCTION drop_second() RETURNS trigger LANGUAGE plpgsql AS "
                               "$$ BEGIN IF NEW.seq % 2 = 0 THEN RETURN NULL; END IF; RETURN NEW; END $$;"
                               "CREATE TRIGGER drop_second BEFORE INSERT ON gpufed_journal "
                               "FOR EACH ROW EXECUTE FUNCTION drop_second()")
                  .ok());
  const AuditRecord records[] = {Record(2), Record(3)};
  auto refused = journal->AppendBatch(records);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("append to the journal"));
  EXPECT_EQ(RowCount(), rows);
}

TEST_F(PgJournal, ASignedJournalEndToEndExportsToAFileJournalThatVerifies) {
  uint64_t head = 0;
  for (int run = 0; run < 2; ++run) {
    auto journal = Open(Connect(), {});
    ASSERT_NE(journal, nullptr);
    ASSERT_TRUE(journal->Append({RecordKind::kControllerStart, {{"run", run}}}).ok());
    std::vector<AuditRecord> batch;
    batch.reserve(300);
    for (int i = 0; i < 300; ++i) batch.push_back(Record(i));
    ASSERT_TRUE(journal->AppendBatch(batch).ok());
    ASSERT_TRUE(journal->Append({RecordKind::kControllerStop, {{"run", run}}}).ok());
    ASSERT_TRUE(journal->Close().ok());
    head = journal->last_seq();
  }
  testutil::TempDir dir;
  PgJournalRecordSource source(Connect());
  auto exported = audit::ExportJournal(source, *env_, dir.str() + "/export", {.segment_bytes = 20'000});
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  EXPECT_EQ(*exported, head);
  auto key = audit::SignatureVerifier::FromPublicKeyPem(signer_.PublicKeyPem());
  ASSERT_TRUE(key.ok());
  auto report = audit::VerifyJournalDir(*env_, dir.str() + "/export", {.key = &*key});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok) << report->error;
  EXPECT_EQ(report->last_seq, head);
  EXPECT_EQ(report->last_signed_seq, head);
  EXPECT_FALSE(report->unclosed);
  // An export never writes into a journal folder.
  PgJournalRecordSource again(Connect());
  EXPECT_EQ(audit::ExportJournal(again, *env_, dir.str() + "/export").status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PgJournal, RecoveryRefusesADamagedRowAndUnsignedRecords) {
  auto journal = Open(Connect(), {});
  ASSERT_TRUE(journal->Append(Record(1)).ok());
  ASSERT_TRUE(journal->Close().ok());
  const std::vector<JournalEntry> entries = ReadAll();
  ASSERT_EQ(entries.size(), 2u);
  // Only the owner disabling the trigger can change a row: the checkpoint's own hash
  // then refuses it (recovery reads from the last checkpoint on).
  auto admin = ConnectAsAdmin();
  ASSERT_TRUE(admin->Exec("tamper", "ALTER TABLE gpufed_journal DISABLE TRIGGER USER").ok());
  ASSERT_TRUE(admin
                  ->Exec("tamper",
                         "UPDATE gpufed_journal SET line = replace(line, '\"checkpoint\"', '\"checkpoinx\"') "
                         "WHERE seq = 2")
                  .ok());
  EXPECT_EQ(OpenStatus().code(), StatusCode::kDataLoss);
  PgJournalRecordSource source(Connect());
  ASSERT_TRUE(source.Seek(1).ok());
  std::vector<JournalEntry> out;
  EXPECT_EQ(source.Next(10, 10, &out).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(out.size(), 1u);  // seq 1 was whole
  // Put it back, then add a record after the last checkpoint (as a second writer without
  // a signer would): a table holds no torn commit, so the open is refused.
  ASSERT_TRUE(admin->Exec("restore", "UPDATE gpufed_journal SET line = $1 WHERE seq = 2", {entries[1].line}).ok());
  EXPECT_TRUE(OpenStatus().ok());
  auto unsigned_journal = Open(Connect(), {}, nullptr);
  ASSERT_TRUE(unsigned_journal->Append(Record(2)).ok());
  ASSERT_TRUE(unsigned_journal->Close().ok());
  EXPECT_EQ(OpenStatus().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PgJournal, ASourceReportsAGapAfterItsFirstEntry) {
  auto journal = Open(Connect(), {}, nullptr);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(journal->Append(Record(i)).ok());
  ASSERT_TRUE(journal->Close().ok());
  auto admin = ConnectAsAdmin();
  ASSERT_TRUE(admin->Exec("tamper", "ALTER TABLE gpufed_journal DISABLE TRIGGER USER").ok());
  ASSERT_TRUE(admin->Exec("tamper", "DELETE FROM gpufed_journal WHERE seq = 3").ok());
  PgJournalRecordSource source(Connect());
  ASSERT_TRUE(source.Seek(1).ok());
  std::vector<JournalEntry> out;
  EXPECT_EQ(source.Next(10, 10, &out).status().code(), StatusCode::kDataLoss);
}

// Recovery holds at most 1,000 rows after the last checkpoint: without a signer it checks
// the newest of a longer unsigned tail; with one, such a tail was not written signed.
TEST_F(PgJournal, ALongUnsignedTailReopensWithoutASignerAndIsRefusedWithOne) {
  std::string last_hash;
  {
    auto journal = Open(Connect(), {}, nullptr);
    std::vector<AuditRecord> batch;
    batch.reserve(1100);
    for (int i = 0; i < 1100; ++i) batch.push_back(Record(i));
    ASSERT_TRUE(journal->AppendBatch(batch).ok());
    last_hash = journal->last_hash();
    ASSERT_TRUE(journal->Close().ok());
  }
  auto reopened = Open(Connect(), {}, nullptr);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->last_seq(), 1100u);
  EXPECT_EQ(reopened->last_hash(), last_hash);
  ASSERT_TRUE(reopened->Close().ok());
  reopened.reset();
  EXPECT_EQ(OpenStatus().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PgJournal, ASourceOnAPolicyReconnectsAfterItsConnectionIsLost) {
  auto journal = Open(Connect(), {}, nullptr);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(journal->Append(Record(i)).ok());
  PgJournalRecordSource source(SocketPolicy());
  ASSERT_TRUE(source.Seek(1).ok());
  std::vector<JournalEntry> out;
  ASSERT_EQ(source.Next(2, 100, &out).value(), 2u);
  ASSERT_TRUE(journal->Close().ok());
  auto admin = ConnectAsAdmin();
  ASSERT_TRUE(admin
                  ->Exec("end the reader's session",
                         "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "  // waits until it ended
                         "WHERE datname = current_database() AND pid <> pg_backend_pid()")
                  .ok());
  EXPECT_EQ(source.Next(10, 100, &out).status().code(), StatusCode::kUnavailable);
  ASSERT_EQ(source.Next(10, 100, &out).value(), 1u);  // reconnected, from where it was
  EXPECT_EQ(out.back().seq, 3u);
}

// The trail the runtime will open (audit_trail.h) on the table: the journal there, the
// tiles in <dir>/tiles rebuilt from the table, entry bundles read from it.
TEST_F(PgJournal, AnAuditTrailRunsOnTheTable) {
  testutil::TempDir dir;
  audit::AuditTrailOptions o;
  o.dir = dir.str();
  o.open_storage = [&]() -> Result<std::unique_ptr<audit::JournalStorage>> {
    return std::unique_ptr<audit::JournalStorage>(
        std::make_unique<PgJournalStorage>(Connect(), PgJournalStorageOptions{}));
  };
  o.open_source = [policy = SocketPolicy()]() -> std::unique_ptr<audit::JournalRecordSource> {
    return std::make_unique<PgJournalRecordSource>(policy);
  };
  for (int run = 0; run < 2; ++run) {
    auto trail = audit::AuditTrail::Open(o);
    ASSERT_TRUE(trail.ok()) << trail.status().ToString();
    ASSERT_NE((*trail)->tiles(), nullptr);
    EXPECT_EQ((*trail)->tiles()->size(), static_cast<uint64_t>(RowCount()));
    for (int i = 0; i < 5; ++i) ASSERT_TRUE((*trail)->journal().Append(Record(i)).ok());
    ASSERT_TRUE((*trail)->journal().Close().ok());
    std::filesystem::remove_all(dir.path() / "tiles");  // derived: the next open rebuilds them from the table
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "journal"));
  EXPECT_EQ(RowCount(), 20);
}

}  // namespace
}  // namespace gpufed::pgjournal
