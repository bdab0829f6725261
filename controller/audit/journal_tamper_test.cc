// The journal is evidence: opening a damaged or forged journal changes no byte of any
// file. Only a torn commit (an incomplete last line and the records of its commit) is
// repaired, and its bytes are kept in quarantine. Each damage is applied to a closed,
// signed journal, then a start is attempted. The forgeries re-chain every record after
// the change, as an attacker with the files (but not the key) would.
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/record.h"
#include "controller/audit/signing.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/audit/testing/rechain.h"
#include "controller/common/sha256.h"
#include "controller/common/time_text.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

namespace fs = std::filesystem;

AuditRecord Rec(int i) { return {RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}, {"n", i}}}; }

// Path -> SHA-256 of every file under `dir` (except the lock file, which only exists).
std::map<std::string, std::string> Checksums(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "LOCK") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out[e.path().string()] = Sha256Hex(data);
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size() - 1;
    lines.push_back(text.substr(pos, nl - pos + 1));
    pos = nl + 1;
  }
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l;
  return out;
}

// The chain of a forger who changed a record.
std::vector<std::string> Rechain(std::vector<std::string> lines, size_t from) {
  return testing::RechainLines(std::move(lines), from);
}

size_t LineWith(const std::vector<std::string>& lines, const std::string& text) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(text) != std::string::npos) return i;
  }
  return lines.size();
}

bool IsCheckpoint(const std::string& line) { return line.find("\"kind\":\"checkpoint\"") != std::string::npos; }

struct Damage {
  const char* name;
  bool refused;  // false: a torn tail, repaired
  std::function<std::string(const std::string&)> apply;
};

class JournalTamperTest : public ::testing::TestWithParam<int> {
 protected:
  JournalOptions Options() {
    JournalOptions o;
    o.env = &env_;
    o.dir = dir_.str();
    o.controller_id = "test-ctl";
    o.signer = &signer_;
    return o;
  }
  testing::FaultEnv env_;
  testutil::TempDir dir_;
  Signer signer_ = Signer::Generate().value();
};

const std::vector<Damage>& Damages() {
  static const std::vector<Damage> damages = {
      {"flip a byte in the middle", true,
       [](const std::string& t) {
         std::string d = t;
         d[d.find("\"w4\"") + 1] = 'X';
         return d;
       }},
      {"flip a byte in the last complete record", true,
       [](const std::string& t) {
         std::string d = t;
         d[d.size() - 10] = d[d.size() - 10] == 'a' ? 'b' : 'a';
         return d;
       }},
      {"delete a record in the middle", true,
       [](const std::string& t) {
         auto lines = Lines(t);
         lines.erase(lines.begin() + 3);
         return Join(lines);
       }},
      {"swap two records", true,
       [](const std::string& t) {
         auto lines = Lines(t);
         std::swap(lines[2], lines[3]);
         return Join(lines);
       }},
      {"extra garbage line at the end", true, [](const std::string& t) { return t + "not a record\n"; }},
      {"truncate in the middle of the last record", false,
       [](const std::string& t) {
         auto lines = Lines(t);
         return t.substr(0, t.size() - lines.back().size() / 2);
       }},
      {"remove the closing records, change a decision, re-chain", true,
       [](const std::string& t) {
         auto lines = Lines(t);
         lines.resize(lines.size() - 2);  // controller-stop and the final checkpoint
         size_t at = LineWith(lines, "\"w4\"");
         lines[at].replace(lines[at].find("\"w4\""), 4, "\"w9\"");
         return Join(Rechain(lines, at));
       }},
      {"change a decision, drop every checkpoint after it, re-chain", true,
       [](const std::string& t) {
         auto lines = Lines(t);
         size_t at = LineWith(lines, "\"w4\"");
         lines[at].replace(lines[at].find("\"w4\""), 4, "\"w9\"");
         std::vector<std::string> kept(lines.begin(), lines.begin() + static_cast<long>(at) + 1);
         for (size_t i = at + 1; i < lines.size(); ++i) {
           if (!IsCheckpoint(lines[i])) kept.push_back(lines[i]);
         }
         return Join(Rechain(kept, at));
       }},
      {"a chained record appended after a clean close", true,
       [](const std::string& t) {
         auto lines = Lines(t);
         lines.push_back(lines[LineWith(lines, "\"w2\"")]);
         return Join(Rechain(lines, lines.size() - 1));
       }},
      {"a checkpoint whose signature fails, re-chained", true,
       [](const std::string& t) {
         auto lines = Lines(t);
         size_t at = LineWith(lines, "\"w5\"") + 1;  // its checkpoint
         size_t sig = lines[at].rfind("\\n\"") - 10;  // inside the note's signature line
         lines[at][sig] = lines[at][sig] == 'A' ? 'B' : 'A';
         return Join(Rechain(lines, at));
       }},
  };
  return damages;
}

