// Issue 42, secrets at rest: a controller's state folder (every spec's run.env in the
// store and the audit snapshots, the signing key, the connectors' ledgers) is private to
// the user gpufed runs as, from the first byte written, and a key others could read stops
// the controller.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "controller/audit/signing.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

namespace fs = std::filesystem;

// A workload whose spec carries a secret in run.env, as real ones do.
std::string SecretWorkload() {
  return WorkloadYaml("trainer", "alpha", 2, "1h", "  run:\n    image: pytorch:2\n    env: {HF_TOKEN: hf_not_for_others}\n");
}

std::string FreshState(const std::string& name) {
  std::string dir = FreshDir("state_files_" + name);
  std::ofstream(dir + "/repo/work.yaml") << SecretWorkload();
  return dir;
}

// Files and folders the audit module creates through its Env (audit/env.h), whose
// creation takes no mode: 0640 files and 0755 folders until controller/audit/env.cc
// creates them owner-only. They sit inside the private audit/ folder.
bool CreatedThroughAuditEnv(const std::string& relative) {
  return relative == "audit/signing.pub" || relative.rfind("audit/journal/", 0) == 0 ||
         relative.rfind("audit/snapshots", 0) == 0 || relative.rfind("audit/cursors", 0) == 0;
}

struct Entry {
  mode_t type = 0;
  mode_t mode = 0;
  uid_t owner = 0;
};

// Every entry under `root` (root itself as "."), by lstat: links are not followed.
std::map<std::string, Entry> Walk(const std::string& root) {
  std::map<std::string, Entry> out;
  auto add = [&](const fs::path& p) {
    struct stat st;
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    out[fs::relative(p, root).string()] = {static_cast<mode_t>(st.st_mode & S_IFMT),
                                           static_cast<mode_t>(st.st_mode & 07777), st.st_uid};
  };
  add(root);
  for (const auto& e : fs::recursive_directory_iterator(root)) add(e.path());
  return out;
}

// What the issue asks of every entry: owned by us, no symlink, folders 0700, files 0600.
void ExpectPrivate(const std::map<std::string, Entry>& entries) {
  for (const auto& [path, e] : entries) {
    SCOPED_TRACE(path);
    EXPECT_EQ(e.owner, ::geteuid());
    EXPECT_NE(e.type, static_cast<mode_t>(S_IFLNK));
    if (CreatedThroughAuditEnv(path)) {
      EXPECT_EQ(e.mode & 022, 0u) << std::oct << e.mode;  // nobody else may write them
      continue;
    }
    if (e.type == S_IFDIR) {
      EXPECT_EQ(e.mode, 0700u) << std::oct << e.mode;
    } else {
      EXPECT_EQ(e.type, static_cast<mode_t>(S_IFREG));
      EXPECT_EQ(e.mode, 0600u) << std::oct << e.mode;
    }
  }
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(StateFiles, ANewStateFolderIsPrivateFromTheStart) {
  const std::string dir = FreshState("new");
  Harness h;
  Status opened = h.Open(dir);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_TRUE(h.RunUntilIdle().ok());
  EXPECT_EQ(h.Get("trainer").state, store::WorkloadState::kSucceeded);

  // Stat while the store is open: SQLite removes -wal and -shm when it closes.
  const std::map<std::string, Entry> entries = Walk(h.state_dir());
  for (const char* expected : {".", "gpufed.db", "gpufed.db-wal", "gpufed.db-shm", "audit", "audit/signing.key",
                               "audit/journal", "connectors", "connectors/onprem", "connectors/onprem/ledger.log"}) {
    EXPECT_EQ(entries.count(expected), 1u) << expected << " was not created";
  }
  ExpectPrivate(entries);
}

TEST(StateFiles, AStateFolderAnOlderGpufedLeftOpenIsNarrowed) {
  const std::string dir = FreshState("older");
  const std::string state = dir + "/state";
  {
    Harness first;
    Status opened = first.Open(dir);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    ASSERT_TRUE(first.RunUntilIdle().ok());
  }
  // What gpufed did before issue 42 with a 022 umask: folders 0755, store and ledgers
  // 0644 (the key was already created under umask 077).
  for (const auto& [path, e] : Walk(state)) {
    if (path == "audit/signing.key") continue;
    fs::permissions(fs::path(state) / path, e.type == S_IFDIR ? fs::perms(0755) : fs::perms(0644));
  }
  ASSERT_EQ(ModeOf(state + "/gpufed.db"), 0644u);

  Harness again;
  Status opened = again.Open(dir);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_TRUE(again.RunUntilIdle().ok());
  for (const char* folder : {".", "audit", "audit/journal", "connectors", "connectors/onprem"}) {
    EXPECT_EQ(ModeOf(state + "/" + folder), 0700u) << folder;
  }
  for (const char* file : {"gpufed.db", "gpufed.db-wal", "gpufed.db-shm", "connectors/onprem/ledger.log"}) {
    EXPECT_EQ(ModeOf(state + "/" + file), 0600u) << file;
  }
}

TEST(StateFiles, ASigningKeyOthersCanReadStopsTheController) {
  const std::string dir = FreshState("loose_key");
  {
    Harness first;
    ASSERT_TRUE(first.Open(dir).ok());
  }
  const std::string key = dir + "/state/audit/signing.key";
  fs::permissions(key, fs::perms(0644));
  Harness again;
  Status opened = again.Open(dir);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(opened.message(), "audit signing key in " + dir + "/state/audit: " + key +
                                  " is readable by group and others (mode 0644): chmod 600 it (and replace the "
                                  "secret if others may have read it)");
  EXPECT_EQ(ModeOf(key), 0644u);  // refused, not silently narrowed
}

TEST(StateFiles, ASymlinkInPlaceOfTheSigningKeyStopsTheController) {
  const std::string dir = FreshState("linked_key");
  {
    Harness first;
    ASSERT_TRUE(first.Open(dir).ok());
  }
  // The real key, private, moved elsewhere; a link to it where the controller looks.
  const std::string key = dir + "/state/audit/signing.key";
  const std::string elsewhere = dir + "/elsewhere.key";
  fs::rename(key, elsewhere);
  fs::create_symlink(elsewhere, key);
  ASSERT_TRUE(audit::Signer::FromPrivateKeyFile(elsewhere).ok());

  Harness again;
  Status opened = again.Open(dir);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.message().find(key + " is a symbolic link; gpufed does not follow links for this file"),
            std::string::npos)
      << opened.message();
}

TEST(StateFiles, AStoreOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) {
    // Only root can give a file away: the refusal is covered by common's unit tests.
    const std::string dir = FreshState("owner_unprivileged");
    Harness h;
    ASSERT_TRUE(h.Open(dir).ok());
    EXPECT_EQ(ModeOf(dir + "/state/gpufed.db"), 0600u);
    return;
  }
  const std::string dir = FreshState("owner");
  {
    Harness first;
    ASSERT_TRUE(first.Open(dir).ok());
  }
  const std::string db = dir + "/state/gpufed.db";
  ASSERT_EQ(::chown(db.c_str(), 65534, 65534), 0);
  Harness again;
  Status opened = again.Open(dir);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.message(), db + " is owned by uid 65534, not by this user (uid 0): chown it, or run gpufed as its owner");
}

}  // namespace
}  // namespace gpufed::testing
