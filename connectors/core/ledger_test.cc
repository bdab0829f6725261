#include "connectors/core/ledger.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpufed::connectors {
namespace {

std::string TempFile(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/ledger_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/ledger.log";
}

TEST(ActionLedger, RejectsASecondRecordOfTheSameKindAndKey) {
  auto ledger = ActionLedger::Open(TempFile("dup"));
  ASSERT_TRUE(ledger.ok());
  ASSERT_TRUE((*ledger)->Append({"submit", "w-1.a1", "{}"}).ok());
  EXPECT_EQ((*ledger)->Append({"submit", "w-1.a1", "{}"}).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE((*ledger)->Append({"cancel", "w-1.a1", "{}"}).ok());
  EXPECT_EQ((*ledger)->records().size(), 2u);
}

TEST(ActionLedger, KeepsRecordsAcrossReopen) {
  // Unsynced (a simulated cluster's ledger in a replay) skips fdatasync only: a reopen
  // after the process ends reads the same records.
  for (Durability d : {Durability::kSynced, Durability::kUnsynced}) {
    std::string path = TempFile(d == Durability::kSynced ? "reopen" : "reopen_unsynced");
    {
      auto ledger = ActionLedger::Open(path, d);
      ASSERT_TRUE((*ledger)->Append({"submit", "a", "{\"x\":1}"}).ok());
    }
    auto again = ActionLedger::Open(path);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE((*again)->Contains("submit", "a"));
    EXPECT_EQ((*again)->records()[0].payload, "{\"x\":1}");
  }
}

TEST(ActionLedger, CutsOffATornLastRecord) {
  std::string path = TempFile("torn");
  std::ofstream(path) << "submit\ta\t{}\nsubmit\tb\t{\"trunc";
  auto ledger = ActionLedger::Open(path);
  ASSERT_TRUE(ledger.ok());
  EXPECT_TRUE((*ledger)->Contains("submit", "a"));
  EXPECT_FALSE((*ledger)->Contains("submit", "b"));
  ASSERT_TRUE((*ledger)->Append({"submit", "b", "{}"}).ok());
  auto records = ReadLedger(path);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 2u);
}

TEST(ActionLedger, RefusesFieldsWithTabsOrNewlines) {
  auto ledger = ActionLedger::Open(TempFile("tabs"));
  EXPECT_EQ((*ledger)->Append({"submit", "a\tb", "{}"}).code(), StatusCode::kInvalidArgument);
}

// `gpufed plan --state`: the ledger is read as it is, and nothing on disk changes.
TEST(ActionLedgerReadOnly, ReadsTheCompleteRecordsAndLeavesATornTailInPlace) {
  const std::string path = TempFile("read_only_torn");
  const std::string text = "submit\ta\t{}\ncancel\ta\t{}\nsubmit\tb\t{\"trunc";
  std::ofstream(path) << text;
  std::filesystem::permissions(path, std::filesystem::perms(0644));  // Open would narrow it
  auto ledger = ActionLedger::OpenInStateDir(std::filesystem::path(path).parent_path().string(), Durability::kSynced,
                                             LedgerAccess::kReadOnly);
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  ASSERT_NE(*ledger, nullptr);
  EXPECT_TRUE((*ledger)->read_only());
  EXPECT_TRUE((*ledger)->Contains("submit", "a"));
  EXPECT_TRUE((*ledger)->Contains("cancel", "a"));
  EXPECT_FALSE((*ledger)->Contains("submit", "b"));
  EXPECT_EQ((*ledger)->records().size(), 2u);
  Status appended = (*ledger)->Append({"submit", "c", "{}"});
  EXPECT_EQ(appended.code(), StatusCode::kFailedPrecondition) << appended.ToString();
  EXPECT_FALSE((*ledger)->Contains("submit", "c"));
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), text);  // the torn tail too
  EXPECT_EQ(std::filesystem::status(path).permissions(), std::filesystem::perms(0644));
}

TEST(ActionLedgerReadOnly, AMissingFolderOrFileIsALedgerWithoutRecordsAndIsNotCreated) {
  const std::string dir = std::filesystem::path(TempFile("read_only_missing")).parent_path().string() + "/connector";
  auto ledger = ActionLedger::OpenInStateDir(dir, Durability::kSynced, LedgerAccess::kReadOnly);
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  EXPECT_TRUE((*ledger)->records().empty());
  EXPECT_EQ((*ledger)->Append({"submit", "a", "{}"}).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ActionLedgerReadOnly, RefusesASymlinkInPlaceOfTheLedger) {
  const std::string path = TempFile("read_only_symlink");
  std::ofstream(path + ".real") << "submit\ta\t{}\n";
  std::filesystem::create_symlink(path + ".real", path);
  EXPECT_EQ(ActionLedger::OpenReadOnly(path).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpufed::connectors
