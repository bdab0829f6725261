#pragma once
// `gpufed audit verify --require-witnessed`: how much of a journal witnesses vouch for.
// Each witness's newest cosigned checkpoint (witness_client.h keeps them in
// <audit>/witnessed/) counts when the log's signature and the witness's cosignature verify
// and its root is the journal's root at that size; the journal is witnessed up to the
// largest size that `quorum` witnesses each cosigned (a cosignature of a larger tree
// vouches for every smaller one: the witness checked consistency). A root that differs is
// a finding, not a missing cosignature: the journal is not the history the witness saw.
#include <cstdint>
#include <string>
#include <vector>

#include "controller/audit/cosignature.h"
#include "controller/audit/env.h"
#include "controller/audit/proofs.h"
#include "controller/audit/signed_note.h"

namespace gpufed::audit {

struct WitnessPolicy {
  std::vector<CosignatureVerifier> witnesses;
  size_t quorum = 0;  // how many must cosign (1 of 2, 2 of 3, ...)
};

struct WitnessedReport {
  struct Witness {
    std::string name;
    uint64_t size = 0;       // of its newest valid cosigned checkpoint; 0: none
    uint64_t timestamp = 0;  // its cosignature's time
    std::string problem;     // why a cosigned checkpoint of it did not count
    bool mismatch = false;   // it cosigned a root this journal does not have at that size
  };
  std::vector<Witness> witnesses;
  uint64_t witnessed_size = 0;  // records covered by `quorum` cosignatures
  bool mismatch = false;        // some witness saw another history
};

// Reads <audit_dir>/witnessed/*.note. `log_key` checks the log's signature.
Result<WitnessedReport> CheckWitnessed(Env& env, const std::string& audit_dir, const NoteVerifier& log_key,
                                       const WitnessPolicy& policy, JournalProver& journal);

}  // namespace gpufed::audit
