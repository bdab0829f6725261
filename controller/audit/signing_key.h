#pragma once
// Where a journal's signing key lives and how it is made: `<dir>/signing.key` (Ed25519,
// PEM, 0600 from its creation) and `signing.pub` beside it. The controller keeps its pair
// in `<state>/audit` and creates it on first start; `gpufed audit keygen --out DIR` makes
// the same two files ahead of time (say, for `audit record -k`, or to put in place before
// a controller's first start). One name, one layout, one maker.
#include <string>

#include "controller/audit/env.h"
#include "controller/audit/signing.h"
#include "controller/common/secure_file.h"
#include "controller/common/status.h"

namespace gpufed::audit {

inline constexpr const char* kSigningKeyFile = "signing.key";
inline constexpr const char* kSigningPubFile = "signing.pub";

// A new pair in `dir` (made 0700 when missing; an existing folder as `existing` says).
// AlreadyExists when either file is there: a key is never replaced.
Result<Signer> CreateSigningKey(Env& env, const std::string& dir, ExistingFolder existing = ExistingFolder::kNarrow);

// Reads `<audit_dir>/signing.key`, or creates the pair on first start, so `gpufed audit
// verify <audit_dir> --key <audit_dir>/signing.pub` works with no operator step.
// `audit_dir` is made private (0700, narrowed if it was not). A key that is a symlink,
// owned by another user, or readable or writable by group or others is refused
// (FailedPrecondition naming the path and the fix): it may have been copied, so it is
// neither used nor silently replaced. A lost public key is derived again.
Result<Signer> LoadOrCreateSigningKey(Env& env, const std::string& audit_dir);

// The key an operator keeps outside the state folder (`gpufed run --audit-key FILE`): read
// as private as LoadOrCreateSigningKey reads its own, never created. `<audit_dir>/signing.pub`
// is written when missing (verifiers read it there) and must otherwise be this key's:
// FailedPrecondition, naming both key ids, when it is another's.
Result<Signer> LoadSigningKeyFile(Env& env, const std::string& key_file, const std::string& audit_dir);

}  // namespace gpufed::audit
