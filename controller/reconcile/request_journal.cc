#include "controller/reconcile/request_journal.h"

#include <cctype>

#include "controller/audit/inputs.h"
#include "controller/audit/records.h"
#include "controller/config/repository.h"

namespace gpufed::reconcile {

namespace {

Status NotJournalled(const std::string& what, const Status& why) {
  return Unavailable("the audit journal cannot record the " + what + ", so it was not accepted: " + why.ToString());
}

}  // namespace

store::SubmissionFacts SubmissionFactsOf(const model::Workload& spec, Duration submitted, std::string principal,
                                         std::string revision) {
  model::Workload planned = spec;
  planned.submitted_at = submitted;
  return {std::move(principal), audit::WorkloadSpecHash(planned), std::move(revision)};
}

std::string SubmissionSourceName(const std::string& store_source) {
  return store_source == "repo" ? "repository" : store_source;
}

store::SubmissionJournal JournalSubmissionsTo(audit::AuditJournal* journal, const gpufed::Clock* clock,
                                              StoreWritesInJournal in_journal) {
  return [journal, clock, in_journal = std::move(in_journal)](const std::vector<store::AcceptedSubmission>& accepted,
                                                              const store::RidingWrites& writes) -> Status {
    const Duration now = clock->Now();
    std::vector<audit::AuditRecord> records;
    records.reserve(accepted.size());
    for (const store::AcceptedSubmission& a : accepted) {
      audit::WorkloadSubmission s;
      s.workload = a.record->name;
      s.uid = a.record->uid;
      s.tenant = a.record->tenant;
      s.principal = a.facts->principal;
      s.source = SubmissionSourceName(a.record->source);
      s.spec_hash = a.facts->spec_hash;
      s.revision = a.facts->revision;
      s.commit = config::RevisionCommit(a.facts->revision);
      s.accepted_at = now;
      records.push_back(audit::WorkloadSubmittedRecord(s));
    }
    if (!in_journal || !journal->carries_work()) {
      Result<uint64_t> appended = journal->AppendBatch(records);
      return appended.ok() ? Status::Ok() : NotJournalled("submission", appended.status());
    }
    // Rerunnable: the store writes a group's rows afresh at each call (store_submit.cc), so
    // the journal may send them with its COMMIT, one round trip (pg_journal_storage.h).
    audit::RidingWork rows{.run = [&](audit::CommitScope& scope) { return in_journal(scope, "api", writes); },
                           .rerunnable = true};
    Result<uint64_t> appended = journal->AppendBatch(records, nullptr, &rows);
    if (!appended.ok()) return NotJournalled("submission", appended.status());
    return rows.result;  // the rows' own error: the records committed, the rows did not
  };
}

Status JournalCancellation(audit::AuditJournal* journal, const store::WorkloadRecord& record,
                           const std::string& principal, Duration now) {
  audit::WorkloadCancellation c;
  c.workload = record.name;
  c.uid = record.uid;
  c.tenant = record.tenant;
  c.principal = principal;
  // In lower case, as the journal's other states are (a decision's outcome, an attempt's).
  c.state = store::StateName(record.state);
  for (char& ch : c.state) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  c.attempt = record.attempt;
  c.cluster = record.cluster;
  c.cancelled_at = now;
  Result<uint64_t> appended = journal->Append(audit::WorkloadCancelledRecord(c));
  return appended.ok() ? Status::Ok() : NotJournalled("cancel", appended.status());
}

}  // namespace gpufed::reconcile
