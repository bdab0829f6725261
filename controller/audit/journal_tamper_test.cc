// The journal is evidence: opening a damaged journal changes no byte of any file. Only a
// torn tail (an incomplete last line) is repaired, and its bytes are kept in quarantine.
// Each damage kind is applied to a closed, signed journal, then a start is attempted.
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/signing.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/common/sha256.h"
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
  };
  return damages;
}

TEST_P(JournalTamperTest, AStartNeverChangesAByteExceptToQuarantineATornTail) {
  const Damage& damage = Damages()[static_cast<size_t>(GetParam())];
  SCOPED_TRACE(damage.name);
  {
    auto j = AuditJournal::Open(Options());
    ASSERT_TRUE(j.ok());
    for (int i = 0; i < 8; ++i) ASSERT_TRUE((*j)->Append(Rec(i)).ok());
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
    EXPECT_EQ(j.status().code(), StatusCode::kDataLoss) << j.status().ToString();
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

INSTANTIATE_TEST_SUITE_P(EachDamage, JournalTamperTest, ::testing::Range(0, 6));

}  // namespace
}  // namespace gpufed::audit
