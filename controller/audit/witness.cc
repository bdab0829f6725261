#include "controller/audit/witness.h"

#include <nlohmann/json.hpp>

#include "controller/audit/witness_protocol.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

WitnessAnswer Answer(int status, std::string body) {
  if (!body.empty() && body.back() != '\n') body += '\n';
  return WitnessAnswer{.http_status = status, .body = std::move(body)};
}

}  // namespace

Result<std::unique_ptr<Witness>> Witness::Open(const WitnessOptions& options) {
  if (options.env == nullptr || options.signer == nullptr)
    return InvalidArgument("witness: env and signer are required");
  Env& env = *options.env;
  const std::string logs_dir = options.state_dir + "/logs";
  GPUFED_RETURN_IF_ERROR(env.CreateDirs(logs_dir));
  Result<std::unique_ptr<FileLock>> lock = env.LockFile(options.state_dir + "/witness.lock");
  if (!lock.ok()) {
    return FailedPrecondition("witness state " + options.state_dir +
                              " is in use by another witness: " + lock.status().message());
  }
  std::unique_ptr<Witness> witness(new Witness(options, std::move(lock).value()));
  MutexLock hold(witness->mu_);
  for (const std::string& vkey : options.log_vkeys) {
    Result<NoteVerifier> key = NoteVerifier::FromVerifierKey(vkey);
    if (!key.ok()) return InvalidArgument("--log " + vkey + ": " + key.status().message());
    const std::string origin = key->name();
    if (witness->logs_.count(origin) != 0) return InvalidArgument("two log keys for origin " + origin);
    LogState state{.key = std::move(*key), .path = logs_dir + "/" + Sha256Hex(origin) + ".json"};
    if (env.FileExists(state.path)) {
      Result<std::string> text = env.ReadFile(state.path);
      if (!text.ok()) return text.status();
      nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
      Result<MerkleHash> root = j.is_object() && j.value("root", nlohmann::json()).is_string()
                                    ? MerkleHashFromBase64(j["root"].get<std::string>())
                                    : Result<MerkleHash>(InvalidArgument("no root"));
      if (!root.ok() || !j["size"].is_number_unsigned() || j.value("origin", "") != origin) {
        return Status(StatusCode::kDataLoss, "witness state " + state.path + " does not parse; refusing to forget " +
                                                 origin + "'s history (restore it, or retire this witness's key)");
      }
      state.size = j["size"].get<uint64_t>();
      state.root = *root;
    }
    witness->logs_.emplace(origin, std::move(state));
  }
  return witness;
}

uint64_t Witness::CosignedSize(const std::string& origin) const {
  MutexLock hold(mu_);
  auto it = logs_.find(origin);
  return it == logs_.end() ? 0 : it->second.size;
}

Status Witness::Store(const LogState& state, uint64_t size, const MerkleHash& root, const std::string& checkpoint) {
  nlohmann::json j = {
      {"origin", state.key.name()}, {"size", size}, {"root", MerkleHashBase64(root)}, {"checkpoint", checkpoint}};
  return WriteFileAtomic(*options_.env, state.path, j.dump() + "\n");
}

WitnessAnswer Witness::AddCheckpoint(std::string_view body) {
  Result<AddCheckpointRequest> request = ParseAddCheckpoint(body);
  if (!request.ok()) return Answer(400, request.status().message());
  Result<Note> note = ParseNote(request->checkpoint);
  if (!note.ok()) return Answer(400, "checkpoint: " + note.status().message());
  Result<LogCheckpoint> checkpoint = ParseCheckpointBody(note->body);
  if (!checkpoint.ok()) return Answer(400, checkpoint.status().message());

  MutexLock hold(mu_);
  auto it = logs_.find(checkpoint->origin);
  if (it == logs_.end()) return Answer(404, "unknown log origin");
  LogState& log = it->second;
  if (Status signed_by_log = log.key.Verify(*note); !signed_by_log.ok()) {
    return Answer(403, "the checkpoint is not signed by the log's key: " + signed_by_log.message());
  }
  if (request->old_size > checkpoint->size) return Answer(400, "old size is larger than the checkpoint's");
  if (request->old_size != log.size) {
    WitnessAnswer conflict = Answer(409, std::to_string(log.size));
    conflict.content_type = std::string(kTlogSizeContentType);
    return conflict;
  }
  MerkleHasher hasher;
  if (checkpoint->size == 0 && checkpoint->root != hasher.Empty()) {
    return Answer(422, "a tree of size 0 must have the empty tree's root");
  }
  if (log.size > 0) {
    Status consistent =
        VerifyConsistency(log.size, checkpoint->size, log.root, checkpoint->root, request->proof, hasher);
    if (!consistent.ok()) {
      return Answer(422, "the checkpoint is not consistent with size " + std::to_string(log.size) +
                             " cosigned before: " + consistent.message());
    }
  } else if (!request->proof.empty()) {
    return Answer(422, "a first checkpoint needs an empty consistency proof");
  }
  // Stored before the answer: a witness that answered and then lost its state could be
  // shown a second, inconsistent history.
  if (Status stored = Store(log, checkpoint->size, checkpoint->root, request->checkpoint); !stored.ok()) {
    return Answer(503, "the witness could not store its state");
  }
  log.size = checkpoint->size;
  log.root = checkpoint->root;
  const uint64_t now =
      options_.now_seconds ? options_.now_seconds() : static_cast<uint64_t>(options_.env->NowMicros() / 1'000'000);
  Note cosigned{.body = note->body, .signatures = {options_.signer->Sign(note->body, now)}};
  std::string text = FormatNote(cosigned);
  return Answer(200, text.substr(note->body.size() + 1));  // the signature line only
}

}  // namespace gpufed::audit
