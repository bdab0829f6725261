// Store::OpenReadOnly (`gpufed plan --state`): reads what a controller stored, and
// creates, migrates, narrows and writes nothing; every write is an error value.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "controller/store/sqlite.h"
#include "controller/store/store.h"
#include "tests/testutil/folder_print.h"

namespace gpufed::store {
namespace {

namespace fs = std::filesystem;

std::string Folder(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/store_read_only_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

WorkloadRecord Record(const std::string& name) {
  WorkloadRecord r;
  r.name = name;
  r.uid = name + "-u1";
  r.tenant = "t";
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

// A store as a stopped controller leaves it: rows of every kind, closed cleanly (no -wal).
void WriteStoppedStore(const std::string& path) {
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Store& s = **store;
  ASSERT_TRUE(s.Submit(Record("waits"), Duration::FromSeconds(1)).ok());
  ASSERT_TRUE(s.Submit(Record("runs"), Duration::FromSeconds(2)).ok());
  WorkloadRecord runs = Record("runs");
  runs.state = WorkloadState::kRunning;
  runs.cluster = "onprem";
  ASSERT_TRUE(s.RecordIntentAndUpdate({"submit", runs.ActionKey(), "runs", 1, "onprem"}, runs, "placed",
                                      Duration::FromSeconds(3))
                  .ok());
  ASSERT_TRUE(s.SetMeta("fair_share", "{\"x\":1}").ok());
}

// Every write the Store offers, tried once; each must fail, none may crash.
void ExpectEveryWriteRefused(Store& s) {
  auto refused = [](const Status& st, const char* what) {
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << what << ": " << st.ToString();
  };
  refused(s.Submit(Record("new"), Duration::FromSeconds(9)), "Submit");
  refused(s.SubmitNumbered(Record("numbered"), Duration::FromSeconds(9)).status(), "SubmitNumbered");
  WorkloadRecord waits = Record("waits");
  waits.state = WorkloadState::kQueued;
  refused(s.Update(waits, "queued", Duration::FromSeconds(9)), "Update");
  refused(s.RequestCancel("waits-u1"), "RequestCancel");
  refused(s.RecordDecision({}).status(), "RecordDecision");
  refused(s.RecordActionIntent({"submit", "waits-u1.a1", "waits", 1, "onprem"}), "RecordActionIntent");
  refused(s.RecordIntentsAndUpdates({}, {{waits, "queued"}}, Duration::FromSeconds(9)), "RecordIntentsAndUpdates");
  refused(s.MarkAction("submit", "runs-u1.a1", ActionState::kApplied, ""), "MarkAction");
  AttemptRow attempt{"runs", 1, "t", "onprem", "succeeded", 60, Money(1000000, "EUR"), false, {}, {}, "runs-u1"};
  refused(s.FinishAttempt(attempt), "FinishAttempt");
  refused(s.FinishAttemptLater(attempt), "FinishAttemptLater");
  refused(s.AppendHistory(Duration::FromSeconds(9), "{}", Duration()), "AppendHistory");
  refused(s.SetMeta("k", "v"), "SetMeta");
  // The writes that return nothing are dropped: never shown as if stored, nothing to flush.
  s.SetMetaLater("fair_share", "{\"changed\":true}");
  s.MarkActionLater("submit", "runs-u1.a1", ActionState::kApplied, "");
  s.RecordDecisionLater({});
  s.AppendHistoryLater(Duration::FromSeconds(9), "{}", Duration());
  EXPECT_EQ(s.deferred_writes(), 0u);
  EXPECT_TRUE(s.Flush().ok());
  Result<std::optional<std::string>> meta = s.GetMeta("fair_share");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->value_or(""), "{\"x\":1}");
}

TEST(StoreReadOnly, ReadsAStoppedControllersStoreAndChangesNoFile) {
  const std::string dir = Folder("stopped");
  const std::string path = dir + "/gpufed.db";
  WriteStoppedStore(path);
  ASSERT_FALSE(fs::exists(path + "-wal"));  // a clean close checkpoints and removes it
  const testutil::FolderPrint before = testutil::PrintFolder(dir);
  {
    auto store = Store::OpenReadOnly(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Store& s = **store;
    EXPECT_TRUE(s.read_only());
    EXPECT_EQ(s.schema_version(), Store::LatestSchemaVersion());
    Result<std::vector<WorkloadRecord>> unfinished = s.ListUnfinished();
    ASSERT_TRUE(unfinished.ok()) << unfinished.status().ToString();
    ASSERT_EQ(unfinished->size(), 2u);
    EXPECT_EQ((*unfinished)[1].state, WorkloadState::kRunning);
    Result<std::optional<ActionRow>> action = s.GetAction("submit", "runs-u1.a1");
    ASSERT_TRUE(action.ok());
    EXPECT_TRUE(action->has_value());
    ExpectEveryWriteRefused(s);
  }
  EXPECT_EQ(testutil::DescribeChanges(before, testutil::PrintFolder(dir)), "");
}

// A live controller's folder: its -wal holds commits the database file does not have yet.
TEST(StoreReadOnly, ReadsTheCommitsOfALiveControllersWalWithoutWritingTheDatabaseOrTheWal) {
  const std::string dir = Folder("live");
  const std::string path = dir + "/gpufed.db";
  WriteStoppedStore(path);
  auto live = Store::Open(path);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_TRUE((*live)->Submit(Record("fresh"), Duration::FromSeconds(1)).ok());
  ASSERT_TRUE(fs::exists(path + "-wal"));
  const testutil::FolderPrint before = testutil::PrintFolder(dir);
  {
    auto reader = Store::OpenReadOnly(path);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    Result<std::optional<WorkloadRecord>> fresh = (*reader)->Get("t", "fresh");
    ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
    EXPECT_TRUE(fresh->has_value()) << "the commit in the -wal was not read";
    ExpectEveryWriteRefused(**reader);
  }
  const testutil::FolderPrint after = testutil::PrintFolder(dir);
  // A WAL reader writes its read marks into the -shm (sqlite.cc, OpenReadOnly); the
  // database and the -wal stay as they were.
  for (const char* file : {"gpufed.db", "gpufed.db-wal"}) {
    ASSERT_TRUE(after.count(file)) << file;
    EXPECT_EQ(after.at(file), before.at(file)) << file;
  }
  EXPECT_EQ(after.size(), before.size());
}

TEST(StoreReadOnly, CreatesNoDatabaseThatDoesNotExist) {
  const std::string dir = Folder("missing");
  auto store = Store::OpenReadOnly(dir + "/gpufed.db");
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound) << store.status().ToString();
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(StoreReadOnly, RefusesASymlinkInPlaceOfTheDatabase) {
  const std::string dir = Folder("symlink");
  WriteStoppedStore(dir + "/real.db");
  fs::create_symlink(dir + "/real.db", dir + "/gpufed.db");
  auto store = Store::OpenReadOnly(dir + "/gpufed.db");
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition) << store.status().ToString();
}

// A database at `version` (PRAGMA user_version), as an older or newer gpufed left it.
std::string StoreAtVersion(const std::string& name, int version) {
  const std::string path = Folder(name) + "/gpufed.db";
  auto db = Database::Open(path);
  EXPECT_TRUE(db.ok());
  EXPECT_TRUE((*db)->Exec("CREATE TABLE workloads(seq INTEGER)").ok());
  EXPECT_TRUE((*db)->Exec("PRAGMA user_version = " + std::to_string(version)).ok());
  return path;
}

TEST(StoreReadOnly, RefusesAnOlderSchemaInsteadOfMigratingIt) {
  const std::string path = StoreAtVersion("older", 1);
  const std::string dir = fs::path(path).parent_path().string();
  const testutil::FolderPrint before = testutil::PrintFolder(dir);
  auto store = Store::OpenReadOnly(path);
  ASSERT_EQ(store.status().code(), StatusCode::kFailedPrecondition) << store.status().ToString();
  EXPECT_NE(store.status().message().find("older"), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("gpufed run"), std::string::npos) << store.status().message();
  EXPECT_EQ(testutil::DescribeChanges(before, testutil::PrintFolder(dir)), "");
}

TEST(StoreReadOnly, RefusesANewerSchema) {
  const std::string path = StoreAtVersion("newer", Store::LatestSchemaVersion() + 1);
  auto store = Store::OpenReadOnly(path);
  ASSERT_EQ(store.status().code(), StatusCode::kFailedPrecondition) << store.status().ToString();
  EXPECT_NE(store.status().message().find("newer"), std::string::npos) << store.status().message();
}

TEST(StoreReadOnly, ADatabaseOpenedReadOnlyRefusesWritingStatementsAndTransactions) {
  const std::string path = Folder("database") + "/gpufed.db";
  WriteStoppedStore(path);
  auto db = Database::OpenReadOnly(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_TRUE((*db)->read_only());
  EXPECT_EQ((*db)->Prepare("DELETE FROM meta").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*db)->Exec("DELETE FROM meta").code(), StatusCode::kFailedPrecondition);  // SQLITE_READONLY
  Transaction tx(**db);
  EXPECT_EQ(tx.begin_status().code(), StatusCode::kFailedPrecondition);
  auto read = (*db)->Prepare("SELECT COUNT(*) FROM workloads");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE((*read)->Step().ok());
  EXPECT_EQ((*read)->Int(0), 2);
}

}  // namespace
}  // namespace gpufed::store
