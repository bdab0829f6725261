// The passes' snapshots in PostgreSQL (pg_snapshot_store.h): objects round-trip, one
// transaction per Sync however many objects, write-once rows that the triggers and the
// address CHECK defend against every role, the fence in every write (a deposed writer
// stores nothing), readers of a database older than the table, and an AuditTrail whose
// snapshots are the table's. Each test has a database of its own (pg_cluster fixture).
#include "controller/pgjournal/pg_snapshot_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "controller/audit/audit_trail.h"
#include "controller/audit/inputs.h"
#include "controller/audit/record.h"
#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgjournal/pg_record_source.h"
#include "controller/pgjournal/schema.h"
#include "controller/pgjournal/test_lease.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::pgjournal {
namespace {

class PgSnapshots : public pg::testing::PgTest {
 protected:
  std::unique_ptr<PgSnapshotStore> Writer(PgSnapshotStoreOptions options = {}) {
    auto store = PgSnapshotStore::Open(Connect(), std::move(options));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  std::unique_ptr<PgSnapshotStore> Reader() {
    auto connection = ConnectReadOnly(SocketPolicy());
    EXPECT_TRUE(connection.ok()) << connection.status().ToString();
    auto store = PgSnapshotStore::Open(std::move(*connection), {.read_only = true});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  int64_t RowCount() {
    auto rows = Connect()->Exec("count", "SELECT count(*) AS n FROM gpufed_snapshots");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->Int64(0, "n").value() : -1;
  }
};

std::string Object(int i) { return audit::DumpPayload({{"pending", {"w" + std::to_string(i)}}, {"n", i}}); }

TEST_F(PgSnapshots, ObjectsAreBufferedUntilSyncAndRoundTrip) {
  auto writer = Writer();
  ASSERT_NE(writer, nullptr);
  std::vector<std::string> names;
  names.reserve(50);
  for (int i = 0; i < 50; ++i) names.push_back(*writer->Add(Object(i)));
  EXPECT_EQ(*writer->Add(Object(7)), names[7]);  // buffered once
  EXPECT_EQ(writer->pending(), 50u);
  EXPECT_EQ(RowCount(), 0);  // nothing before Sync
  ASSERT_TRUE(writer->Sync().ok());
  EXPECT_EQ(writer->pending(), 0u);
  EXPECT_EQ(RowCount(), 50);
  EXPECT_EQ(names[3], audit::SnapshotDigest(Object(3)));

  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  for (int i : {0, 7, 49}) {
    Result<std::string> text = reader->GetText(names[i]);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(*text, Object(i));
  }
  Result<nlohmann::json> doc = reader->Get(names[5]);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ((*doc)["n"], 5);
  EXPECT_EQ(reader->GetText(audit::SnapshotDigest("{}")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(reader->GetText("sha1:abc").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reader->Add("{}").status().code(), StatusCode::kFailedPrecondition);
  // A buffered object is synced before it is read: what is read is durable.
  Result<std::string> late = writer->Add(Object(99));
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(*writer->GetText(*late), Object(99));
  EXPECT_EQ(writer->pending(), 0u);
  EXPECT_EQ(RowCount(), 51);
}

TEST_F(PgSnapshots, SyncIsOneRoundTripPerStatementWhateverTheNumberOfObjects) {
  auto connection = Connect();
  pg::Connection* raw = connection.get();
  auto store = PgSnapshotStore::Open(std::move(connection), {});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int objects : {1, 200}) {
    for (int i = 0; i < objects; ++i) ASSERT_TRUE((*store)->Add(Object(1000 * objects + i)).ok());
    const uint64_t before = raw->round_trips();
    ASSERT_TRUE((*store)->Sync().ok());
    EXPECT_EQ(raw->round_trips() - before, 2u) << objects << " objects";  // BEGIN with the INSERT, COMMIT
  }
  EXPECT_EQ(RowCount(), 201);
  const uint64_t before = raw->round_trips();
  ASSERT_TRUE((*store)->Sync().ok());  // nothing buffered: nothing sent
  EXPECT_EQ(raw->round_trips(), before);
}

TEST_F(PgSnapshots, RowsAreWriteOnceForEveryRoleAndMustBeTheirAddressesBytes) {
  auto writer = Writer();
  ASSERT_NE(writer, nullptr);
  const std::string name = *writer->Add(Object(1));
  ASSERT_TRUE(writer->Sync().ok());
  // Another writer (a later term, another replica) stores the same object: nothing changes.
  auto again = Writer();
  ASSERT_TRUE(again->Add(Object(1)).ok());
  ASSERT_TRUE(again->Add(Object(2)).ok());
  ASSERT_TRUE(again->Sync().ok());
  EXPECT_EQ(RowCount(), 2);
  std::unique_ptr<pg::Connection> owner = Connect(), superuser = ConnectAsAdmin();
  for (pg::Connection* c : {owner.get(), superuser.get()}) {
    EXPECT_EQ(c->Exec("update", "UPDATE gpufed_snapshots SET bytes = bytes || '\\x20'::bytea").status().code(),
              StatusCode::kPermissionDenied);
    EXPECT_EQ(c->Exec("delete", "DELETE FROM gpufed_snapshots").status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(c->Exec("truncate", "TRUNCATE gpufed_snapshots").status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(c->Exec("upsert",
                      "INSERT INTO gpufed_snapshots SELECT * FROM gpufed_snapshots "
                      "ON CONFLICT (address) DO UPDATE SET bytes = 'x'")
                  .status()
                  .code(),
              StatusCode::kPermissionDenied);
    // An object under another object's address: the CHECK refuses it.
    EXPECT_EQ(
        c->Exec("forge", "INSERT INTO gpufed_snapshots VALUES ('sha256:' || repeat('0', 64), convert_to('{}', 'UTF8'))")
            .status()
            .code(),
        StatusCode::kFailedPrecondition);
    // Nor is an address of any other shape stored (since version 3 the digest's CHECK
    // alone says so): upper-case hex of the right digest, a prefix, a trailing byte.
    for (const char* address : {"'sha256:' || upper(encode(sha256(convert_to('{}', 'UTF8')), 'hex'))",
                                "'SHA256:' || encode(sha256(convert_to('{}', 'UTF8')), 'hex')",
                                "'sha256:' || encode(sha256(convert_to('{}', 'UTF8')), 'hex') || ' '",
                                "encode(sha256(convert_to('{}', 'UTF8')), 'hex')"}) {
      EXPECT_EQ(c->Exec("shape",
                        std::string("INSERT INTO gpufed_snapshots VALUES (") + address + ", convert_to('{}', 'UTF8'))")
                    .status()
                    .code(),
                StatusCode::kFailedPrecondition)
          << address;
    }
  }
  EXPECT_EQ(RowCount(), 2);
  EXPECT_EQ(*Reader()->GetText(name), Object(1));
  // One CHECK per row, the digest's: the pattern's went at version 3.
  auto checks = ConnectAsAdmin()->Exec("checks",
                                       "SELECT string_agg(conname, ',') AS names FROM pg_constraint "
                                       "WHERE conrelid = 'gpufed_snapshots'::regclass AND contype = 'c'");
  ASSERT_TRUE(checks.ok()) << checks.status().ToString();
  EXPECT_EQ(*checks->Text(0, "names"), "gpufed_snapshots_address_is_digest");
}

TEST_F(PgSnapshots, ADeposedWritersFenceFailsAndItStoresNothing) {
  auto setup = Connect();
  testing::CreateTestLease(*setup);
  const auto fence_of = testing::TestFence;
  auto first = Writer({.fence = fence_of(1)});
  ASSERT_TRUE(first->Add(Object(1)).ok());
  ASSERT_TRUE(first->Sync().ok());
  testing::TakeOverTestLease(*setup);
  // The deposed writer's pass: every object refused, none stored, all still buffered.
  const std::string lost = *first->Add(Object(2));
  ASSERT_TRUE(first->Add(Object(3)).ok());
  EXPECT_EQ(first->Sync().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(first->pending(), 2u);
  EXPECT_EQ(first->GetText(lost).status().code(), StatusCode::kFailedPrecondition);  // reading syncs first
  EXPECT_EQ(RowCount(), 1);
  EXPECT_EQ(Reader()->GetText(lost).status().code(), StatusCode::kNotFound);
  // The new leader stores the same object; the old one stays refused.
  auto second = Writer({.fence = fence_of(2)});
  ASSERT_TRUE(second->Add(Object(2)).ok());
  ASSERT_TRUE(second->Sync().ok());
  EXPECT_EQ(first->Sync().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(RowCount(), 2);
  EXPECT_EQ(*Reader()->GetText(lost), Object(2));
}

TEST_F(PgSnapshots, AReaderOfADatabaseWithoutTheTableFindsNothing) {
  // Journalled by a gpufed before version 2 (or never migrated): no table, no object.
  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  Result<std::string> text = reader->GetText(audit::SnapshotDigest(Object(1)));
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_NE(text.status().message().find("state folder"), std::string::npos) << text.status().message();
  // The controller's role checks the version and is refused a schema it does not know.
  auto unmigrated = PgSnapshotStore::Open(Connect(), {.migrate = false});
  EXPECT_EQ(unmigrated.status().code(), StatusCode::kFailedPrecondition);
}

// The trail the runtime opens under --store: the journal and the snapshots in the tables,
// no snapshots/ folder; what the loop writes through trail.snapshots() reads back.
TEST_F(PgSnapshots, AnAuditTrailKeepsItsSnapshotsInTheTable) {
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
  o.open_snapshots = [&]() -> Result<std::unique_ptr<audit::SnapshotStore>> {
    auto store = PgSnapshotStore::Open(Connect(), {});
    if (!store.ok()) return store.status();
    return std::unique_ptr<audit::SnapshotStore>(std::move(*store));
  };
  auto trail = audit::AuditTrail::Open(o);
  ASSERT_TRUE(trail.ok()) << trail.status().ToString();
  Result<std::string> name = (*trail)->snapshots().Put({{"format", 4}, {"revision", {{"id", "r1"}, {"repo", "/r"}}}});
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  ASSERT_TRUE((*trail)->journal().Close().ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "snapshots"));
  Result<audit::SnapshotRevision> revision = audit::ReadSnapshotRevision(*Reader(), *name);
  ASSERT_TRUE(revision.ok()) << revision.status().ToString();
  EXPECT_EQ(revision->id, "r1");
  EXPECT_EQ(revision->repo, "/r");
}

}  // namespace
}  // namespace gpufed::pgjournal
