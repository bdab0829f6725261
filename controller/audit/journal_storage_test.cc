// The storage contract (testing/journal_storage_contract.h) on the file journal and on
// the in-memory table.
#include "controller/audit/journal_storage.h"

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "controller/audit/audit_trail.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/query.h"
#include "controller/audit/reader.h"
#include "controller/audit/testing/journal_storage_contract.h"
#include "controller/audit/testing/memory_journal_storage.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit::testing {
namespace {

class FileBackend {
 public:
  Env& env() { return *env_; }
  std::unique_ptr<JournalStorage> NewStorage() {
    return std::make_unique<FileJournalStorage>(FileJournalStorageOptions{.env = env_.get(), .dir = dir_.str()});
  }
  std::unique_ptr<JournalRecordSource> NewSource() { return std::make_unique<JournalReader>(env_.get(), dir_.str()); }

 private:
  std::unique_ptr<Env> env_ = NewPosixEnv();
  testutil::TempDir dir_;
};

class MemoryBackend {
 public:
  Env& env() { return *env_; }
  std::unique_ptr<JournalStorage> NewStorage() { return std::make_unique<MemoryJournalStorage>(&table_); }
  std::unique_ptr<JournalRecordSource> NewSource() { return std::make_unique<MemoryRecordSource>(&table_); }

 private:
  std::unique_ptr<Env> env_ = NewPosixEnv();
  MemoryJournalTable table_;
};

INSTANTIATE_TYPED_TEST_SUITE_P(File, JournalStorageContract, ::testing::Types<FileBackend>);
INSTANTIATE_TYPED_TEST_SUITE_P(Memory, JournalStorageContract, ::testing::Types<MemoryBackend>);

// The file journal a storage writes is the file journal Open writes: same folder, same
// bytes (the time stamps aside, which the clock gives).
TEST(FileJournalStorage, OpenWithTheFileStorageWritesWhatOpenWrites) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  JournalOptions o;
  o.env = env.get();
  o.dir = dir.str();
  o.segment_bytes = 600;  // a few records per segment: rotation goes through the storage too
  auto journal = AuditJournal::OpenWith(o, std::make_unique<FileJournalStorage>(FileJournalStorageOptions{
                                               .env = env.get(), .dir = dir.str(), .segment_bytes = o.segment_bytes}));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}}}).ok());
  }
  ASSERT_TRUE((*journal)->Close().ok());
  journal->reset();
  auto segments = ListSegments(*env, dir.str() + "/journal");
  ASSERT_TRUE(segments.ok());
  EXPECT_GT(segments->size(), 1u);
  // Open (the file journal by default) continues it.
  auto reopened = AuditJournal::Open(o);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ((*reopened)->last_seq(), 12u);
}

// Query reads any storage through its source: here a journal kept in memory alone.
TEST(MemoryJournalStorage, QueryReadsAJournalWithoutFiles) {
  MemoryJournalTable table;
  std::unique_ptr<Env> env = NewPosixEnv();
  JournalOptions o;
  o.env = env.get();
  auto journal = AuditJournal::OpenWith(o, std::make_unique<MemoryJournalStorage>(&table));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  for (const char* tenant : {"a", "b", "a"}) {
    ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, {{"workload", "w"}, {"tenant", tenant}}}).ok());
  }
  MemoryRecordSource source(&table);
  QueryFilter filter;
  filter.tenant = "a";
  std::vector<uint64_t> seqs;
  ASSERT_TRUE(ScanRecords(source, filter, [&](const nlohmann::json& r, const RecordTime&) {
                seqs.push_back(r["seq"].get<uint64_t>());
              }).ok());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(table.Rows().size(), 3u);
}

// A trail on another storage: no file journal is written, and its tiles (still kept in
// <dir>/tiles, derived data) and entry bundles come from that storage's record source.
TEST(AuditTrail, OnAnotherStorageTheTilesAndEntryBundlesComeFromItsRecordSource) {
  testutil::TempDir dir;
  MemoryJournalTable table;
  AuditTrailOptions o;
  o.dir = dir.str();
  o.open_storage = [&]() -> Result<std::unique_ptr<JournalStorage>> {
    return std::unique_ptr<JournalStorage>(std::make_unique<MemoryJournalStorage>(&table));
  };
  o.open_source = [&]() -> std::unique_ptr<JournalRecordSource> {
    return std::make_unique<MemoryRecordSource>(&table);
  };
  {
    auto trail = AuditTrail::Open(o);
    ASSERT_TRUE(trail.ok()) << trail.status().ToString();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*trail)->journal().Append({RecordKind::kDecision, {{"n", i}}}).ok());
    ASSERT_TRUE((*trail)->journal().Close().ok());
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "journal"));
  std::filesystem::remove_all(dir.path() / "tiles");  // rebuilt from the source by the next open
  auto trail = AuditTrail::Open(o);
  ASSERT_TRUE(trail.ok()) << trail.status().ToString();
  const std::vector<std::string> rows = table.Rows();
  ASSERT_NE((*trail)->tiles(), nullptr);
  EXPECT_EQ((*trail)->tiles()->size(), rows.size());
  Result<std::string> bundle = (*trail)->log().Tile("entries/000.p/" + std::to_string(rows.size()));
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  EXPECT_NE(bundle->find(rows.back()), std::string::npos);
  std::vector<JournalEntry> read;
  std::unique_ptr<JournalRecordSource> source = (*trail)->source_factory()();
  ASSERT_TRUE(source->Seek(1).ok());
  ASSERT_EQ(source->Next(100, 100, &read).value(), rows.size());
}

}  // namespace
}  // namespace gpufed::audit::testing
