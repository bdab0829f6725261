#pragma once
// A connector's own record of the actions it accepted: one line per (kind, key), made
// durable (fsync) before the action takes effect. It is what makes Apply idempotent
// across controller restarts, and what tests read to prove no action ran twice.
//
// Format (text, one record per line): "<kind>\t<key>\t<payload>\n". A final line
// without '\n' is a torn write from a crash and is ignored (and cut off on open).
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller/common/durability.h"
#include "controller/common/status.h"

namespace gpufed::connectors {

// How a ledger is opened. kReadOnly (`gpufed plan --state`, FactoryContext::read_only):
// the file is read and nothing else. A missing folder or file is a ledger without
// records, a torn last line is ignored but left in place, nothing is created, narrowed
// or truncated, and Append fails with FailedPrecondition.
enum class LedgerAccess { kReadWrite, kReadOnly };

struct LedgerRecord {
  std::string kind;
  std::string key;
  std::string payload;   // connector-specific (JSON), no tabs or newlines
};

class ActionLedger {
 public:
  // Opens or creates `path` (its folder must exist) and reads the records back.
  // kUnsynced (simulated clusters only) appends without fdatasync.
  static Result<std::unique_ptr<ActionLedger>> Open(const std::string& path,
                                                    Durability durability = Durability::kSynced);
  // Reads `path` (LedgerAccess::kReadOnly above). A symlink in its place is refused
  // (FailedPrecondition), as Open refuses it.
  static Result<std::unique_ptr<ActionLedger>> OpenReadOnly(const std::string& path);
  // A connector's ledger, <state_dir>/ledger.log, creating the folder first (kReadWrite);
  // null when `state_dir` is empty (the connector then keeps no ledger).
  static Result<std::unique_ptr<ActionLedger>> OpenInStateDir(const std::string& state_dir,
                                                              Durability durability = Durability::kSynced,
                                                              LedgerAccess access = LedgerAccess::kReadWrite);
  ~ActionLedger();
  ActionLedger(const ActionLedger&) = delete;
  ActionLedger& operator=(const ActionLedger&) = delete;

  bool Contains(const std::string& kind, const std::string& key) const;
  // Appends and fsyncs (unless opened kUnsynced). AlreadyExists when (kind, key) is
  // present; FailedPrecondition when opened read-only.
  Status Append(const LedgerRecord& record);
  bool read_only() const { return fd_ < 0; }
  const std::vector<LedgerRecord>& records() const { return records_; }

 private:
  ActionLedger(std::string path, int fd, Durability durability)
      : path_(std::move(path)), fd_(fd), durability_(durability) {}
  // Indexes `records` (parsed from the file) as this ledger's.
  void Adopt(std::vector<LedgerRecord> records);
  std::string path_;
  int fd_ = -1;  // -1: opened read-only
  Durability durability_;
  std::vector<LedgerRecord> records_;
  std::map<std::pair<std::string, std::string>, size_t> index_;
};

// Reads a ledger file without opening it for writing (tests, reports).
Result<std::vector<LedgerRecord>> ReadLedger(const std::string& path);

}  // namespace gpufed::connectors
