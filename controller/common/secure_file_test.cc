#include "controller/common/secure_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpufed {
namespace {

namespace fs = std::filesystem;

// A scratch folder for one test, removed at its end.
class SecureFileTest : public ::testing::Test {
 protected:
  SecureFileTest() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / ("secure_file_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~SecureFileTest() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  // Writes `text` to a new file and sets its mode (as an operator's editor and chmod would).
  std::string Write(const std::string& name, const std::string& text, mode_t mode) const {
    const std::string path = Path(name);
    std::ofstream(path) << text;
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  fs::path dir_;
};

TEST_F(SecureFileTest, CreatesMissingFoldersOwnerOnly) {
  const std::string leaf = Path("a/b/state");
  Result<std::optional<ModeChange>> made = MakePrivateFolder(leaf);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_FALSE(made->has_value());  // nothing existed, nothing was narrowed
  EXPECT_EQ(ModeOf(leaf), 0700u);
  EXPECT_EQ(ModeOf(Path("a/b")), 0700u);
  EXPECT_EQ(ModeOf(Path("a")), 0700u);
}

TEST_F(SecureFileTest, NarrowsAnExistingFolderThatOthersCanEnterAndSaysSo) {
  const std::string state = Path("state");
  ASSERT_EQ(::mkdir(state.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(state.c_str(), 0755), 0);
  Result<std::optional<ModeChange>> made = MakePrivateFolder(state);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(made->has_value());
  EXPECT_EQ((*made)->from, 0755u);
  EXPECT_EQ((*made)->to, 0700u);
  EXPECT_EQ((*made)->ToString(), state + " was accessible by group or others (mode 0755); narrowed to 0700");
  EXPECT_EQ(ModeOf(state), 0700u);
  // Already private: nothing to report the second time.
  made = MakePrivateFolder(state);
  ASSERT_TRUE(made.ok());
  EXPECT_FALSE(made->has_value());
}

TEST_F(SecureFileTest, LeavesAnExistingFolderAloneWhenAskedTo) {
  const std::string out = Path("keys");
  ASSERT_EQ(::mkdir(out.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(out.c_str(), 0755), 0);
  Result<std::optional<ModeChange>> made = MakePrivateFolder(out, ExistingFolder::kLeave);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_FALSE(made->has_value());
  EXPECT_EQ(ModeOf(out), 0755u);
}

TEST_F(SecureFileTest, RefusesToNarrowASharedFolder) {
  const std::string shared = Path("tmp");
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);  // like /tmp
  Result<std::optional<ModeChange>> made = MakePrivateFolder(shared);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(made.status().message(), shared + " is shared by design (mode 1777); give gpufed a folder of its own inside it");
  EXPECT_EQ(ModeOf(shared), 01777u);
}

TEST_F(SecureFileTest, RefusesAFileWhereAFolderShouldBe) {
  const std::string file = Write("state", "x", 0600);
  Result<std::optional<ModeChange>> made = MakePrivateFolder(file);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(), file + " is not a folder");
}

TEST_F(SecureFileTest, CreatesFilesOwnerOnlyWhateverTheUmask) {
  // The widest umask: only the mode given at creation (and the fchmod after it) count.
  const mode_t old = ::umask(0);
  Result<UniqueFd> fd = CreatePrivateFile(Path("ledger.log"), O_WRONLY | O_APPEND);
  ::umask(old);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_EQ(ModeOf(Path("ledger.log")), 0600u);
  ASSERT_TRUE(CreateSecretFile(Path("admin.token"), "t0ken\n").ok());
  EXPECT_EQ(ModeOf(Path("admin.token")), 0600u);
}

TEST_F(SecureFileTest, CreateNeverOpensWhatIsAlreadyThereNorFollowsALink) {
  const std::string target = Path("elsewhere");
  const std::string link = Path("signing.key");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);  // dangling
  Result<UniqueFd> fd = CreatePrivateFile(link, O_WRONLY);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), StatusCode::kAlreadyExists);
  Status s = CreateSecretFile(link, "secret");
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.ToString();
  EXPECT_FALSE(fs::exists(target));  // nothing was written through the link
  // No temporary file is left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path() != link;
  EXPECT_EQ(entries, 0);
}

TEST_F(SecureFileTest, ReplaceSwapsTheFileAndNotTheLinksTarget) {
  const std::string target = Write("target", "keep", 0600);
  const std::string link = Path("admin.token");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  ASSERT_TRUE(ReplaceSecretFile(link, "new\n").ok());
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(ModeOf(link), 0600u);
  Result<std::string> text = ReadSecretFile(link);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "new\n");
  Result<std::string> untouched = ReadSecretFile(target);
  ASSERT_TRUE(untouched.ok());
  EXPECT_EQ(*untouched, "keep");
}

