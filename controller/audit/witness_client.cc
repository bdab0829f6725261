#include "controller/audit/witness_client.h"

#include <algorithm>

#include "controller/audit/sinks/tls_util.h"
#include "controller/audit/witness_protocol.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

// A witness's answer text for a message: bounded and printable.
std::string Said(const HttpsAnswer& answer) { return ReceiverText(answer.body, 300); }

}  // namespace

std::string WitnessedNotePath(const std::string& audit_dir, const std::string& witness_key_name) {
  return audit_dir + "/" + kWitnessedDir + "/" + Sha256Hex(witness_key_name).substr(0, 16) + ".note";
}

Result<std::vector<WitnessedFile>> ReadWitnessedNotes(Env& env, const std::string& audit_dir) {
  // One file per witness a repository names; more than this is not a controller's folder.
  constexpr size_t kMaxWitnessedFiles = 256;
  const std::string dir = audit_dir + "/" + kWitnessedDir;
  std::vector<WitnessedFile> notes;
  if (!env.FileExists(dir)) return notes;
  Result<std::vector<std::string>> listed = env.ListDir(dir);
  if (!listed.ok()) return listed.status();
  std::vector<std::string> files;
  for (std::string& file : *listed) {
    if (file.size() > 5 && file.ends_with(".note")) files.push_back(std::move(file));
  }
  std::sort(files.begin(), files.end());
  if (files.size() > kMaxWitnessedFiles) files.resize(kMaxWitnessedFiles);
  for (std::string& file : files) {
    std::string path = dir;
    path.append("/").append(file);
    Result<uint64_t> size = env.FileSize(path);
    if (!size.ok()) return size.status();
    if (*size > kMaxNoteBytes) {
      notes.push_back(
          {std::move(file), Status(StatusCode::kResourceExhausted, "over 1 MiB, not a cosigned checkpoint")});
      continue;
    }
    Result<std::string> text = env.ReadFile(path);
    if (!text.ok()) return text.status();
    notes.push_back({std::move(file), ParseNote(*text)});
  }
  return notes;
}

Result<std::unique_ptr<WitnessClient>> WitnessClient::Create(WitnessClientOptions options) {
  if (options.env == nullptr) return InvalidArgument("witness client: env is required");
  Result<CosignatureVerifier> verifier = CosignatureVerifier::FromVerifierKey(options.vkey);
  if (!verifier.ok()) return verifier.status();
  while (!options.https.url.empty() && options.https.url.back() == '/') options.https.url.pop_back();
  options.https.url += "/add-checkpoint";
  std::unique_ptr<WitnessClient> client(new WitnessClient(std::move(options), std::move(*verifier)));
  Env& env = *client->options_.env;
  const std::string path = WitnessedNotePath(client->options_.audit_dir, client->verifier_.name());
  Result<uint64_t> size = env.FileExists(path) ? env.FileSize(path) : Result<uint64_t>(NotFound(path));
  // A cosigned note is under kMaxNoteBytes; a larger file in the state folder is not one.
  if (size.ok() && *size <= kMaxNoteBytes) {
    // A file that does not hold this witness's valid cosignature is ignored: the client
    // starts from size 0 and learns the witness's size from its 409.
    Result<std::string> text = env.ReadFile(path);
    Result<Note> note = text.ok() ? ParseNote(*text) : Result<Note>(text.status());
    Result<LogCheckpoint> body = note.ok() ? ParseCheckpointBody(note->body) : Result<LogCheckpoint>(note.status());
    Result<uint64_t> timestamp = body.ok() ? client->verifier_.Verify(*note) : Result<uint64_t>(body.status());
    if (timestamp.ok()) {
      client->newest_ = CosignedCheckpoint{.size = body->size, .timestamp = *timestamp, .note = *text};
      client->witness_size_ = body->size;
    }
  }
  return client;
}

Result<CosignedCheckpoint> WitnessClient::Cosign(const std::string& checkpoint, NodeSource& tree) {
  Result<Note> note = ParseNote(checkpoint);
  if (!note.ok()) return note.status();
  Result<LogCheckpoint> body = ParseCheckpointBody(note->body);
  if (!body.ok()) return body.status();
  if (newest_ && newest_->size >= body->size && newest_->note.rfind(note->body, 0) == 0) return *newest_;
  if (!poster_.connected()) GPUFED_RETURN_IF_ERROR(poster_.Connect());
  const std::string who = "witness " + verifier_.name() + " (" + options_.https.url + ")";
  MerkleHasher hasher;
  // At most three rounds: a 409 teaches the size the witness holds, once; another 409
  // means it moved meanwhile (another log instance?) and is worth a retry later.
  for (int round = 0; round < 3; ++round) {
    AddCheckpointRequest request{.old_size = witness_size_, .checkpoint = checkpoint};
    if (witness_size_ > body->size) {
      return Status(StatusCode::kDataLoss, who + " holds a tree of " + std::to_string(witness_size_) +
                                               " records, larger than this journal's " + std::to_string(body->size) +
                                               ": the history it cosigned is not this one");
    }
    if (witness_size_ > 0 && witness_size_ < body->size) {
      Result<std::vector<MerkleHash>> proof = ConsistencyProof(witness_size_, body->size, tree, hasher);
      if (!proof.ok()) return Unavailable("consistency proof for " + who + ": " + proof.status().message());
      request.proof = std::move(*proof);
    }
    Result<HttpsAnswer> answer =
        poster_.Post(EncodeAddCheckpoint(request), {"Content-Type: text/plain; charset=utf-8"});
    if (!answer.ok()) {
      poster_.Disconnect();
      return answer.status();
    }
    switch (answer->code) {
      case 200: {
        Result<Note> cosigs = ParseNote(note->body + "\n" + answer->body);
        if (!cosigs.ok()) return FailedPrecondition(who + " answered 200 without cosignature lines: " + Said(*answer));
        Note cosigned = *note;
        for (NoteSignature& sig : cosigs->signatures) cosigned.signatures.push_back(std::move(sig));
        Result<uint64_t> timestamp = verifier_.Verify(cosigned);
        if (!timestamp.ok()) return FailedPrecondition(who + ": " + timestamp.status().message());
        CosignedCheckpoint out{.size = body->size, .timestamp = *timestamp, .note = FormatNote(cosigned)};
        GPUFED_RETURN_IF_ERROR(options_.env->CreateDirs(options_.audit_dir + "/" + kWitnessedDir));
        GPUFED_RETURN_IF_ERROR(
            WriteFileAtomic(*options_.env, WitnessedNotePath(options_.audit_dir, verifier_.name()), out.note));
        witness_size_ = body->size;
        newest_ = out;
        return out;
      }
      case 409: {
        Result<uint64_t> size = ParseTlogSize(answer->body);
        if (!size.ok()) return FailedPrecondition(who + " answered 409 without a tree size: " + Said(*answer));
        witness_size_ = *size;
        continue;
      }
      case 422:
        return Status(StatusCode::kDataLoss,
                      who + " refuses the checkpoint of size " + std::to_string(body->size) + ": " + Said(*answer));
      default:
        if (answer->code >= 500 || answer->code == 408 || answer->code == 429) {
          return Unavailable(who + ": HTTP " + std::to_string(answer->code) + " " + Said(*answer));
        }
        return FailedPrecondition(who + ": HTTP " + std::to_string(answer->code) + " " + Said(*answer));
    }
  }
  return Unavailable(who + " kept answering 409 (its tree size changes under us)");
}

}  // namespace gpufed::audit
