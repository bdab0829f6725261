#pragma once
// The store of a term on the shared database (app.h's SharedStore): PostgreSQL, every
// write transaction fenced by the term's token.
#include <memory>

#include "controller/common/status.h"
#include "controller/reconcile/request_journal.h"
#include "controller/runtime/app.h"
#include "controller/store/store.h"

namespace gpufed::runtime {

Result<std::unique_ptr<store::Store>> OpenSharedStore(const SharedStore& shared);

// The store's rows in the PostgreSQL journal's transaction (pgjournal's PgCommitScope),
// written through the store's SQL on that session as the writer named (`api`: a
// submission group's, store_submit.cc; `loop`: a pass's decision rows, intents and
// updates, Store::RecordIntentsAndUpdatesWith): records and rows are one durable commit.
reconcile::StoreWritesInJournal StoreWritesInJournalTransaction();

}  // namespace gpufed::runtime
