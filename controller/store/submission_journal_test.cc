// SubmitNumbered with a submission journal: write-ahead for every submission. The journal
// is given each accepted submission with its uid before the store commits it; what it
// refuses is never stored, and no uid it was given goes to another submission.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "controller/common/mutex.h"
#include "controller/store/store.h"

namespace gpufed::store {
namespace {

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/store_journal_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

WorkloadRecord Record(const std::string& name, const std::string& tenant = "alpha") {
  WorkloadRecord r;
  r.name = name;
  r.tenant = tenant;
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

SubmissionFacts Facts(const std::string& principal) { return {principal, "sha256:" + principal, "rev-1"}; }

// What a journal was given, and whether it takes the next group.
struct FakeJournal {
  Mutex mu;
  std::vector<std::pair<WorkloadRecord, SubmissionFacts>> taken GUARDED_BY(mu);
  int calls GUARDED_BY(mu) = 0;
  Status answer GUARDED_BY(mu);

  SubmissionJournal Function() {
    return [this](const std::vector<AcceptedSubmission>& accepted, const RidingWrites&) {
      MutexLock lock(mu);
      ++calls;
      // As an append whose sync failed: the records may be there, the answer is an error.
      for (const AcceptedSubmission& a : accepted) taken.emplace_back(*a.record, *a.facts);
      return answer;
    };
  }
};

TEST(SubmissionJournal, EveryAcceptedSubmissionIsJournalledWithItsUidAndFactsAndARefusedOneIsNot) {
  auto store = Store::Open(Db("accepted"));
  ASSERT_TRUE(store.ok());
  FakeJournal journal;
  (*store)->SetSubmissionJournal(journal.Function());
  Result<WorkloadRecord> train = (*store)->SubmitNumbered(Record("train"), Duration::FromSeconds(1), Facts("alice"));
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->uid, "train-u1");
  // A live duplicate is refused by the store before the journal hears of it.
  EXPECT_EQ((*store)->SubmitNumbered(Record("train"), Duration::FromSeconds(2), Facts("bob")).status().code(),
            StatusCode::kAlreadyExists);
  MutexLock lock(journal.mu);
  ASSERT_EQ(journal.taken.size(), 1u);
  EXPECT_EQ(journal.taken[0].first.uid, "train-u1");
  EXPECT_EQ(journal.taken[0].first.tenant, "alpha");
  EXPECT_EQ(journal.taken[0].second.principal, "alice");
  EXPECT_EQ(journal.taken[0].second.spec_hash, "sha256:alice");
  EXPECT_EQ(journal.taken[0].second.revision, "rev-1");
}

TEST(SubmissionJournal, ASubmissionTheJournalRefusesIsNotStoredAndItsUidIsNeverGivenAgain) {
  const std::string path = Db("refused");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    FakeJournal journal;
    {
      MutexLock lock(journal.mu);
      journal.answer = Unavailable("the audit journal cannot record the submission: disk full");
    }
    (*store)->SetSubmissionJournal(journal.Function());
    Result<WorkloadRecord> lost = (*store)->SubmitNumbered(Record("eval"), Duration::FromSeconds(1), Facts("alice"));
    ASSERT_FALSE(lost.ok());
    EXPECT_EQ(lost.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(lost.status().message().find("disk full"), std::string::npos);
    Result<std::optional<WorkloadRecord>> stored = (*store)->Get("alpha", "eval");
    ASSERT_TRUE(stored.ok());
    EXPECT_FALSE(stored->has_value()) << "stored what the journal refused";
    Result<std::vector<WorkloadRecord>> all = (*store)->List();
    ASSERT_TRUE(all.ok());
    EXPECT_TRUE(all->empty());
    // The journal may hold eval-u1 all the same: the next submission takes u2.
    {
      MutexLock lock(journal.mu);
      journal.answer = Status::Ok();
    }
    Result<WorkloadRecord> next = (*store)->SubmitNumbered(Record("eval"), Duration::FromSeconds(2), Facts("alice"));
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(next->uid, "eval-u2");
    {
      MutexLock lock(journal.mu);
      journal.answer = Unavailable("journal failed");
    }
    EXPECT_FALSE((*store)->SubmitNumbered(Record("late"), Duration::FromSeconds(3), Facts("alice")).ok());
    (*store)->SetSubmissionJournal(nullptr);
  }
  // After a restart too: the refused group's numbers were committed without its rows.
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok());
  Result<WorkloadRecord> after = (*reopened)->SubmitNumbered(Record("late"), Duration::FromSeconds(4));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->uid, "late-u4");
  Result<std::optional<WorkloadRecord>> late = (*reopened)->GetByUid("late-u3");
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(late->has_value());
}

// Submissions that arrive together are journalled together, each once, and a journal that
// refuses a group refuses each of its submissions and nothing else.
TEST(SubmissionJournal, ConcurrentSubmissionsAreEachJournalledOnceBeforeTheyAreStored) {
  auto store = Store::Open(Db("concurrent"));
  ASSERT_TRUE(store.ok());
  FakeJournal journal;
  (*store)->SetSubmissionJournal(journal.Function());
  constexpr int kThreads = 8, kEach = 25;
  std::vector<std::vector<Result<WorkloadRecord>>> results(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string name = "w" + std::to_string(t) + "-" + std::to_string(i);
        results[t].push_back((*store)->SubmitNumbered(Record(name), Duration::FromSeconds(1), Facts(name)));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<std::string> stored;
  for (const auto& per_thread : results) {
    for (const Result<WorkloadRecord>& r : per_thread) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      stored.insert(r->uid);
    }
  }
  MutexLock lock(journal.mu);
  std::set<std::string> journalled;
  for (const auto& [record, facts] : journal.taken) {
    EXPECT_TRUE(journalled.insert(record.uid).second) << record.uid << " journalled twice";
    EXPECT_EQ(facts.principal, record.name);  // each with its own caller's facts
  }
  EXPECT_EQ(journalled, stored);
  EXPECT_LE(journal.calls, kThreads * kEach);
}

// A name submitted by many callers at once is accepted once, however their groups overlap:
// refused by the stored row, or by the first one's group while it is journalled and not
// yet committed. The journal never hears of a refused one.
TEST(SubmissionJournal, ANameSubmittedByManyAtOnceIsAcceptedAndJournalledOnce) {
  auto store = Store::Open(Db("same_name"));
  ASSERT_TRUE(store.ok());
  FakeJournal journal;
  (*store)->SetSubmissionJournal(journal.Function());
  constexpr int kRounds = 60, kThreads = 6;
  for (int round = 0; round < kRounds; ++round) {
    const std::string name = "dup" + std::to_string(round);
    std::vector<Result<WorkloadRecord>> results(kThreads, Status(StatusCode::kInternal, "not run"));
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(
          [&, t] { results[t] = (*store)->SubmitNumbered(Record(name), Duration::FromSeconds(1), Facts("caller")); });
    }
    for (std::thread& t : threads) t.join();
    int accepted = 0;
    for (const Result<WorkloadRecord>& r : results) {
      if (r.ok()) {
        ++accepted;
      } else {
        EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists) << r.status().ToString();
      }
    }
    EXPECT_EQ(accepted, 1) << name;
  }
  MutexLock lock(journal.mu);
  EXPECT_EQ(journal.taken.size(), size_t{kRounds});
}

}  // namespace
}  // namespace gpufed::store