TEST_P(JournalTamperTest, AStartNeverChangesAByteExceptToQuarantineATornTail) {
  const Damage& damage = Damages()[static_cast<size_t>(GetParam())];
  SCOPED_TRACE(damage.name);
  {
    auto j = AuditJournal::Open(Options());
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE((*j)->Append({RecordKind::kControllerStart, {{"version", "t"}}}).ok());
    for (int i = 0; i < 8; ++i) {
      env_.Advance(1000);  // each commit has its own time, as on a real clock
      ASSERT_TRUE((*j)->Append(Rec(i)).ok());
    }
    env_.Advance(1000);
    ASSERT_TRUE((*j)->Append({RecordKind::kControllerStop, {{"reason", "test"}}}).ok());
    ASSERT_TRUE((*j)->Close().ok());
  }
  auto segs = ListSegments(env_, dir_.str() + "/journal");
  const std::string seg = segs->back().second;
  std::string text = *env_.ReadFile(seg);
  std::string damaged = damage.apply(text);
  std::ofstream(seg, std::ios::trunc | std::ios::binary) << damaged;
  const auto before = Checksums(dir_.str());

  RecoveryInfo info;
  auto j = AuditJournal::Open(Options(), &info);
  if (damage.refused) {
    EXPECT_TRUE(j.status().code() == StatusCode::kDataLoss || j.status().code() == StatusCode::kFailedPrecondition)
        << j.status().ToString();
    EXPECT_NE(j.status().message().find("nothing was changed"), std::string::npos) << j.status().ToString();
    EXPECT_EQ(Checksums(dir_.str()), before) << "a refused start changed the journal";
    return;
  }
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_GT(info.truncated_bytes, 0u);
  ASSERT_FALSE(info.quarantined.empty());
  // The torn bytes are kept, byte for byte, and the segment is the intact prefix.
  EXPECT_EQ(*env_.ReadFile(info.quarantined), damaged.substr(damaged.size() - info.truncated_bytes));
  EXPECT_EQ(*env_.ReadFile(seg), damaged.substr(0, damaged.size() - info.truncated_bytes));
  j->reset();  // a destructor writes nothing
  EXPECT_EQ(*env_.ReadFile(seg), damaged.substr(0, damaged.size() - info.truncated_bytes));
}

INSTANTIATE_TEST_SUITE_P(EachDamage, JournalTamperTest, ::testing::Range(0, 10));

// A journal signed with one key does not open with another: a key change is an explicit,
// journalled rotation, never a silent new key.
TEST_F(JournalTamperTest, AnotherKeyIsRefusedWithEveryByteUnchanged) {
  {
    auto j = AuditJournal::Open(Options());
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE((*j)->Append(Rec(1)).ok());
    ASSERT_TRUE((*j)->Close().ok());
  }
  const auto before = Checksums(dir_.str());
  Signer other = Signer::Generate().value();
  JournalOptions o = Options();
  o.signer = &other;
  auto j = AuditJournal::Open(o);
  EXPECT_EQ(j.status().code(), StatusCode::kFailedPrecondition) << j.status().ToString();
  EXPECT_NE(j.status().message().find(signer_.key_id()), std::string::npos);
  EXPECT_EQ(Checksums(dir_.str()), before);
}

// Records of one commit without its checkpoint (a crash inside the commit's write) were
// never acknowledged: they are cut off with the torn line and kept in quarantine.
TEST_F(JournalTamperTest, ATornCommitIsCutBackToItsLastCheckpoint) {
  {
    auto j = AuditJournal::Open(Options());
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE((*j)->Append(Rec(1)).ok());
    env_.Advance(1000);
    std::vector<AuditRecord> batch = {Rec(2), Rec(3), Rec(4)};
    ASSERT_TRUE((*j)->AppendBatch(batch).ok());
  }
  auto segs = ListSegments(env_, dir_.str() + "/journal");
  const std::string seg = segs->back().second;
  std::string text = *env_.ReadFile(seg);
  auto lines = Lines(text);
  ASSERT_EQ(lines.size(), 6u);  // 1, checkpoint, 3 records, checkpoint
  const std::string torn = text.substr(0, text.size() - lines.back().size() / 2);
  std::ofstream(seg, std::ios::trunc | std::ios::binary) << torn;
  RecoveryInfo info;
  auto j = AuditJournal::Open(Options(), &info);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(info.last_seq, 2u);
  EXPECT_EQ(info.first_dropped_seq, 3u);
  EXPECT_EQ(info.last_dropped_seq, 5u);
  EXPECT_EQ(info.dropped_lines, 4u);
  EXPECT_EQ(*env_.ReadFile(seg), lines[0] + lines[1]);
  EXPECT_EQ(*env_.ReadFile(info.quarantined), torn.substr(lines[0].size() + lines[1].size()));
  // The journal goes on from the checkpoint, and its tree with it.
  ASSERT_TRUE((*j)->Append(Rec(5)).ok());
  EXPECT_EQ((*j)->last_seq(), 4u);
}

}  // namespace
}  // namespace gpufed::audit