TEST_F(SecureFileTest, ReadsAPrivateSecret) {
  for (mode_t mode : {0600, 0400, 0700}) {
    const std::string path = Write("key", "-----BEGIN PRIVATE KEY-----\n", mode);
    Result<std::string> text = ReadSecretFile(path);
    ASSERT_TRUE(text.ok()) << std::oct << mode << ": " << text.status().ToString();
    EXPECT_EQ(*text, "-----BEGIN PRIVATE KEY-----\n");
    fs::remove(path);
  }
}

TEST_F(SecureFileTest, RefusesASecretOthersCanReadOrWriteNamingTheFix) {
  const struct {
    mode_t mode;
    const char* problem;
  } cases[] = {
      {0644, "readable by group and others (mode 0644)"},
      {0640, "readable by group (mode 0640)"},
      {0604, "readable by others (mode 0604)"},
      {0620, "writable by group (mode 0620)"},
      {0666, "readable by group and others and writable by group and others (mode 0666)"},
  };
  for (const auto& c : cases) {
    const std::string path = Write("tokens", "0123456789abcdef admin\n", c.mode);
    Result<std::string> text = ReadSecretFile(path);
    ASSERT_FALSE(text.ok()) << c.problem;
    EXPECT_EQ(text.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(text.status().message(), path + " is " + c.problem +
                                           ": chmod 600 it (and replace the secret if others may have read it)");
    EXPECT_EQ(ModeOf(path), c.mode);  // a secret is refused, never silently narrowed
    fs::remove(path);
  }
}

TEST_F(SecureFileTest, RefusesASymlinkInPlaceOfASecret) {
  const std::string target = Write("real.key", "secret", 0600);
  const std::string link = Path("signing.key");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  Result<std::string> text = ReadSecretFile(link);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(text.status().message(),
            link + " is a symbolic link; gpufed does not follow links for this file: put the file itself there");
}

TEST_F(SecureFileTest, RefusesWhatIsNotARegularFileWithoutBlocking) {
  const std::string fifo = Path("admin.token");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // opening it for reading would wait for a writer
  Result<std::string> text = ReadSecretFile(fifo);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), fifo + " is not a regular file");
  ASSERT_TRUE(fs::create_directory(Path("folder")));
  EXPECT_EQ(ReadSecretFile(Path("folder")).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SecureFileTest, RefusesASecretOwnedByAnotherUser) {
  if (::geteuid() != 0) {
    // Only root can give a file away; a folder owned by root stands in for the rule.
    Result<std::optional<ModeChange>> made = MakePrivateFolder("/");
    ASSERT_FALSE(made.ok());
    EXPECT_NE(made.status().message().find("/ is owned by uid 0, not by this user"), std::string::npos)
        << made.status().message();
    return;
  }
  const std::string path = Write("signing.key", "secret", 0600);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  Result<std::string> text = ReadSecretFile(path);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            path + " is owned by uid 65534, not by this user (uid 0): chown it, or run gpufed as its owner");
  // The same for a state folder.
  const std::string folder = Path("state");
  ASSERT_TRUE(fs::create_directory(folder));
  ASSERT_EQ(::chown(folder.c_str(), 65534, 65534), 0);
  EXPECT_EQ(MakePrivateFolder(folder).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SecureFileTest, ReadsNoMoreThanTheCap) {
  const std::string path = Write("tokens", std::string(5000, 'x'), 0600);
  Result<std::string> text = ReadSecretFile(path, 4999);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(text.status().message(), path + " is larger than 4999 bytes");
  EXPECT_TRUE(ReadSecretFile(path, 5000).ok());
  EXPECT_EQ(ReadSecretFile(Path("missing")).status().code(), StatusCode::kNotFound);
}

TEST_F(SecureFileTest, NarrowsStateDataAnOlderGpufedLeftOpen) {
  const std::string db = Write("gpufed.db", "rows", 0644);
  std::optional<ModeChange> narrowed;
  Result<UniqueFd> fd = OpenOrCreatePrivateFile(db, O_RDWR, &narrowed);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ASSERT_TRUE(narrowed.has_value());
  EXPECT_EQ(narrowed->from, 0644u);
  EXPECT_EQ(ModeOf(db), 0600u);

  const std::string wal = Write("gpufed.db-wal", "frames", 0664);
  Result<std::optional<ModeChange>> by_name = NarrowFileByName(wal);
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
  ASSERT_TRUE(by_name->has_value());
  EXPECT_EQ((*by_name)->to, 0600u);
  EXPECT_EQ(ModeOf(wal), 0600u);
  EXPECT_EQ(NarrowFileByName(Path("gpufed.db-shm")).status().code(), StatusCode::kNotFound);

  const std::string link = Path("gpufed.db-journal");
  ASSERT_EQ(::symlink(db.c_str(), link.c_str()), 0);
  EXPECT_EQ(NarrowFileByName(link).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(OpenOrCreatePrivateFile(link, O_RDWR).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpufed
