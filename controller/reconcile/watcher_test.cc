#include "controller/reconcile/watcher.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpufed::reconcile {
namespace {

std::string Dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/watcher_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/sub");
  return dir;
}

TEST(RepoWatcher, SeesAChangedFileThroughInotify) {
  std::string dir = Dir("inotify");
  RepoWatcher w(dir);
  ASSERT_TRUE(w.using_inotify());
  EXPECT_FALSE(w.Changed());
  std::ofstream(dir + "/sub/a.yaml") << "x: 1\n";
  EXPECT_TRUE(w.Changed());
  EXPECT_FALSE(w.Changed());
}

TEST(RepoWatcher, FallsBackToPollingFingerprints) {
  std::string dir = Dir("poll");
  RepoWatcher w(dir, /*force_polling=*/true, std::chrono::milliseconds(0));
  EXPECT_FALSE(w.using_inotify());
  EXPECT_FALSE(w.Changed());
  std::ofstream(dir + "/sub/a.yaml") << "x: 1\n";
  EXPECT_TRUE(w.Changed());
  EXPECT_FALSE(w.Changed());
  std::filesystem::remove(dir + "/sub/a.yaml");
  EXPECT_TRUE(w.Changed());
}

}  // namespace
}  // namespace gpufed::reconcile
