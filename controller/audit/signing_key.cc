#include "controller/audit/signing_key.h"

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"

namespace gpufed::audit {

Result<Signer> CreateSigningKey(Env& env, const std::string& dir, ExistingFolder existing) {
  const std::string key_path = dir + "/" + kSigningKeyFile;
  const std::string pub_path = dir + "/" + kSigningPubFile;
  if (env.FileExists(key_path) || env.FileExists(pub_path)) {
    return Status(StatusCode::kAlreadyExists, key_path + " or " + pub_path + " exists; not overwriting");
  }
  Result<Signer> signer = Signer::Generate();
  if (!signer.ok()) return signer.status();
  if (Result<std::optional<ModeChange>> made = MakePrivateFolder(dir, existing); !made.ok()) return made.status();
  // Owner-only (0600) from its creation, durable, and never over an existing file.
  GPUFED_RETURN_IF_ERROR(CreateSecretFile(key_path, signer->PrivateKeyPem()));
  GPUFED_RETURN_IF_ERROR(WriteFileAtomic(env, pub_path, signer->PublicKeyPem()));
  return signer;
}

Result<Signer> LoadOrCreateSigningKey(Env& env, const std::string& audit_dir) {
  const std::string key_path = audit_dir + "/" + kSigningKeyFile;
  const std::string pub_path = audit_dir + "/" + kSigningPubFile;
  // The audit folder also keeps the inputs snapshots, run.env included: private, like the
  // state folder it sits in.
  if (Result<std::optional<ModeChange>> dir = MakePrivateFolder(audit_dir); !dir.ok()) return dir.status();
  Result<Signer> signer = Signer::FromPrivateKeyFile(key_path);
  if (signer.ok()) {
    // A lost public key is re-derived; verifiers need it and it is not secret.
    if (!env.FileExists(pub_path)) GPUFED_RETURN_IF_ERROR(WriteFileAtomic(env, pub_path, signer->PublicKeyPem()));
    return signer;
  }
  if (signer.status().code() != StatusCode::kNotFound) return signer.status();
  if (Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(env, audit_dir + "/journal");
      segments.ok() && !segments->empty()) {
    // The journal's checkpoints name the key that signed them; a silent new key would
    // sign over whatever the folder holds now. A key change is an explicit rotation.
    return FailedPrecondition(key_path + " is missing but the journal in " + audit_dir +
                              "/journal is signed: give the key that signed it (--audit-key) or restore the key; "
                              "nothing was changed");
  }
  if (env.FileExists(pub_path)) {
    // A public key without its private key: verifiers may hold it; a new pair would not
    // match it. Said, not replaced.
    return FailedPrecondition(pub_path + " exists without " + key_path +
                              ": restore the private key, or move the public key away to start a new pair");
  }
  return CreateSigningKey(env, audit_dir);
}

Result<Signer> LoadSigningKeyFile(Env& env, const std::string& key_file, const std::string& audit_dir) {
  Result<Signer> signer = Signer::FromPrivateKeyFile(key_file);
  if (!signer.ok()) return signer.status();
  if (Result<std::optional<ModeChange>> dir = MakePrivateFolder(audit_dir); !dir.ok()) return dir.status();
  const std::string pub_path = audit_dir + "/" + kSigningPubFile;
  Result<std::string> pub = env.ReadFile(pub_path);
  if (!pub.ok()) {
    if (pub.status().code() != StatusCode::kNotFound) return pub.status();
    GPUFED_RETURN_IF_ERROR(WriteFileAtomic(env, pub_path, signer->PublicKeyPem()));
    return signer;
  }
  Result<SignatureVerifier> existing = SignatureVerifier::FromPublicKeyPem(*pub);
  if (!existing.ok() || existing->key_id() != signer->key_id()) {
    return FailedPrecondition(pub_path + " is " + (existing.ok() ? "key " + existing->key_id() : "not a public key") +
                              ", not " + key_file + " (key " + signer->key_id() +
                              "); a key change is an explicit, journalled rotation (gpufed audit rotate-key: run it "
                              "again if one did not finish); nothing was changed");
  }
  return signer;
}

}  // namespace gpufed::audit
