#pragma once
// A journal for a test that writes records and reads them back with the audit tools:
// controller id "test-ctl", no signer, in `dir`. And the kinds of the records a
// controller's journal holds, in order.
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"

namespace gpufed::audit::testing {

inline Result<std::unique_ptr<AuditJournal>> OpenTestJournal(Env& env, const std::string& dir) {
  JournalOptions o;
  o.env = &env;
  o.dir = dir;
  o.controller_id = "test-ctl";
  return AuditJournal::Open(o, nullptr);
}

// The `kind` of every record in `<audit_dir>/journal`, oldest first; empty when there is
// no journal.
inline std::vector<std::string> JournalKinds(const std::string& audit_dir) {
  std::vector<std::string> kinds;
  std::unique_ptr<Env> env = NewPosixEnv();
  auto segments = ListSegments(*env, audit_dir + "/journal");
  if (!segments.ok()) return kinds;
  for (const auto& [first, path] : *segments) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      kinds.push_back(record.is_object() ? record.value("kind", "?") : "?");
    }
  }
  return kinds;
}

}  // namespace gpufed::audit::testing
