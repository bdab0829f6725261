#include "controller/pg/sqlstate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpufed::pg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SqlState, MapsByKind) {
  EXPECT_EQ(StatusCodeForSqlState("40001"), StatusCode::kAborted);
  EXPECT_EQ(StatusCodeForSqlState("40P01"), StatusCode::kAborted);
  EXPECT_EQ(StatusCodeForSqlState("08006"), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForSqlState("57P01"), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForSqlState("25006"), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForSqlState("57014"), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(StatusCodeForSqlState("23505"), StatusCode::kAlreadyExists);
  EXPECT_EQ(StatusCodeForSqlState("23503"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(StatusCodeForSqlState("28P01"), StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeForSqlState("42501"), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeForSqlState("53100"), StatusCode::kResourceExhausted);
  EXPECT_EQ(StatusCodeForSqlState("22P02"), StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForSqlState("GF001"), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForSqlState("42P01"), StatusCode::kInternal);
  EXPECT_EQ(StatusCodeForSqlState(""), StatusCode::kInternal);
}

TEST(SqlState, MessagesNameThePurposeNotTheValues) {
  // A data exception's primary message quotes the input: it is not repeated.
  Status bad_input = StatusFromServerError("record the decision", "22P02",
                                           "invalid input syntax for type integer: \"tenant-secret\"", "");
  EXPECT_THAT(bad_input.message(), HasSubstr("record the decision"));
  EXPECT_THAT(bad_input.message(), HasSubstr("22P02"));
  EXPECT_THAT(bad_input.message(), Not(HasSubstr("tenant-secret")));
  Status duplicate =
      StatusFromServerError("submit a workload", "23505",
                            "duplicate key value violates unique constraint \"workloads_pkey\"", "workloads_pkey");
  EXPECT_EQ(duplicate.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(duplicate.message(), HasSubstr("submit a workload"));
  EXPECT_THAT(duplicate.message(), HasSubstr("workloads_pkey"));
  Status missing = StatusFromServerError("read the lease", "42P01", "relation \"gpufed_lease\" does not exist", "");
  EXPECT_THAT(missing.message(), HasSubstr("gpufed_lease"));
  // gpufed's own refusals say what they refused, in words the function chose.
  Status fenced = StatusFromServerError("check the fence", "GF001", "fenced: epoch 1 is no longer the lease's", "");
  EXPECT_EQ(fenced.code(), StatusCode::kUnavailable);  // the API's 503: retry at the leader
  EXPECT_EQ(fenced.message(), "check the fence: fenced: epoch 1 is no longer the lease's (SQLSTATE GF001)");
}

}  // namespace
}  // namespace gpufed::pg
