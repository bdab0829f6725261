// StatementCache's bookkeeping, without a server: names, recency and the bound.
#include "controller/pg/statement_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpufed::pg {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(StatementCacheTest, FindsWhatWasInsertedUnderItsName) {
  StatementCache cache(4);
  EXPECT_EQ(cache.Find("SELECT 1"), nullptr);
  const std::string name = cache.NextName();
  EXPECT_THAT(cache.Insert("SELECT 1", name), IsEmpty());
  ASSERT_NE(cache.Find("SELECT 1"), nullptr);
  EXPECT_EQ(*cache.Find("SELECT 1"), name);
  EXPECT_EQ(cache.size(), 1U);
}

TEST(StatementCacheTest, NamesAreNeverReused) {
  StatementCache cache(1);
  const std::string first = cache.NextName();
  (void)cache.Insert("SELECT 1", first);
  cache.Clear();
  EXPECT_NE(cache.NextName(), first);
}

TEST(StatementCacheTest, PastTheBoundTheLeastRecentlyUsedGoes) {
  StatementCache cache(2);
  (void)cache.Insert("a", "n1");
  (void)cache.Insert("b", "n2");
  ASSERT_NE(cache.Find("a"), nullptr);  // b is now the least recently used
  EXPECT_THAT(cache.Insert("c", "n3"), ElementsAre("n2"));
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_NE(cache.Find("a"), nullptr);
  EXPECT_NE(cache.Find("c"), nullptr);
  EXPECT_EQ(cache.size(), 2U);
}

TEST(StatementCacheTest, PreparedAgainTheOldNameGoes) {
  StatementCache cache(4);
  (void)cache.Insert("a", "n1");
  EXPECT_THAT(cache.Insert("a", "n2"), ElementsAre("n1"));
  EXPECT_EQ(*cache.Find("a"), "n2");
  EXPECT_EQ(cache.size(), 1U);
}

TEST(StatementCacheTest, ClearForgetsEverything) {
  StatementCache cache(4);
  (void)cache.Insert("a", "n1");
  cache.Clear();
  EXPECT_EQ(cache.Find("a"), nullptr);
  EXPECT_EQ(cache.size(), 0U);
}

}  // namespace
}  // namespace gpufed::pg
