#pragma once
// The journal's record of what the controller was asked to do, and by whom: every
// submission, whatever its source (workload-submitted, written ahead of the store: the
// store hands each group of accepted submissions to JournalSubmissionsTo before it commits
// them), and every cancel asked through the API (workload-cancelled, before it takes
// effect). Each names the principal and the tenant (docs/audit-format.md).
#include <functional>
#include <string>

#include "controller/audit/journal.h"
#include "controller/common/clock.h"
#include "controller/model/workload.h"
#include "controller/reconcile/store_writes_in_journal.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

// What the journal records beside a submission (Store::SubmitNumbered's `facts`): who
// submitted it, the revision in force, and the hash of the workload the loop will plan:
// the spec as `submitted` stamps it (Reconciler::SpecOf), so the submission and its
// decisions carry the same specHash.
store::SubmissionFacts SubmissionFactsOf(const model::Workload& spec, Duration submitted, std::string principal,
                                         std::string revision);

// The store's submission journal: one AppendBatch of workload-submitted records per group
// of accepted submissions, stamped with `clock`. Unavailable, naming the journal's error,
// when the journal does not take them (the API answers 503 and nothing is stored). With
// `in_journal` and a journal that carries work (audit::RidingWork), the group's rows
// commit in the records' transaction: OK then means both are durable, and an error of the
// rows' own (records kept, rows undone) is returned as it is. Both pointers must outlive
// the store's use of it.
store::SubmissionJournal JournalSubmissionsTo(audit::AuditJournal* journal, const gpufed::Clock* clock,
                                              StoreWritesInJournal in_journal = nullptr);

// Appends workload-cancelled for `record` as it is now (its state in lower case, as the
// API names it: pending, queued, placed, running, ...; its attempt and cluster),
// asked by `principal` at `now`. Unavailable when the journal does not take it: the
// cancel is then not requested.
Status JournalCancellation(audit::AuditJournal* journal, const store::WorkloadRecord& record,
                           const std::string& principal, Duration now);

// The journal's name of a store source: "repo" is "repository"; "api" and "scenario" are
// as the store spells them.
std::string SubmissionSourceName(const std::string& store_source);

}  // namespace gpufed::reconcile
