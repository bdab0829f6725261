#include "controller/audit/signing_key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "controller/audit/journal.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

unsigned ModeOf(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

TEST(SigningKey, KeygenAndTheControllerMakeTheSamePairUnderTheSameNames) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  const std::string ahead = dir.str() + "/keys";
  Result<Signer> made = CreateSigningKey(*env, ahead);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(ModeOf(ahead + "/signing.key"), 0600u);
  EXPECT_TRUE(env->FileExists(ahead + "/signing.pub"));
  // A pair made ahead is the one a controller started on that folder signs with.
  Result<Signer> loaded = LoadOrCreateSigningKey(*env, ahead);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->key_id(), made->key_id());
}

TEST(SigningKey, AKeyIsNeverReplaced) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  ASSERT_TRUE(CreateSigningKey(*env, dir.str()).ok());
  Result<Signer> again = CreateSigningKey(*env, dir.str());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
}

TEST(SigningKey, ALostPublicKeyIsDerivedAgain) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  Result<Signer> first = LoadOrCreateSigningKey(*env, dir.str());
  ASSERT_TRUE(first.ok());
  std::filesystem::remove(dir.str() + "/signing.pub");
  Result<Signer> second = LoadOrCreateSigningKey(*env, dir.str());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->key_id(), first->key_id());
  EXPECT_TRUE(env->FileExists(dir.str() + "/signing.pub"));
}

TEST(SigningKey, APublicKeyWithoutItsPrivateKeyIsNotReplacedByANewPair) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  ASSERT_TRUE(LoadOrCreateSigningKey(*env, dir.str()).ok());
  Result<std::string> pub = env->ReadFile(dir.str() + "/signing.pub");
  ASSERT_TRUE(pub.ok());
  std::filesystem::remove(dir.str() + "/signing.key");
  Result<Signer> again = LoadOrCreateSigningKey(*env, dir.str());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("exists without"), std::string::npos) << again.status().message();
  EXPECT_EQ(env->ReadFile(dir.str() + "/signing.pub").value(), *pub);  // verifiers' copy still matches
  EXPECT_FALSE(env->FileExists(dir.str() + "/signing.key"));
}

// Both halves deleted beside a journal: a new pair would silently sign over whatever the
// folder holds, so the start is refused and nothing is written.
TEST(SigningKey, ADeletedPairBesideAJournalIsNotReplaced) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  Result<Signer> signer = LoadOrCreateSigningKey(*env, dir.str());
  ASSERT_TRUE(signer.ok());
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = dir.str();
    o.signer = &*signer;
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE((*j)->Append({RecordKind::kDecision, {{"n", 1}}}).ok());
    ASSERT_TRUE((*j)->Close().ok());
  }
  std::filesystem::remove(dir.str() + "/signing.key");
  std::filesystem::remove(dir.str() + "/signing.pub");
  Result<Signer> again = LoadOrCreateSigningKey(*env, dir.str());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.status().message().find("restore the key"), std::string::npos) << again.status().message();
  EXPECT_FALSE(env->FileExists(dir.str() + "/signing.key"));
  EXPECT_FALSE(env->FileExists(dir.str() + "/signing.pub"));
}

// An operator's key kept outside the state folder: used as it is, its public key written
// beside the journal, never a second pair; a signing.pub of another key stops the start.
TEST(SigningKey, AKeyFileOutsideTheStateFolderIsUsedAndNeverCreated) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  const std::string keys = dir.str() + "/etc";
  Result<Signer> made = CreateSigningKey(*env, keys);
  ASSERT_TRUE(made.ok());
  const std::string audit = dir.str() + "/state/audit";
  Result<Signer> loaded = LoadSigningKeyFile(*env, keys + "/signing.key", audit);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->key_id(), made->key_id());
  EXPECT_FALSE(env->FileExists(audit + "/signing.key"));
  EXPECT_EQ(env->ReadFile(audit + "/signing.pub").value(), made->PublicKeyPem());
  EXPECT_FALSE(LoadSigningKeyFile(*env, keys + "/missing.key", audit).ok());
  // Group-readable: refused.
  std::filesystem::permissions(keys + "/signing.key", std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  Result<Signer> open = LoadSigningKeyFile(*env, keys + "/signing.key", audit);
  EXPECT_EQ(open.status().code(), StatusCode::kFailedPrecondition) << open.status().ToString();
  // Another key than the journal's public key says.
  Result<Signer> other = CreateSigningKey(*env, dir.str() + "/other");
  ASSERT_TRUE(other.ok());
  Result<Signer> wrong = LoadSigningKeyFile(*env, dir.str() + "/other/signing.key", audit);
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wrong.status().message().find(made->key_id()), std::string::npos) << wrong.status().message();
}

}  // namespace
}  // namespace gpufed::audit
