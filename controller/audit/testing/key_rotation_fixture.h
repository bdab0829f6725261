#pragma once
// A fixture for key rotation tests (key_rotation_test.cc, key_rotation_window_test.cc):
// an audit folder laid out as a controller's (`signing.key`, `signing.pub`, `journal/`)
// with its key `old_`, a second key `new_`, controller runs that close their journal, and
// the forger's tools: appending a commit that some key signs over the whole tree, and
// re-chaining lines after a change.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/key_in_force.h"
#include "controller/audit/key_rotation.h"
#include "controller/audit/record.h"
#include "controller/audit/signing_key.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/audit/testing/rechain.h"
#include "controller/audit/verify.h"
#include "controller/common/secure_file.h"
#include "controller/common/sha256.h"
#include "controller/common/time_text.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit::testing {

inline constexpr const char* kTestOrigin = "gpufed/gpufed";  // a controller's (AuditTrail's id, "gpufed")

inline AuditRecord DecisionRec(int i) {
  return {RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}, {"n", i}}};
}

class KeyRotationFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(MakePrivateFolder(dir_.str()).ok());
    ASSERT_TRUE(CreateSecretFile(Path(kSigningKeyFile), old_.PrivateKeyPem()).ok());
    ASSERT_TRUE(WriteFileAtomic(env_, Path(kSigningPubFile), old_.PublicKeyPem()).ok());
  }

  std::string Path(const std::string& name) const { return dir_.str() + "/" + name; }

  JournalOptions Options(const Signer* signer, const Signer* rotation_from = nullptr) {
    JournalOptions o;
    o.env = &env_;
    o.dir = dir_.str();
    o.controller_id = "gpufed";
    o.signer = signer;
    o.rotation_from = rotation_from;
    o.segment_bytes = segment_bytes_;
    return o;
  }

  // A controller's run with `key`: start, decisions from..to-1 (a commit each), stop.
  void Run(const Signer& key, int from, int to) {
    auto j = AuditJournal::Open(Options(&key));
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    ASSERT_TRUE((*j)->Append({RecordKind::kControllerStart, {{"version", "t"}}}).ok());
    for (int i = from; i < to; ++i) {
      env_.Advance(1000);  // each commit has its own time, as on a real clock
      ASSERT_TRUE((*j)->Append(DecisionRec(i)).ok());
    }
    env_.Advance(1000);
    ASSERT_TRUE((*j)->Append({RecordKind::kControllerStop, {{"reason", "test"}}}).ok());
    ASSERT_TRUE((*j)->Close().ok());
    env_.Advance(1000);
  }

  // Step 1 of a rotation only, as a crash after it leaves the journal.
  void AppendRotationRecord() {
    auto j = AuditJournal::Open(Options(&old_));
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    ASSERT_TRUE((*j)->Append(KeyRotatedRecord(old_, new_, kTestOrigin, "alice", "test")).ok());
    ASSERT_TRUE((*j)->Close().ok());
    env_.Advance(1000);
  }

  KeyRotationOptions Rotation() {
    KeyRotationOptions o;
    o.env = &env_;
    o.audit_dir = dir_.str();
    o.current = &old_;
    o.next = &new_;
    o.install_key = true;
    o.operator_name = "alice";
    o.reason = "yearly";
    return o;
  }

  // An open as a start does it; the journal is released without a write.
  Status OpenWith(const Signer& key) { return AuditJournal::Open(Options(&key)).status(); }

  VerifyReport Verify(const std::vector<const Signer*>& keys) {
    std::vector<SignatureVerifier> publics;
    publics.reserve(keys.size());
    for (const Signer* key : keys) publics.push_back(SignatureVerifier::FromPublicKeyPem(key->PublicKeyPem()).value());
    VerifyOptions options;
    if (!publics.empty()) options.key = &publics[0];
    for (size_t i = 1; i < publics.size(); ++i) options.more_keys.push_back(&publics[i]);
    Result<VerifyReport> report = VerifyJournalDir(env_, dir_.str(), options);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : VerifyReport{};
  }

  std::string LastSegment() { return ListSegments(env_, dir_.str() + "/journal")->back().second; }

  // The last segment's lines, each with its newline.
  std::vector<std::string> Lines() {
    std::vector<std::string> lines;
    std::string text = *env_.ReadFile(LastSegment());
    for (size_t pos = 0; pos < text.size();) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size() - 1;
      lines.push_back(text.substr(pos, nl - pos + 1));
      pos = nl + 1;
    }
    return lines;
  }
  void WriteLines(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text += line;
    std::ofstream(LastSegment(), std::ios::trunc | std::ios::binary) << text;
  }

  // The chain of a forger who changed or removed records (rechain.h).
  static std::vector<std::string> Rechain(std::vector<std::string> lines, size_t from) {
    return RechainLines(std::move(lines), from);
  }

  // Appends a commit of `records` and a checkpoint that `signer` signs over the whole
  // tree, chained to the last line: what one who holds `signer` can write, whether or not
  // it is the key in force. The journal must be one segment.
  void AppendSignedCommit(const std::vector<AuditRecord>& records, const Signer& signer) {
    std::vector<std::string> lines = Lines();
    MerkleHasher hasher;
    CompactRange range;
    std::string prev(kGenesisHash);
    uint64_t seq = 0;
    for (const std::string& line : lines) {
      std::string_view text(line.data(), line.size() - 1);
      range.Append(hasher.Leaf(text), hasher);
      Result<ParsedLine> parsed = ParseRecordLine(text);
      ASSERT_TRUE(parsed.ok());
      prev = std::string(parsed->hash);
      seq = parsed->header.seq;
    }
    env_.Advance(1000);
    auto add = [&](const std::string& kind, const nlohmann::json& payload) {
      RecordHeader h{++seq, env_.NowMicros(), kind, "gpufed", prev};
      std::string line = EncodeRecordLine(h, DumpPayload(payload), &prev);
      range.Append(hasher.Leaf(line), hasher);
      lines.push_back(line + "\n");
    };
    for (const AuditRecord& record : records) add(RecordKindName(record.kind), record.payload);
    NoteSigner note_signer = NoteSigner::Create(kTestOrigin, &signer).value();
    add("checkpoint", MerkleCheckpointPayload(note_signer, signer.key_id(), range, hasher));
    WriteLines(lines);
  }

  // Path -> SHA-256 of every file under the audit folder (but the lock file).
  std::map<std::string, std::string> Checksums() {
    std::map<std::string, std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.str())) {
      if (!e.is_regular_file() || e.path().filename() == "LOCK") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      out[e.path().string()] = Sha256Hex(data);
    }
    return out;
  }

  static mode_t Mode(const std::string& path) {
    struct stat st = {};
    return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 0777) : 0;
  }

  FaultEnv env_;
  testutil::TempDir dir_;
  Signer old_ = Signer::Generate().value();
  Signer new_ = Signer::Generate().value();
  uint64_t segment_bytes_ = uint64_t{64} << 20;
};

}  // namespace gpufed::audit::testing
