#pragma once
// A journal for a test that writes records and reads them back with the audit tools:
// controller id "test-ctl", no signer, in `dir`.
#include <memory>
#include <string>

#include "controller/audit/journal.h"

namespace gpufed::audit::testing {

inline Result<std::unique_ptr<AuditJournal>> OpenTestJournal(Env& env, const std::string& dir) {
  JournalOptions o;
  o.env = &env;
  o.dir = dir;
  o.controller_id = "test-ctl";
  return AuditJournal::Open(o, nullptr);
}

}  // namespace gpufed::audit::testing
