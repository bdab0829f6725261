#include "controller/audit/witnessed_check.h"

#include <algorithm>

#include "controller/audit/witness_client.h"

namespace gpufed::audit {

Result<WitnessedReport> CheckWitnessed(Env& env, const std::string& audit_dir, const NoteVerifier& log_key,
                                       const WitnessPolicy& policy, JournalProver& journal) {
  WitnessedReport report;
  for (const CosignatureVerifier& w : policy.witnesses) report.witnesses.push_back({.name = w.name()});
  const std::string dir = audit_dir + "/" + kWitnessedDir;
  std::vector<std::string> files;
  if (env.FileExists(dir)) {
    Result<std::vector<std::string>> listed = env.ListDir(dir);
    if (!listed.ok()) return listed.status();
    files = std::move(*listed);
  }
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    if (file.size() < 5 || file.substr(file.size() - 5) != ".note") continue;
    std::string path = dir;
    path += "/";
    path += file;
    Result<uint64_t> size = env.FileSize(path);
    if (!size.ok()) return size.status();
    if (*size > kMaxNoteBytes) {  // not a cosigned note: never read whole into memory
      for (WitnessedReport::Witness& w : report.witnesses) {
        if (w.problem.empty()) w.problem = file + ": over 1 MiB, not a cosigned checkpoint";
      }
      continue;
    }
    Result<std::string> text = env.ReadFile(path);
    if (!text.ok()) return text.status();
    Result<Note> note = ParseNote(*text);
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
