#pragma once
// The JournalStorage / JournalRecordSource contract (journal_storage.h) as a typed test
// suite that every storage must pass. A storage's test instantiates it with a Backend:
//
//   struct MyBackend {
//     Env& env();                                        // the journal's clock
//     std::unique_ptr<JournalStorage> NewStorage();      // a writer over the backend's one journal
//     std::unique_ptr<JournalRecordSource> NewSource();  // a reader of the same journal
//     std::string SkipReason();  // optional: non-empty skips the test (a server not installed)
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, JournalStorageContract, ::testing::Types<MyBackend>);
//
// Each test constructs a fresh Backend, whose journal starts empty.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/journal_storage.h"

namespace gpufed::audit::testing {

template <typename Backend>
class JournalStorageContract : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (requires(Backend& b) { b.SkipReason(); }) {
      if (const std::string reason = backend_.SkipReason(); !reason.empty()) GTEST_SKIP() << reason;
    }
  }

  static AuditRecord Record(int i) {
    return {RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}, {"n", i}}};
  }

  std::unique_ptr<AuditJournal> OpenJournal(const Signer* signer = nullptr) {
    JournalOptions o;
    o.env = &backend_.env();
    o.controller_id = "contract-ctl";
    o.signer = signer;
    auto journal = AuditJournal::OpenWith(o, backend_.NewStorage());
    EXPECT_TRUE(journal.ok()) << journal.status().ToString();
    return journal.ok() ? std::move(*journal) : nullptr;
  }

  // Every entry from `from` to `limit` through a new source, in calls of `chunk`.
  std::vector<JournalEntry> ReadAll(uint64_t from, uint64_t limit = std::numeric_limits<uint64_t>::max(),
                                    size_t chunk = 3) {
    std::unique_ptr<JournalRecordSource> source = backend_.NewSource();
    EXPECT_TRUE(source->Seek(from).ok());
    std::vector<JournalEntry> entries;
    for (;;) {
      Result<size_t> n = source->Next(chunk, limit, &entries);
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) return entries;
    }
  }

  Backend backend_;
};

TYPED_TEST_SUITE_P(JournalStorageContract);

TYPED_TEST_P(JournalStorageContract, AnEmptyJournalRecoversToTheGenesisHead) {
  std::unique_ptr<JournalStorage> storage = this->backend_.NewStorage();
  MerkleHasher merkle;
  RecoveryInfo info;
  Result<JournalHead> head = storage->Recover(RecoveryKeys{}, merkle, &info);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->last_seq, 0u);
  EXPECT_EQ(head->last_hash, kGenesisHash);
  EXPECT_EQ(head->since_checkpoint, 0u);
  EXPECT_EQ(head->last_checkpoint.seq, 0u);
  EXPECT_EQ(head->tree.size(), 0u);
  EXPECT_EQ(info.last_seq, 0u);
}

TYPED_TEST_P(JournalStorageContract, OneWriterAtATime) {
  MerkleHasher merkle;
  RecoveryInfo info;
  std::unique_ptr<JournalStorage> first = this->backend_.NewStorage();
  ASSERT_TRUE(first->Recover(RecoveryKeys{}, merkle, &info).ok());
  std::unique_ptr<JournalStorage> second = this->backend_.NewStorage();
  EXPECT_EQ(second->Recover(RecoveryKeys{}, merkle, &info).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(first->Close().ok());
  EXPECT_TRUE(first->Close().ok());  // idempotent
  std::unique_ptr<JournalStorage> third = this->backend_.NewStorage();
  EXPECT_TRUE(third->Recover(RecoveryKeys{}, merkle, &info).ok());
}

TYPED_TEST_P(JournalStorageContract, NothingIsAppendedWithoutTheWriterRole) {
  std::unique_ptr<AuditJournal> journal = this->OpenJournal();
  ASSERT_TRUE(journal->Append(this->Record(1)).ok());
  ASSERT_TRUE(journal->Close().ok());
  const std::vector<JournalEntry> before = this->ReadAll(1);
  ASSERT_EQ(before.size(), 1u);

  // Neither a storage that never recovered nor one that closed may write.
  std::unique_ptr<JournalStorage> unopened = this->backend_.NewStorage();
  const std::string line = before[0].line + "\n";
  EXPECT_FALSE(unopened->AppendCommit(line, 2).ok());
  std::unique_ptr<JournalStorage> closed = this->backend_.NewStorage();
  MerkleHasher merkle;
  RecoveryInfo info;
  ASSERT_TRUE(closed->Recover(RecoveryKeys{}, merkle, &info).ok());
  ASSERT_TRUE(closed->Close().ok());
  EXPECT_FALSE(closed->AppendCommit(line, 2).ok());
  EXPECT_EQ(this->ReadAll(1).size(), 1u);
}

TYPED_TEST_P(JournalStorageContract, AcknowledgedCommitsAreTheNextOpensHead) {
  uint64_t last_seq = 0;
  std::string last_hash;
  {
    std::unique_ptr<AuditJournal> journal = this->OpenJournal();
    std::vector<AuditRecord> batch;
    for (int i = 1; i <= 5; ++i) batch.push_back(this->Record(i));
    ASSERT_TRUE(journal->AppendBatch(batch).ok());
    ASSERT_TRUE(journal->Append(this->Record(6)).ok());
    last_seq = journal->last_seq();
    last_hash = journal->last_hash();
    ASSERT_TRUE(journal->Close().ok());
  }
  EXPECT_EQ(last_seq, 6u);
  std::unique_ptr<AuditJournal> reopened = this->OpenJournal();
  EXPECT_EQ(reopened->last_seq(), last_seq);
  EXPECT_EQ(reopened->last_hash(), last_hash);
  Result<uint64_t> next = reopened->Append(this->Record(7));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, last_seq + 1);
  std::vector<JournalEntry> entries = this->ReadAll(1);
  ASSERT_EQ(entries.size(), 7u);
  EXPECT_EQ(entries[5].hash, last_hash);
  EXPECT_NE(entries[6].line.find("\"prev\":\"" + last_hash + "\""), std::string::npos);
}

