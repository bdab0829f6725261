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

}  // namespace
}  // namespace gpufed::connectors
