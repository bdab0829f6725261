#include "controller/common/bounded_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

namespace gpufed {
namespace {

class BoundedRead : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gpufed-bounded-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(BoundedRead, ReadsAFileUpToItsLimitExactly) {
  const std::string text(5000, 'x');
  Result<std::string> got = ReadFileBounded(Write("a", text), 5000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, text);
  Result<std::string> empty = ReadFileBounded(Write("e", ""), 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  const std::string binary("a\0b\nc", 5);
  Result<std::string> bytes = ReadFileBounded(Write("b", binary), 100);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, binary);
}

TEST_F(BoundedRead, AFileOverItsLimitIsRefusedWithItsSize) {
  Result<std::string> got = ReadFileBounded(Write("big", std::string(5001, 'x')), 5000);
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(got.status().message(), "file is 5001 bytes, above the limit of 5000");
}

// A file whose size the kernel reports as 0 but which holds more (a /proc file, one that
// grows while it is read) is read no further than one byte past the limit.
TEST_F(BoundedRead, AFileLargerThanItsReportedSizeStopsAtTheLimit) {
  struct stat st{};
  ASSERT_EQ(::stat("/proc/self/maps", &st), 0);
  ASSERT_EQ(st.st_size, 0);
  Result<std::string> capped = ReadFileBounded("/proc/self/maps", 16);
  EXPECT_EQ(capped.status().code(), StatusCode::kResourceExhausted) << capped.status().ToString();
  EXPECT_NE(capped.status().message().find("more than 16"), std::string::npos);
  Result<std::string> whole = ReadFileBounded("/proc/self/maps", size_t{16} << 20);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_NE(whole->find('\n'), std::string::npos);
}

TEST_F(BoundedRead, OnlyARegularFileIsRead) {
  EXPECT_EQ(ReadFileBounded(dir_.string(), 100).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadFileBounded("/dev/zero", 100).status().code(), StatusCode::kInvalidArgument);
  // A FIFO with no writer: refused at once, not waited on.
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> got = ReadFileBounded(fifo, 100);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "not a regular file");
  Result<std::string> missing = ReadFileBounded((dir_ / "none").string(), 100);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "cannot read: No such file or directory");
}

}  // namespace
}  // namespace gpufed
