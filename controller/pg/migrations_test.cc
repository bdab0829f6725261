#include "controller/pg/migrations.h"

#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/pg/testing/pg_test_server.h"

namespace gpufed::pg {
namespace {

using ::testing::HasSubstr;
using testing::PgTest;

constexpr Migration kWidgets[] = {
    {1, "widgets", "CREATE TABLE widgets (id bigint PRIMARY KEY); CREATE INDEX widgets_id ON widgets (id)"},
    {2, "widget names", "ALTER TABLE widgets ADD COLUMN name text NOT NULL DEFAULT ''"},
};

class MigrationsTest : public PgTest {};

TEST_F(MigrationsTest, AppliesOnceAndRecordsEachStep) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  EXPECT_EQ(*SchemaVersion(*connection, "widgets"), 0);
  ASSERT_TRUE(Migrate(*connection, "widgets", std::span(kWidgets).first(1)).ok());
  EXPECT_EQ(*SchemaVersion(*connection, "widgets"), 1);
  Status again = Migrate(*connection, "widgets", kWidgets);
  ASSERT_TRUE(again.ok()) << again.ToString();
  ASSERT_TRUE(Migrate(*connection, "widgets", kWidgets).ok());  // nothing left to do
  EXPECT_EQ(*SchemaVersion(*connection, "widgets"), 2);
  auto steps =
      connection->Exec("read the history", "SELECT count(*) AS n FROM gpufed_schema WHERE component = 'widgets'");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(*steps->Int64(0, "n"), 2);
  EXPECT_TRUE(connection->Exec("use the table", "INSERT INTO widgets (id, name) VALUES (1, 'a')").ok());
  // Components are versioned apart.
  EXPECT_EQ(*SchemaVersion(*connection, "other"), 0);
}

TEST_F(MigrationsTest, RefusesANewerSchemaNamingBothVersions) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(Migrate(*connection, "widgets", kWidgets).ok());
  Status older_binary = Migrate(*connection, "widgets", std::span(kWidgets).first(1));
  ASSERT_EQ(older_binary.code(), StatusCode::kFailedPrecondition) << older_binary.ToString();
  EXPECT_THAT(older_binary.message(), HasSubstr("version 2"));
  EXPECT_THAT(older_binary.message(), HasSubstr("version 1"));
}

TEST_F(MigrationsTest, AFailedStepAppliesNothing) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  constexpr Migration kBroken[] = {
      {1, "widgets", "CREATE TABLE widgets (id bigint PRIMARY KEY)"},
      {2, "broken", "ALTER TABLE no_such_table ADD COLUMN x integer"},
  };
  Status failed = Migrate(*connection, "widgets", kBroken);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("widgets migration 2"));
  EXPECT_EQ(*SchemaVersion(*connection, "widgets"), 0);
  auto table = connection->Exec("look for the table", "SELECT to_regclass('widgets') IS NULL AS absent");
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(*table->Bool(0, "absent"));
}

TEST_F(MigrationsTest, ReplicasMigratingAtOnceApplyEachStepOnce) {
  // Two first starts at the same moment: the advisory lock lets one migrate and the other
  // find the schema current (without it, both would CREATE TABLE and one fail).
  auto first = Connect();
  auto second = Connect();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  Status first_result;
  Status second_result;
  std::thread other([&] { second_result = Migrate(*second, "widgets", kWidgets); });
  first_result = Migrate(*first, "widgets", kWidgets);
  other.join();
  EXPECT_TRUE(first_result.ok()) << first_result.ToString();
  EXPECT_TRUE(second_result.ok()) << second_result.ToString();
  auto steps = first->Exec("read the history", "SELECT count(*) AS n FROM gpufed_schema WHERE component = 'widgets'");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(*steps->Int64(0, "n"), 2);
}

TEST_F(MigrationsTest, RefusesAListNotNumberedInOrder) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  constexpr Migration kGap[] = {{1, "a", "SELECT 1"}, {3, "c", "SELECT 1"}};
  EXPECT_EQ(Migrate(*connection, "gap", kGap).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpufed::pg
