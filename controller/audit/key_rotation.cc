#include "controller/audit/key_rotation.h"

#include <optional>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/key_in_force.h"
#include "controller/audit/records.h"
#include "controller/audit/signing_key.h"
#include "controller/common/secure_file.h"

namespace gpufed::audit {
namespace {

// What the journal's newest records say: the log's origin (its newest signed-note
// checkpoint), the controller id its records carry, and its newest key-rotated record.
struct JournalTail {
  std::string origin;
  std::string controller;
  std::optional<KeyRotation> rotation;
};

// Reads segments from the newest back until one holds a signed-note checkpoint. Lines
// that do not parse are skipped: the opens that follow judge the journal.
Result<JournalTail> ReadTail(Env& env, const std::string& audit_dir) {
  Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(env, audit_dir + "/journal");
  if (!segments.ok() && segments.status().code() != StatusCode::kNotFound) return segments.status();
  if (!segments.ok() || segments->empty()) {
    return NotFound(audit_dir +
                    " holds no journal: there is no key in force to rotate (a controller makes its key "
                    "on its first start)");
  }
  JournalTail tail;
  for (auto segment = segments->rbegin(); segment != segments->rend() && tail.origin.empty(); ++segment) {
    Result<std::string> text = env.ReadFile(segment->second);
    if (!text.ok()) return text.status();
    std::string_view data = *text;
    for (size_t pos = 0, nl; (nl = data.find('\n', pos)) != std::string_view::npos; pos = nl + 1) {
      std::string_view line = data.substr(pos, nl - pos);
      Result<ParsedLine> parsed = ParseRecordLine(line);
      if (!parsed.ok()) continue;
      if (tail.controller.empty() || segment == segments->rbegin()) tail.controller = parsed->header.controller;
      if (parsed->header.kind != "checkpoint" && parsed->header.kind != "key-rotated") continue;
      Result<nlohmann::json> json = RecordJson(line);
      if (!json.ok()) continue;
      if (parsed->header.kind == "key-rotated") {
        Result<KeyRotation> rotation = ParseKeyRotation(*json, "");
        if (rotation.ok() && segment == segments->rbegin()) tail.rotation = std::move(*rotation);
        continue;
      }
      Result<std::optional<MerkleCheckpoint>> checkpoint = ParseMerkleCheckpoint(*json);
      if (checkpoint.ok() && checkpoint->has_value()) tail.origin = (*checkpoint)->checkpoint.origin;
    }
  }
  if (tail.origin.empty()) {
    return FailedPrecondition("the journal in " + audit_dir +
                              " has no signed-note checkpoint: there is no key in force to rotate");
  }
  return tail;
}

// Whether `key` signed the signed note `note_text` as log `origin`.
bool SignedBy(const std::string& note_text, const Signer& key, const std::string& origin) {
  Result<Note> note = ParseNote(note_text);
  Result<SignatureVerifier> public_key = SignatureVerifier::FromPublicKeyRaw(key.PublicKeyRaw());
  if (!note.ok() || !public_key.ok()) return false;
  Result<NoteVerifier> verifier = NoteVerifier::FromPublicKey(origin, *public_key);
  return verifier.ok() && verifier->Verify(*note).ok();
}

// A start cut a torn tail off: journalled first, as a controller's start does.
Status JournalRepair(AuditJournal& journal, const RecoveryInfo& info, KeyRotationReport* report) {
  if (info.truncated_bytes == 0) return Status::Ok();
  Result<uint64_t> seq = journal.Append(JournalRepairedRecord(info.last_seq, info.truncated_bytes, info.quarantined,
                                                              info.first_dropped_seq, info.last_dropped_seq));
  if (!seq.ok()) return seq.status();
  report->repaired_seq = *seq;
  return Status::Ok();
}

// Step 1: the record, under the current key's checkpoint. Returns false (and nothing is
// written) when the journal does not open with the current key but an earlier run wrote
// the rotation to `next` already.
Result<bool> AppendRotation(const KeyRotationOptions& o, JournalOptions jo, const JournalTail& tail,
                            KeyRotationReport* report) {
  jo.signer = o.current;
  RecoveryInfo info;
  Result<std::unique_ptr<AuditJournal>> journal = AuditJournal::Open(jo, &info);
  if (!journal.ok()) {
    const bool ours = tail.rotation && tail.rotation->old_key_id == o.current->key_id() &&
                      tail.rotation->new_key_id == o.next->key_id();
    if (journal.status().code() == StatusCode::kFailedPrecondition && ours) {
      report->rotated_seq = tail.rotation->seq;
      return false;
    }
    return Status(journal.status().code(), "the journal does not open with the current key " + o.current->key_id() +
                                               ": " + journal.status().message());
  }
  GPUFED_RETURN_IF_ERROR(JournalRepair(**journal, info, report));
  Result<uint64_t> seq =
      (*journal)->Append(KeyRotatedRecord(*o.current, *o.next, tail.origin, o.operator_name, o.reason));
  if (!seq.ok()) return seq.status();
  report->rotated_seq = *seq;
  report->old_signed_seq = (*journal)->last_seq();
  GPUFED_RETURN_IF_ERROR((*journal)->Close());
  return true;
}

// Steps 3 and 4, each only when it is not done.
Status InstallFiles(const KeyRotationOptions& o, KeyRotationReport* report) {
  const std::string pub_path = o.audit_dir + "/" + kSigningPubFile;
  Result<std::string> pub = o.env->ReadFile(pub_path);
  Result<SignatureVerifier> existing =
      pub.ok() ? SignatureVerifier::FromPublicKeyPem(*pub) : Result<SignatureVerifier>(pub.status());
  if (!existing.ok() || existing->key_id() != o.next->key_id()) {
    GPUFED_RETURN_IF_ERROR(WriteFileAtomic(*o.env, pub_path, o.next->PublicKeyPem()));
    report->pub_written = true;
  }
  if (o.install_key) {
    // After signing.pub: a crash between the two leaves the old private key beside the new
    // public key, and a start with it is refused with the instruction to run this again.
    const std::string key_path = o.audit_dir + "/" + kSigningKeyFile;
    Result<Signer> installed = Signer::FromPrivateKeyFile(key_path);
    if (!installed.ok() || installed->key_id() != o.next->key_id()) {
      GPUFED_RETURN_IF_ERROR(ReplaceSecretFile(key_path, o.next->PrivateKeyPem()));
      report->key_installed = true;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<KeyRotationReport> RotateJournalKey(const KeyRotationOptions& o) {
  if (o.env == nullptr || o.audit_dir.empty() || o.current == nullptr || o.next == nullptr) {
    return InvalidArgument("a key rotation needs an Env, an audit folder and both keys");
  }
  Result<JournalTail> tail = ReadTail(*o.env, o.audit_dir);
  if (!tail.ok()) return tail.status();
  {
    // The controller must be stopped: its journal's lock, taken the way the journal takes
    // it, so that a running controller is named rather than a key mismatch.
    Result<std::unique_ptr<FileLock>> lock = o.env->LockFile(o.audit_dir + "/journal/LOCK");
    if (!lock.ok()) {
      return FailedPrecondition("the journal in " + o.audit_dir +
                                " is in use (stop the controller first): " + lock.status().message());
    }
  }
  KeyRotationReport report;
  report.origin = tail->origin;
  report.new_vkey = FormatVerifierKey(tail->origin, o.next->PublicKeyRaw());
  JournalOptions jo;
  jo.env = o.env;
  jo.dir = o.audit_dir;
  jo.controller_id = tail->controller;
  jo.log_origin = tail->origin;
  if (o.current->key_id() != o.next->key_id()) {
    Result<bool> appended = AppendRotation(o, jo, *tail, &report);
    if (!appended.ok()) return appended.status();
    report.appended = *appended;
    jo.rotation_from = o.current;
  } else if (tail->rotation && tail->rotation->new_key_id == o.next->key_id()) {
    // Run again after the new key became the current one (step 4 installed it).
    report.rotated_seq = tail->rotation->seq;
  }
  // Step 2, and steps 3-4 under the same lock.
  jo.signer = o.next;
  RecoveryInfo info;
  Result<std::unique_ptr<AuditJournal>> journal = AuditJournal::Open(jo, &info);
  if (!journal.ok()) {
    const std::string done = report.appended ? "the key-rotated record is seq " + std::to_string(report.rotated_seq) +
                                                   ", but the journal does not open with the new key "
                                             : "the journal does not open with the new key ";
    return Status(journal.status().code(), done + o.next->key_id() + ": " + journal.status().message());
  }
  if (info.truncated_bytes > 0) {
    // A crash tore the new key's checkpoint: the repair's commit ends with another.
    GPUFED_RETURN_IF_ERROR(JournalRepair(**journal, info, &report));
    report.new_signed_seq = (*journal)->last_seq();
  } else if (!SignedBy((*journal)->last_checkpoint().note, *o.next, tail->origin)) {
    GPUFED_RETURN_IF_ERROR((*journal)->Countersign());
    report.new_signed_seq = (*journal)->last_seq();
  }
  GPUFED_RETURN_IF_ERROR(InstallFiles(o, &report));
  GPUFED_RETURN_IF_ERROR((*journal)->Close());
  return report;
}

}  // namespace gpufed::audit
