#include "connectors/kubernetes/kube_api.h"

#include <gtest/gtest.h>

#include "controller/common/utf8.h"

namespace gpufed::connectors::kubernetes {
namespace {

TEST(ParseListPage, ReadsItemsResourceVersionAndContinue) {
  Result<ListPage> page = ParseListPage(
      R"({"kind":"PodList","metadata":{"resourceVersion":"77","continue":"abc"},"items":[{"a":1},{"b":2}]})", "list /p");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->resource_version, "77");
  EXPECT_EQ(page->continue_token, "abc");
  page = ParseListPage(R"({"items":null})", "list /p");  // no metadata: the last page
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
  EXPECT_EQ(page->continue_token, "");
}

// Found while extracting the parser for fuzz_kube_response: json::value() threw
// type_error out of KubeApi::List for these answers of a misbehaving server or proxy.
TEST(ParseListPage, WrongShapesAreUnavailableNotExceptions) {
  for (const char* body : {"[]", "\"text\"", "42", R"({"metadata":"x"})", R"({"metadata":{"continue":5}})",
                           R"({"metadata":{"resourceVersion":["1"]}})"}) {
    Result<ListPage> page = ParseListPage(body, "list /api/v1/pods");
    ASSERT_FALSE(page.ok()) << body;
    EXPECT_EQ(page.status().code(), StatusCode::kUnavailable) << body;
    EXPECT_NE(page.status().message().find("list /api/v1/pods"), std::string::npos) << page.status().message();
  }
  Result<ListPage> page = ParseListPage("{", "list /p");
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("malformed JSON"), std::string::npos);
}

// gpufed issue 42: a message cut at 200 bytes split a UTF-8 character, and the invalid
// text later made /v1/workloads answer 500 (nlohmann's dump throws on it).
TEST(StatusFromResponse, KeepsAtMost200BytesOfValidUtf8FromTheApi) {
  std::string message(199, 'm');
  message += "\\u00e9 and a long tail";  // JSON escape of a 2-byte character at offset 199
  http::Response r;
  r.status = 422;
  r.body = R"({"kind":"Status","reason":"Invalid","message":")" + message + R"("})";
  Status s = StatusFromResponse(r, "create /jobs");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(FirstInvalidUtf8(s.message()).has_value());
  EXPECT_NE(s.message().find("Invalid"), std::string::npos);
  EXPECT_LE(s.message().size(), std::string("create /jobs: HTTP 422 Invalid: ").size() + 200);

  r.status = 502;  // a proxy's page, not JSON: raw bytes, some not UTF-8
  r.body = std::string(198, 'p') + "\xC3\xA9\xFF\xFE<html>" + std::string(1000, 'x');
  s = StatusFromResponse(r, "list /api/v1/pods");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(FirstInvalidUtf8(s.message()).has_value());
  EXPECT_LE(s.message().size(), std::string("list /api/v1/pods: HTTP 502: ").size() + 200);
}

TEST(ParseRfc3339, ReadsUtcFractionsAndOffsets) {
  EXPECT_EQ(ParseRfc3339("2025-01-01T10:00:00Z"), 1735725600);
  EXPECT_EQ(ParseRfc3339("2025-01-01T10:00:00.123456Z"), 1735725600);
  EXPECT_EQ(ParseRfc3339("2025-01-01T11:30:00+01:30"), 1735725600);
  EXPECT_EQ(ParseRfc3339("2025-01-01T08:00:00-02:00"), 1735725600);
}

// fuzz_kube_response: "+1:2" passed sscanf("%2d:%2d") and the parser then skipped six
// bytes, past the end of the text (an ASan heap-buffer-overflow for a long string).
TEST(ParseRfc3339, OffsetMustBeTwoDigitsColonTwoDigits) {
  for (const char* text : {"2026-11-23T10:00:00+1:2", "2026-11-23T10:00:00+1:20", "2026-11-23T10:00:00+01:2",
                           "2026-11-23T10:00:00+ 1:-1", "2026-11-23T10:00:00+0100", "2026-11-23T10:00:00+",
                           "2026-11-23T10:00:00+01:00x"}) {
    EXPECT_EQ(ParseRfc3339(text), std::nullopt) << text;
  }
  // The offset at the very end of a heap-allocated (not small-string) text.
  const std::string long_text = "2026-11-23T10:00:00.123456789012345678901234567890+1:2";
  EXPECT_EQ(ParseRfc3339(long_text), std::nullopt);
}

}  // namespace
}  // namespace gpufed::connectors::kubernetes
