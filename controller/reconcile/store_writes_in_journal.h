#pragma once
// How the store's rows ride in the audit journal's transaction (issue 38: records and the
// rows that follow from them, one durable commit). Only code that knows the journal's
// storage can open its transaction onto the store's SQL: the runtime's, for PostgreSQL
// (runtime/shared_store.h). Used for a submission group's rows (request_journal.h) and a
// pass's decision rows, intents and updates (journal_log.h).
#include <functional>
#include <string_view>

#include "controller/audit/journal_storage.h"
#include "controller/common/status.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

// Runs `writes` inside `scope`'s transaction, as `writer` (the state_totals writer their
// rows are counted under: `api` for submissions, `loop` for the loop's). Null: the store's
// rows cannot ride, and the store commits them itself after the journal.
using StoreWritesInJournal =
    std::function<Status(audit::CommitScope& scope, std::string_view writer, const store::RidingWrites& writes)>;

}  // namespace gpufed::reconcile
