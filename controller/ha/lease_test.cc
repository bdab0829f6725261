#include "controller/ha/lease.h"

#include <gtest/gtest.h>

#include "controller/ha/ha_test_fixture.h"

namespace gpufed::ha {
namespace {

constexpr std::string_view kLease = "gpufed-leader";
const Duration kShort = Duration::FromMillis(300);
const Duration kLong = Duration::FromSeconds(60);

class LeaseTest : public HaTest {};

TEST_F(LeaseTest, AFreeLeaseIsTakenAtEpochOneAndRenewedAtTheSameEpoch) {
  auto taken = TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_TRUE(taken->held);
  EXPECT_EQ(taken->lease.holder, "replica-a");
  EXPECT_EQ(taken->lease.epoch, 1);
  EXPECT_FALSE(taken->lease.expired);
  EXPECT_NEAR(taken->lease.expires_at_unix_micros - taken->lease.renewed_at_unix_micros, 60'000'000, 1000);

  auto renewed = TryAcquireOrRenew(*setup_, kLease, "replica-a", 1, kLong);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_TRUE(renewed->held);
  EXPECT_EQ(renewed->lease.epoch, 1);
  EXPECT_GE(renewed->lease.expires_at_unix_micros, taken->lease.expires_at_unix_micros);
}

TEST_F(LeaseTest, AHeldLeaseIsRefusedAndNamesItsHolder) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  auto refused = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, kLong);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_FALSE(refused->held);
  EXPECT_EQ(refused->lease.holder, "replica-a");
  EXPECT_EQ(refused->lease.epoch, 1);
  // Renewing with a stale epoch is not renewing.
  auto stale = TryAcquireOrRenew(*setup_, kLease, "replica-b", 7, kLong);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->held);
  EXPECT_EQ(stale->lease.holder, "replica-a");
  // Nor is the holder itself without its epoch (a term it gave up on its own clock): the
  // row is its own, but it must wait for the expiry and take a new epoch.
  auto own_without_epoch = TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong);
  ASSERT_TRUE(own_without_epoch.ok());
  EXPECT_FALSE(own_without_epoch->held);
  EXPECT_EQ(own_without_epoch->lease.epoch, 1);
}

TEST_F(LeaseTest, AnExpiredLeaseIsTakenWithTheNextEpoch) {
  auto first = TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kShort);
  ASSERT_TRUE(first.ok());
  // Not before the database's clock says so.
  auto early = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, kShort);
  ASSERT_TRUE(early.ok());
  EXPECT_FALSE(early->held);
  EXPECT_EQ(early->lease.holder, "replica-a");
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));
  auto taken = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, kLong);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_TRUE(taken->held);
  EXPECT_EQ(taken->lease.holder, "replica-b");
  EXPECT_EQ(taken->lease.epoch, 2);
  EXPECT_GE(taken->lease.renewed_at_unix_micros, first->lease.expires_at_unix_micros);
}

TEST_F(LeaseTest, ALapsedLeaseRenewedLateGetsANewEpoch) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kShort).ok());
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));
  auto late = TryAcquireOrRenew(*setup_, kLease, "replica-a", 1, kLong);
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(late->held);
  EXPECT_EQ(late->lease.holder, "replica-a");
  EXPECT_EQ(late->lease.epoch, 2);
}

TEST_F(LeaseTest, ReleaseLetsAnotherTakeItAtOnce) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  ASSERT_TRUE(ReleaseLease(*setup_, kLease, "replica-a", 1).ok());
  auto taken = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, kLong);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->lease.holder, "replica-b");
  EXPECT_EQ(taken->lease.epoch, 2);
  // A release by the old holder now changes nothing.
  ASSERT_TRUE(ReleaseLease(*setup_, kLease, "replica-a", 1).ok());
  auto lease = ReadLease(*setup_, kLease);
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_FALSE((*lease)->expired);
}

TEST_F(LeaseTest, ReadingANeverTakenLeaseGivesNothing) {
  auto lease = ReadLease(*setup_, "no-such-lease");
  ASSERT_TRUE(lease.ok());
  EXPECT_FALSE(lease->has_value());
}

}  // namespace
}  // namespace gpufed::ha
