// The metered days a budget period sums (schema 7): kept with every booked attempt, and
// filled from the attempts an older store already holds when it is migrated.
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/store/schema.h"
#include "controller/store/sqlite.h"
#include "controller/store/store.h"

namespace gpufed::store {
namespace {

constexpr int64_t kDayMillis = 86'400'000;

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/metered_days_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

Money Eur(int64_t euros) { return Money(euros * 1'000'000, "EUR"); }

AttemptRow Attempt(const std::string& uid, const std::string& tenant, int64_t euros, bool cloud, int64_t finished_ms) {
  AttemptRow a;
  a.workload = uid;
  a.attempt = 1;
  a.tenant = tenant;
  a.cluster = cloud ? "cloud" : "onprem";
  a.outcome = "succeeded";
  a.cost = Eur(euros);
  a.cloud = cloud;
  a.finished = Duration::FromMillis(finished_ms);
  a.uid = uid;
  return a;
}

TEST(MeteredDays, SumsEachTenantsBookingsByUtcDay) {
  auto store = Store::Open(Db("sums"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->FinishAttempt(Attempt("a-u1", "nlp", 1, false, 10)).ok());
  ASSERT_TRUE((*store)->FinishAttempt(Attempt("b-u2", "nlp", 2, true, kDayMillis - 1)).ok());
  ASSERT_TRUE((*store)->FinishAttempt(Attempt("c-u3", "nlp", 4, true, kDayMillis)).ok());   // the next day
  ASSERT_TRUE((*store)->FinishAttempt(Attempt("c-u3", "nlp", 4, true, kDayMillis)).ok());   // booked once
  ASSERT_TRUE((*store)->FinishAttempt(Attempt("d-u4", "cv", 8, false, 3 * kDayMillis + 5)).ok());
  Result<std::vector<MeteredDayRow>> all = (*store)->MeteredDays(Duration());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);  // by tenant, then day
  EXPECT_EQ((*all)[0].tenant, "cv");
  EXPECT_EQ((*all)[0].day, Duration::FromMillis(3 * kDayMillis));
  EXPECT_EQ((*all)[0].cloud_spent, Money(0, "EUR"));
  EXPECT_EQ((*all)[1].tenant, "nlp");
  EXPECT_EQ((*all)[1].day, Duration());
  EXPECT_EQ((*all)[1].spent, Eur(3));
  EXPECT_EQ((*all)[1].cloud_spent, Eur(2));
  EXPECT_EQ((*all)[2].day, Duration::FromMillis(kDayMillis));
  EXPECT_EQ((*all)[2].spent, Eur(4));
  // From a time on: the whole day that holds it, and the days after.
  Result<std::vector<MeteredDayRow>> later = (*store)->MeteredDays(Duration::FromMillis(kDayMillis + 5));
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 2u);
  EXPECT_EQ((*later)[0].tenant, "cv");
  EXPECT_EQ((*later)[1].spent, Eur(4));
  // The all-time usage ledger is unchanged by it.
  EXPECT_EQ((*store)->Usage()->at("nlp").spent, Eur(7));
}

TEST(MeteredDays, AnOlderStoreIsFilledFromItsAttemptsWhenMigrated) {
  const std::string path = Db("migrated");
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    const int before = 6;  // the schema before tenant_usage_days
    for (int v = 0; v < before; ++v) ASSERT_TRUE((*db)->Exec(SqliteSchemaMigrations()[v]).ok()) << v;
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version = " + std::to_string(before)).ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO attempts VALUES('a-u1', 1, 'a', 'nlp', 'cloud', 'succeeded', 10, 3000000, "
                           "'EUR', 1, 0, 100), ('b-u2', 1, 'b', 'nlp', 'onprem', 'failed', 10, 5000000, 'EUR', 0, 0, "
                           "200)")
                    .ok());
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<std::vector<MeteredDayRow>> days = (*store)->MeteredDays(Duration());
  ASSERT_TRUE(days.ok()) << days.status().ToString();
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].spent, Eur(8));
  EXPECT_EQ((*days)[0].cloud_spent, Eur(3));
}

}  // namespace
}  // namespace gpufed::store
