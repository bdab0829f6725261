// The fast writers must produce exactly the bytes the journal always wrote: record
// hashes are over them. The references below are the previous implementations
// (nlohmann dump + escaping, string concatenation + SHA-256), kept here as the spec.
#include "controller/audit/canonical_json.h"

#include <cstring>
#include <ctime>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/audit/verify.h"
#include "controller/common/sha256.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

using Json = nlohmann::json;

// DumpPayload as it was before the fast writer.
std::string ReferenceDump(const Json& payload) {
  std::string out = payload.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string escaped;
  char buf[16];
  for (size_t i = 0; i < out.size();) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    if (c < 0x80) {
      escaped += out[i++];
      continue;
    }
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < len && i + k < out.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(out[i + k]) & 0x3F);
    i += static_cast<size_t>(len);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    }
    escaped += buf;
  }
  return escaped;
}

// EncodeRecordLine as it was before RecordLineEncoder.
std::string ReferenceLine(const RecordHeader& h, const std::string& payload_json, std::string* hash_hex) {
  std::string line = "{\"seq\":" + std::to_string(h.seq) + ",\"time\":\"" + FormatTimeMicros(h.time_micros) +
                     "\",\"kind\":\"" + h.kind + "\",\"controller\":\"" + h.controller + "\",\"prev\":\"" + h.prev + '"';
  if (payload_json.size() > 2) line += ',' + payload_json.substr(1, payload_json.size() - 2);
  line += '}';
  *hash_hex = Sha256Hex(line);
  line.pop_back();
  return line + ",\"hash\":\"" + *hash_hex + "\"}";
}

class RandomJson {
 public:
  explicit RandomJson(uint32_t seed) : rng_(seed) {}

  std::string Text() {
    // Pieces that exercise every escaping rule: plain ASCII, JSON specials, every
    // control character, DEL, valid UTF-8 of 2, 3 and 4 bytes, and invalid UTF-8
    // (stray continuation, truncated sequence, overlong, surrogate, 0xFF).
    static const char* kPieces[] = {"gpu", "a100", " ", "/", "\"", "\\", "\x7f", "caf\xc3\xa9", "\xe2\x82\xac",
                                    "\xf0\x9f\x9a\x80", "\xe4\xb8\xad\xe6\x96\x87", "\x80", "\xc3", "\xe2\x82",
                                    "\xc0\x80", "\xed\xa0\x80", "\xff", "\xf4\x90\x80\x80", "\xef\xbf\xbd"};
    std::string s;
    int n = Int(0, 6);
    for (int i = 0; i < n; ++i) {
      int pick = Int(0, 3);
      if (pick == 0) {
        s += static_cast<char>(Int(0, 0x1f));
      } else if (pick == 1) {
        s += static_cast<char>(Int(0x20, 0x7e));
      } else {
        s += kPieces[Int(0, static_cast<int>(std::size(kPieces)) - 1)];
      }
    }
    return s;
  }

  double Double() {
    switch (Int(0, 5)) {
      case 0: return Int(-1000, 1000) / 100.0;  // money-like and score-like
      case 1: {
        uint64_t bits = rng_();
        bits = (bits << 32) | rng_();
        double d;
        std::memcpy(&d, &bits, sizeof d);  // any double, NaN and infinities included
        return d;
      }
      case 2: return std::pow(10.0, Int(-30, 30)) * (Int(0, 1) ? 1 : -1);
      case 3: return Int(0, 1) ? 0.0 : -0.0;
      case 4: return static_cast<double>(Int(0, 1 << 30)) * 1024.0;
      default: return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
    }
  }

  Json Value(int depth) {
    int kind = Int(0, depth > 3 ? 5 : 7);
    switch (kind) {
      case 0: return nullptr;
      case 1: return Int(0, 1) == 1;
      case 2: return static_cast<int64_t>((static_cast<uint64_t>(rng_()) << 32) | rng_());
      case 3: return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(Int(0, 1000));
      case 4: return Double();
      case 5: return Text();
      case 6: {
        Json a = Json::array();
        for (int i = Int(0, 4); i > 0; --i) a.push_back(Value(depth + 1));
        return a;
      }
      default: return Object(depth + 1);
    }
  }

  Json Object(int depth) {
    Json o = Json::object();
    for (int i = Int(0, 6); i > 0; --i) o[Text()] = Value(depth);
    return o;
  }

 private:
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::mt19937 rng_;
};

TEST(CanonicalJson, ByteIdenticalToPreviousDumpForRandomDocuments) {
  RandomJson gen(20261122);
  for (int i = 0; i < 5000; ++i) {
    Json j = gen.Object(0);
    std::string expected = ReferenceDump(j);
    ASSERT_EQ(DumpPayload(j), expected) << "document " << i;
    // Independent of the reference's own escaping: nlohmann's ensure_ascii output is
    // the same text wherever DEL (raw in the journal, \u007f there) does not occur.
    if (expected.find('\x7f') == std::string::npos) {
      ASSERT_EQ(DumpPayload(j), j.dump(-1, ' ', true, Json::error_handler_t::replace)) << "document " << i;
    }
  }
}