TYPED_TEST_P(JournalStorageContract, ASignedJournalRecoversItsTreeAndLastCheckpoint) {
  const Signer signer = Signer::Generate().value();
  std::pair<uint64_t, MerkleHash> tree;
  AuditJournal::CheckpointMark mark;
  {
    std::unique_ptr<AuditJournal> journal = this->OpenJournal(&signer);
    for (int i = 1; i <= 4; ++i) ASSERT_TRUE(journal->Append(this->Record(i)).ok());
    mark = journal->last_checkpoint();
    ASSERT_TRUE(journal->Close().ok());
  }
  {
    // The tree as written, read back by an open with nothing appended since.
    std::unique_ptr<AuditJournal> journal = this->OpenJournal(&signer);
    Result<std::pair<uint64_t, MerkleHash>> head = journal->TreeHead();
    ASSERT_TRUE(head.ok()) << head.status().ToString();
    tree = *head;
    EXPECT_EQ(journal->last_checkpoint().seq, mark.seq);
    EXPECT_EQ(journal->last_checkpoint().note, mark.note);
    EXPECT_FALSE(mark.note.empty());
    ASSERT_TRUE(journal->Close().ok());
  }
  EXPECT_EQ(tree.first, 8u);  // four records, each commit signed
  MerkleHasher merkle;
  CompactRange range;
  for (const JournalEntry& entry : this->ReadAll(1)) range.Append(merkle.Leaf(entry.line), merkle);
  EXPECT_EQ(range.Root(merkle), tree.second);
}

TYPED_TEST_P(JournalStorageContract, ASourceReadsInSeqOrderFromASeqUpToALimit) {
  std::unique_ptr<AuditJournal> journal = this->OpenJournal();
  for (int i = 1; i <= 20; ++i) ASSERT_TRUE(journal->Append(this->Record(i)).ok());
  const std::vector<JournalEntry> all = this->ReadAll(0);
  ASSERT_EQ(all.size(), 20u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].seq, i + 1);

  std::unique_ptr<JournalRecordSource> source = this->backend_.NewSource();
  ASSERT_TRUE(source->Seek(7).ok());
  std::vector<JournalEntry> out;
  ASSERT_EQ(source->Next(5, 100, &out).value(), 5u);
  ASSERT_EQ(source->Next(100, 15, &out).value(), 4u);
  EXPECT_EQ(source->Next(100, 15, &out).value(), 0u);  // nothing more up to the limit
  ASSERT_EQ(source->Next(100, 100, &out).value(), 5u);
  ASSERT_EQ(out.size(), 14u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].seq, i + 7);
    EXPECT_EQ(out[i].line, all[i + 6].line);
    EXPECT_EQ(out[i].hash, all[i + 6].hash);
    EXPECT_EQ(out[i].kind, "decision");
  }
}

TYPED_TEST_P(JournalStorageContract, ASourceAtTheEndSeesLaterAcknowledgedCommits) {
  std::unique_ptr<AuditJournal> journal = this->OpenJournal();
  ASSERT_TRUE(journal->Append(this->Record(1)).ok());
  std::unique_ptr<JournalRecordSource> source = this->backend_.NewSource();
  ASSERT_TRUE(source->Seek(1).ok());
  std::vector<JournalEntry> out;
  ASSERT_EQ(source->Next(10, 100, &out).value(), 1u);
  EXPECT_EQ(source->Next(10, 100, &out).value(), 0u);
  std::vector<AuditRecord> batch = {this->Record(2), this->Record(3)};
  ASSERT_TRUE(journal->AppendBatch(batch).ok());
  ASSERT_EQ(source->Next(10, 100, &out).value(), 2u);
  EXPECT_EQ(out.back().seq, 3u);
}

REGISTER_TYPED_TEST_SUITE_P(JournalStorageContract, AnEmptyJournalRecoversToTheGenesisHead, OneWriterAtATime,
                            NothingIsAppendedWithoutTheWriterRole, AcknowledgedCommitsAreTheNextOpensHead,
                            ASignedJournalRecoversItsTreeAndLastCheckpoint, ASourceReadsInSeqOrderFromASeqUpToALimit,
                            ASourceAtTheEndSeesLaterAcknowledgedCommits);

}  // namespace gpufed::audit::testing
