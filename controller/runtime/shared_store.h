#pragma once
// The store of a term on the shared database (app.h's SharedStore): PostgreSQL, every
// write transaction fenced by the term's token.
#include <memory>

#include "controller/common/status.h"
#include "controller/runtime/app.h"
#include "controller/store/store.h"

namespace gpufed::runtime {

Result<std::unique_ptr<store::Store>> OpenSharedStore(const SharedStore& shared);

}  // namespace gpufed::runtime