TEST(CanonicalJson, EscapesEveryControlCharacterAndSpecial) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  Json j = {{"s", all}, {all, 1}};
  EXPECT_EQ(DumpPayload(j), ReferenceDump(j));
  EXPECT_NE(DumpPayload(j).find("\\u0000\\u0001"), std::string::npos);
  EXPECT_NE(DumpPayload(j).find("\\b\\t\\n\\u000b\\f\\r"), std::string::npos);
}

TEST(CanonicalJson, NumbersAsBefore) {
  for (double d : {0.66, 1.0, -0.0, 0.1 + 0.2, 1e21, 1e-7, 123456789012345678.0, 5e-324, 1.7976931348623157e308,
                   std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Json j = {{"x", d}};
    EXPECT_EQ(DumpPayload(j), ReferenceDump(j)) << d;
  }
  Json j = {{"i", std::numeric_limits<int64_t>::min()}, {"u", std::numeric_limits<uint64_t>::max()}, {"z", 0}};
  EXPECT_EQ(DumpPayload(j), "{\"i\":-9223372036854775808,\"u\":18446744073709551615,\"z\":0}");
}

TEST(RecordLineEncoder, ByteIdenticalToPreviousEncoding) {
  RandomJson gen(7);
  RecordLineEncoder encoder;
  std::string buffer, prev(kGenesisHash);
  std::vector<std::string> expected_lines;
  for (int i = 1; i <= 500; ++i) {
    // Several records share a time, as in a group commit; then the time moves on.
    RecordHeader h{static_cast<uint64_t>(i), 1'795'000'000'123'456 + (i / 7) * 1'000'003, "decision", "ctl-1", prev};
    std::string payload = i % 50 == 0 ? "{}" : DumpPayload(gen.Object(0));
    std::string expected_hash;
    expected_lines.push_back(ReferenceLine(h, payload, &expected_hash));
    std::string_view hash = encoder.Append(h.seq, h.time_micros, h.kind, h.controller, h.prev, payload, &buffer);
    ASSERT_EQ(hash, expected_hash);
    buffer += '\n';
    std::string single_hash;
    ASSERT_EQ(EncodeRecordLine(h, payload, &single_hash), expected_lines.back());
    ASSERT_EQ(single_hash, expected_hash);
    prev = expected_hash;
  }
  std::string expected;
  for (const std::string& l : expected_lines) expected += l + '\n';
  EXPECT_EQ(buffer, expected);
}

TEST(RecordLineEncoder, JournalOfRandomRecordsVerifiesAndReadsBack) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  RandomJson gen(99);
  std::vector<AuditRecord> records;
  for (int i = 0; i < 300; ++i) records.push_back({RecordKind::kDecision, gen.Object(0)});
  for (AuditRecord& r : records) {
    for (const char* key : {"seq", "time", "kind", "controller", "prev", "hash"}) r.payload.erase(key);
  }
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = dir.str();
    auto j = AuditJournal::Open(o).value();
    ASSERT_TRUE(j->AppendBatch(std::span(records).subspan(0, 100)).ok());
    for (size_t i = 100; i < records.size(); ++i) ASSERT_TRUE(j->Append(records[i]).ok());
  }
  auto report = VerifyJournalDir(*env, dir.str(), {nullptr, false});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->error;
  EXPECT_EQ(report->records, records.size());
  JournalReader reader(env.get(), dir.str());
  std::vector<JournalEntry> entries;
  ASSERT_EQ(reader.Next(1000, 1000, &entries).value(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    std::string payload = ReferenceDump(records[i].payload);
    std::string_view line = entries[i].line;
    // The payload members sit between the header's prev and the trailing hash.
    size_t start = line.find("\"prev\":\"") + 8 + 64 + 1;
    std::string members = payload.size() > 2 ? "," + payload.substr(1, payload.size() - 2) : "";
    ASSERT_EQ(line.substr(start, line.size() - 75 - start), members) << "record " << i;
  }
}

TEST(ParseTimeMicros, FastPathAgreesWithTimegm) {
  std::mt19937_64 rng(5);
  // Round trips over years 0000-9999, and the general parser for the same instants.
  for (int i = 0; i < 20000; ++i) {
    int64_t micros = static_cast<int64_t>(rng() % 253402300800000000ULL) - 62167219200000000LL;
    std::string text = FormatTimeMicros(micros);
    ASSERT_EQ(ParseTimeMicros(text), micros) << text;
    std::string no_fraction = text.substr(0, 19) + "Z";  // not the journal's shape: slow path
    ASSERT_EQ(ParseTimeMicros(no_fraction), micros - (micros % 1000000 + 1000000) % 1000000) << no_fraction;
  }
  // Fields past their range normalise like timegm.
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 1;
  tm.tm_mday = 30;
  tm.tm_hour = 24;
  tm.tm_min = 61;
  tm.tm_sec = 60;
  EXPECT_EQ(ParseTimeMicros("2026-02-30T24:61:60.000001Z"), static_cast<int64_t>(timegm(&tm)) * 1000000 + 1);
  EXPECT_EQ(ParseTimeMicros("2026-13-01T00:00:00.000000Z"), ParseTimeMicros("2026-13-01T00:00:00Z"));
  EXPECT_FALSE(ParseTimeMicros("2026-11-22T10:00:00.00000xZ").has_value());
}

}  // namespace
}  // namespace gpufed::audit
