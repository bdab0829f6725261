#include "controller/audit/witnessed_check.h"

#include <algorithm>

#include "controller/audit/witness_client.h"

namespace gpufed::audit {

Result<WitnessedReport> CheckWitnessed(Env& env, const std::string& audit_dir, const NoteVerifier& log_key,
                                       const WitnessPolicy& policy, JournalProver& journal) {
  WitnessedReport report;
  for (const CosignatureVerifier& w : policy.witnesses) report.witnesses.push_back({.name = w.name()});
  Result<std::vector<WitnessedFile>> files = ReadWitnessedNotes(env, audit_dir);
  if (!files.ok()) return files.status();
  for (const WitnessedFile& witnessed : *files) {
    const std::string& file = witnessed.file;
    const Result<Note>& note = witnessed.note;
    if (note.status().code() == StatusCode::kResourceExhausted) {  // never read into memory
      for (WitnessedReport::Witness& w : report.witnesses) {
        if (w.problem.empty()) w.problem = file + ": " + note.status().message();
      }
      continue;
    }
    Result<LogCheckpoint> body = note.ok() ? ParseCheckpointBody(note->body) : Result<LogCheckpoint>(note.status());
    for (size_t i = 0; i < policy.witnesses.size(); ++i) {
      WitnessedReport::Witness& out = report.witnesses[i];
      if (!body.ok()) continue;
      Result<uint64_t> cosigned = policy.witnesses[i].Verify(*note);
      if (!cosigned.ok()) {
        if (cosigned.status().code() != StatusCode::kNotFound) out.problem = file + ": " + cosigned.status().message();
        continue;
      }
      if (Status logged = log_key.Verify(*note); !logged.ok()) {
        out.problem = file + ": " + logged.message();
        continue;
      }
      Result<MerkleHash> root = journal.Root(body->size);
      if (!root.ok()) {
        out.mismatch = true;
        out.problem = file + ": it cosigned a tree of " + std::to_string(body->size) +
                      " records; the journal holds fewer (" + root.status().message() + ")";
        continue;
      }
      if (*root != body->root) {
        out.mismatch = true;
        out.problem = file + ": it cosigned root " + MerkleHashBase64(body->root) + " at tree size " +
                      std::to_string(body->size) + "; the journal's root there is " + MerkleHashBase64(*root);
        continue;
      }
      if (body->size >= out.size) {
        out.size = body->size;
        out.timestamp = *cosigned;
      }
    }
  }
  std::vector<uint64_t> sizes;
  for (const WitnessedReport::Witness& w : report.witnesses) {
    sizes.push_back(w.mismatch ? 0 : w.size);
    report.mismatch = report.mismatch || w.mismatch;
  }
  std::sort(sizes.rbegin(), sizes.rend());
  if (policy.quorum > 0 && policy.quorum <= sizes.size()) report.witnessed_size = sizes[policy.quorum - 1];
  return report;
}

}  // namespace gpufed::audit
