// gpufed audit prove | verify-proof | vkey: Merkle proofs over a journal, checked offline
// with the log's public key alone (controller/audit/proofs.h).
#include <fstream>
#include <iostream>
#include <sstream>

#include "controller/audit/proofs.h"
#include "controller/audit/signed_note.h"
#include "controller/audit/verify.h"
#include "controller/cli/audit_commands.h"

namespace gpufed::cli {
namespace {

struct ProveOptions {
  std::string audit_dir;
  std::string store;  // --store: the journal in PostgreSQL
  std::vector<std::string> archives;
  uint64_t seq = 0;
  uint64_t tree_size = 0;
  uint64_t from_size = 0, to_size = 0;
  std::string checkpoint;
};

// A file's text, bounded: proofs and notes are small.
Result<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be read");
  std::string text;
  text.resize(size_t{4} << 20);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (!in.eof()) return InvalidArgument(path + ": larger than 4 MiB");
  return text;
}

int RunProve(const ProveOptions& o) {
  if (o.audit_dir.empty() == o.store.empty() || (!o.store.empty() && !o.archives.empty())) {
    std::cerr << "gpufed audit prove: give an audit folder (with any --archive) or --store\n";
    return 2;
  }
  auto env = JournalEnv(o.audit_dir, o.archives);
  const bool consistency = o.from_size != 0 || o.to_size != 0;
  if (consistency == (o.seq != 0)) {
    std::cerr << "gpufed audit prove: give --seq N, or --from-size A [--to-size B]\n";
    return 2;
  }
  std::string note;
  if (!o.checkpoint.empty()) {
    Result<std::string> text = ReadSmallFile(o.checkpoint);
    if (!text.ok()) {
      std::cerr << "gpufed audit prove: --checkpoint " << text.status().message() << "\n";
      return 2;
    }
    note = *text;
  }
  Result<audit::JournalProver> prover =
      o.store.empty() ? audit::JournalProver::Load(*env, o.audit_dir) : LoadStoreProver(o.store);
  if (!prover.ok()) {
    std::cerr << "gpufed audit prove: " << (o.store.empty() ? o.audit_dir + ": " : std::string())
              << prover.status().message() << "\n";
    return prover.status().code() == StatusCode::kDataLoss ? 1 : 2;
  }
  Result<nlohmann::json> proof =
      consistency ? prover->Consistency(o.from_size, o.to_size) : prover->Inclusion(o.seq, o.tree_size, note);
  if (!proof.ok()) {
    std::cerr << "gpufed audit prove: " << proof.status().message() << "\n";
    return proof.status().code() == StatusCode::kDataLoss ? 1 : 2;
  }
  std::cout << proof->dump(2) << "\n";
  return 0;
}

struct VerifyProofOptions {
  std::string proof_path;
  std::string key_path;   // PEM public key
  std::string vkey;       // or a signed-note verifier key
  std::string checkpoint;
  std::string old_checkpoint;
};

int RunVerifyProof(const VerifyProofOptions& o) {
  const char* cmd = "gpufed audit verify-proof: ";
  if (o.key_path.empty() == o.vkey.empty()) {
    std::cerr << cmd << "give the log's key: --key PUB.pem or --vkey NAME+ID+KEY\n";
    return 2;
  }
  audit::ProofKey key;
  std::optional<audit::SignatureVerifier> pem;
  if (!o.vkey.empty()) {
    Result<audit::NoteVerifier> v = audit::NoteVerifier::FromVerifierKey(o.vkey);
    if (!v.ok()) {
      std::cerr << cmd << "--vkey: " << v.status().message() << "\n";
      return 2;
    }
    key.vkey.emplace(std::move(*v));
  } else {
    Result<std::string> text = ReadSmallFile(o.key_path);
    Result<audit::SignatureVerifier> k =
        text.ok() ? audit::SignatureVerifier::FromPublicKeyPem(*text) : Result<audit::SignatureVerifier>(text.status());
    if (!k.ok()) {
      std::cerr << cmd << "--key " << o.key_path << ": " << k.status().message() << "\n";
      return 2;
    }
    pem.emplace(std::move(*k));
    key.pem = &*pem;
  }
  std::string texts[3];
  const std::string* paths[3] = {&o.proof_path, &o.checkpoint, &o.old_checkpoint};
  for (int i = 0; i < 3; ++i) {
    if (paths[i]->empty()) continue;
    Result<std::string> text = ReadSmallFile(*paths[i]);
    if (!text.ok()) {
      std::cerr << cmd << text.status().message() << "\n";
      return 2;
    }
    texts[i] = std::move(*text);
  }
  nlohmann::json proof = nlohmann::json::parse(texts[0], nullptr, /*allow_exceptions=*/false);
  if (proof.is_discarded()) {
    std::cerr << cmd << o.proof_path << ": not JSON\n";
    return 2;
  }
  Result<audit::ProofCheck> check = audit::VerifyProof(proof, key, texts[1], texts[2]);
  if (!check.ok()) {
    std::cout << "FAILED: " << check.status().message() << "\n";
    return check.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << "OK: " << check->summary << "\n";
  return 0;
}

// The log's signed-note verifier key: its origin (from the journal's checkpoints, or
// --origin) and signing.pub, which must be the key in force: the one that signed the
// newest checkpoint, what the API serves (after a rotation, the new key).
int RunVkey(const std::string& audit_dir, const std::string& key_path, std::string origin) {
  const char* cmd = "gpufed audit vkey: ";
  auto env = audit::NewPosixEnv();
  const std::string pub = key_path.empty() ? audit_dir + "/signing.pub" : key_path;
  Result<std::string> text = ReadSmallFile(pub);
  Result<audit::SignatureVerifier> key =
      text.ok() ? audit::SignatureVerifier::FromPublicKeyPem(*text) : Result<audit::SignatureVerifier>(text.status());
  if (!key.ok()) {
    std::cerr << cmd << pub << ": " << key.status().message() << "\n";
    return 2;
  }
  if (origin.empty()) {
    Result<audit::VerifyReport> report = audit::VerifyJournalDir(*env, audit_dir, {});
    if (!report.ok() || !report->ok || report->last_note.empty()) {
      std::cerr << cmd << audit_dir << ": no verified signed checkpoint names the log's origin; pass --origin\n";
      return 1;
    }
    if (report->last_note_key_id != key->key_id()) {
      std::cerr << cmd << pub << " is key " << key->key_id()
                << ", but the journal's newest checkpoint is signed by key " << report->last_note_key_id
                << ", the key in force"
                << (report->rotations.empty()
                        ? ""
                        : " since the key-rotated record at seq " + std::to_string(report->rotations.back().seq))
                << ": give its public key (--key)\n";
      return 1;
    }
    Result<audit::Note> note = audit::ParseNote(report->last_note);
    Result<audit::NoteVerifier> verifier = audit::NoteVerifier::FromPublicKey(report->log_origin, *key);
    if (!note.ok() || !verifier.ok() || !verifier->Verify(*note).ok()) {
      std::cerr << cmd << audit_dir << ": the newest checkpoint's signature does not verify with " << pub << "\n";
      return 1;
    }
    origin = report->log_origin;
  }
  if (!audit::ValidNoteKeyName(origin)) {
    std::cerr << cmd << "--origin '" << origin << "' is not a signed-note key name\n";
    return 2;
  }
  std::cout << audit::FormatVerifierKey(origin, key->PublicKeyRaw()) << "\n";
  return 0;
}

}  // namespace

void AddAuditProveCommands(CLI::App& audit, int* exit_code) {
  auto po = std::make_shared<ProveOptions>();
  CLI::App* prove = audit.add_subcommand(
      "prove", "Print an inclusion proof for a record (--seq) or a consistency proof between two tree sizes (JSON)");
  prove->add_option("audit_dir", po->audit_dir, "Audit folder (holds journal/), or --store");
  AddStoreOption(prove, &po->store);
  prove->add_option("--seq", po->seq, "The record to prove");
  AddArchiveOption(prove, &po->archives);
  prove->add_option("--tree-size", po->tree_size, "Prove against this tree size (default: the newest checkpoint's)");
  prove->add_option("--checkpoint", po->checkpoint, "Prove against your own copy of a checkpoint (signed note)");
  prove->add_option("--from-size", po->from_size, "Consistency: the older tree size");
  prove->add_option("--to-size", po->to_size, "Consistency: the newer tree size (default: the newest checkpoint's)");
  prove->callback([po, exit_code] { *exit_code = RunProve(*po); });

  auto vo = std::make_shared<VerifyProofOptions>();
  CLI::App* verify = audit.add_subcommand(
      "verify-proof", "Check a proof offline with the log's public key: exit 0 proven, 1 not proven, 2 unusable input");
  verify->add_option("proof", vo->proof_path, "A proof printed by gpufed audit prove")->required();
  verify->add_option("-k,--key", vo->key_path, "The log's Ed25519 public key (PEM, signing.pub)");
  verify->add_option("--vkey", vo->vkey, "Or its signed-note verifier key NAME+ID+KEY");
  verify->add_option("--checkpoint", vo->checkpoint, "A checkpoint you trust instead of the proof's own");
  verify->add_option("--old", vo->old_checkpoint, "Consistency: your checkpoint of the older tree");
  verify->callback([vo, exit_code] { *exit_code = RunVerifyProof(*vo); });

  auto vk_dir = std::make_shared<std::string>();
  auto vk_key = std::make_shared<std::string>();
  auto vk_origin = std::make_shared<std::string>();
  CLI::App* vkey = audit.add_subcommand(
      "vkey", "Print the log's signed-note verifier key (NAME+ID+KEY), for verifiers that know nothing of gpufed");
  vkey->add_option("audit_dir", *vk_dir, "Audit folder (holds journal/ and signing.pub)")->required();
  vkey->add_option("-k,--key", *vk_key, "The public key (default: AUDIT_DIR/signing.pub)");
  vkey->add_option("--origin", *vk_origin, "The log's origin (default: the one its checkpoints name)");
  vkey->callback([vk_dir, vk_key, vk_origin, exit_code] { *exit_code = RunVkey(*vk_dir, *vk_key, *vk_origin); });
}

}  // namespace gpufed::cli
