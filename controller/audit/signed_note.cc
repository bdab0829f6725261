#include "controller/audit/signed_note.h"

#include <charconv>
#include <cstdio>

#include "controller/common/base64.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

constexpr std::string_view kEmDash = "\xe2\x80\x94 ";  // U+2014 and a space

std::string KeyIdBytes(uint32_t key_id) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(key_id >> (24 - 8 * i));
  return out;
}

bool ParseDecimal(std::string_view text, uint64_t* out) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Result<NoteSignature> ParseSignatureLine(std::string_view line) {
  if (line.substr(0, kEmDash.size()) != kEmDash) return InvalidArgument("a signature line starts with an em dash");
  line.remove_prefix(kEmDash.size());
  size_t space = line.find(' ');
  if (space == std::string_view::npos) return InvalidArgument("a signature line is '— NAME SIGNATURE'");
  NoteSignature sig;
  sig.name = std::string(line.substr(0, space));
  if (!ValidNoteKeyName(sig.name)) return InvalidArgument("bad key name in a signature line");
  Result<std::string> bytes = Base64Decode(line.substr(space + 1));
  if (!bytes.ok() || bytes->size() < 5) return InvalidArgument("a signature is base64 of a key id and a signature");
  for (int i = 0; i < 4; ++i) sig.key_id = sig.key_id << 8 | static_cast<unsigned char>((*bytes)[i]);
  sig.signature = bytes->substr(4);
  return sig;
}

}  // namespace

std::string CheckpointBody(const LogCheckpoint& checkpoint) {
  std::string body =
      checkpoint.origin + "\n" + std::to_string(checkpoint.size) + "\n" + MerkleHashBase64(checkpoint.root) + "\n";
  for (const std::string& line : checkpoint.extensions) body += line + "\n";
  return body;
}

Result<LogCheckpoint> ParseCheckpointBody(std::string_view body) {
  if (body.empty() || body.back() != '\n') return InvalidArgument("a checkpoint ends with a newline");
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < body.size();) {
    size_t nl = body.find('\n', start);
    lines.push_back(body.substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.size() < 3) return InvalidArgument("a checkpoint has an origin, a tree size and a root hash");
  LogCheckpoint out;
  out.origin = std::string(lines[0]);
  if (out.origin.empty()) return InvalidArgument("checkpoint line 1: the origin is empty");
  if (!ParseDecimal(lines[1], &out.size)) return InvalidArgument("checkpoint line 2: the tree size is not a decimal");
  Result<MerkleHash> root = MerkleHashFromBase64(lines[2]);
  if (!root.ok()) return InvalidArgument("checkpoint line 3: " + root.status().message());
  out.root = *root;
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].empty()) return InvalidArgument("checkpoint line " + std::to_string(i + 1) + " is empty");
    out.extensions.emplace_back(lines[i]);
  }
  return out;
}

Result<Note> ParseNote(std::string_view text) {
  if (text.size() > kMaxNoteBytes) return InvalidArgument("a signed note is over 1 MiB");
  size_t split = text.rfind("\n\n");
  if (split == std::string_view::npos) return InvalidArgument("a signed note has a blank line before its signatures");
  Note note;
  note.body = std::string(text.substr(0, split + 1));
  std::string_view rest = text.substr(split + 2);
  if (rest.empty() || rest.back() != '\n') return InvalidArgument("a signed note ends with a signature line");
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    Result<NoteSignature> sig = ParseSignatureLine(rest.substr(0, nl));
    if (!sig.ok()) return sig.status();
    note.signatures.push_back(std::move(*sig));
    if (note.signatures.size() > kMaxNoteSignatures) return InvalidArgument("a signed note has over 100 signatures");
    rest.remove_prefix(nl + 1);
  }
  return note;
}

std::string FormatNote(const Note& note) {
  std::string out = note.body + "\n";
  for (const NoteSignature& sig : note.signatures) {
    out += std::string(kEmDash) + sig.name + " " + Base64Encode(KeyIdBytes(sig.key_id) + sig.signature) + "\n";
  }
  return out;
}

bool ValidNoteKeyName(std::string_view name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (c <= ' ' || c == '+' || c == 0x7f) return false;
  }
  return true;
}

uint32_t NoteKeyId(std::string_view name, unsigned char type, std::string_view public_key) {
  Sha256 sha;
  sha.Update(name);
  sha.Update("\n");
  sha.Update(std::string_view(reinterpret_cast<const char*>(&type), 1));
  sha.Update(public_key);
  const std::string hex = sha.FinishHex();
  uint32_t id = 0;
  std::from_chars(hex.data(), hex.data() + 8, id, 16);
  return id;
}

std::string NoteKeyIdHex(uint32_t key_id) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", key_id);
  return buf;
}

std::string FormatVerifierKey(std::string_view name, std::string_view public_key, unsigned char type) {
  std::string typed(1, static_cast<char>(type));
  typed += public_key;
  return std::string(name) + "+" + NoteKeyIdHex(NoteKeyId(name, type, public_key)) + "+" + Base64Encode(typed);
}

Result<ParsedVerifierKey> ParseVerifierKey(std::string_view vkey, unsigned char type) {
  size_t first = vkey.find('+');
  size_t second = first == std::string_view::npos ? first : vkey.find('+', first + 1);
  if (second == std::string_view::npos) return InvalidArgument("a verifier key is NAME+KEYID+BASE64KEY");
  ParsedVerifierKey out;
  out.name = std::string(vkey.substr(0, first));
  if (!ValidNoteKeyName(out.name)) return InvalidArgument("verifier key: bad name '" + out.name + "'");
  Result<std::string> typed = Base64Decode(vkey.substr(second + 1));
  if (!typed.ok() || typed->size() != 33 || static_cast<unsigned char>((*typed)[0]) != type) {
    return InvalidArgument(type == kNoteCosignature
                               ? "verifier key: the key is not base64 of 0x04 (cosignature/v1) and an Ed25519 key"
                               : "verifier key: the key is not base64 of 0x01 and an Ed25519 key");
  }
  out.public_key = typed->substr(1);
  out.key_id = NoteKeyId(out.name, type, out.public_key);
  if (vkey.substr(first + 1, second - first - 1) != NoteKeyIdHex(out.key_id)) {
    return InvalidArgument("verifier key: the key id does not match the name and key");
  }
  return out;
}

Result<NoteSigner> NoteSigner::Create(std::string name, const Signer* signer) {
  if (!ValidNoteKeyName(name)) {
    return InvalidArgument("log origin '" + name +
                           "' must be non-empty, without spaces or '+' (a signed-note key name)");
  }
  uint32_t id = NoteKeyId(name, kNoteEd25519, signer->PublicKeyRaw());
  return NoteSigner(std::move(name), signer, id);
}

NoteSignature NoteSigner::Sign(std::string_view body) const { return {name_, key_id_, signer_->SignRaw(body)}; }

std::string NoteSigner::VerifierKey() const { return FormatVerifierKey(name_, signer_->PublicKeyRaw()); }

Result<NoteVerifier> NoteVerifier::FromVerifierKey(std::string_view vkey) {
  Result<ParsedVerifierKey> parsed = ParseVerifierKey(vkey, kNoteEd25519);
  if (!parsed.ok()) return parsed.status();
  Result<SignatureVerifier> key = SignatureVerifier::FromPublicKeyRaw(parsed->public_key);
  if (!key.ok()) return InvalidArgument("verifier key: " + key.status().message());
  return NoteVerifier(std::move(parsed->name), std::move(*key), parsed->key_id);
}

Result<NoteVerifier> NoteVerifier::FromPublicKey(const std::string& name, const SignatureVerifier& key) {
  return FromVerifierKey(FormatVerifierKey(name, key.PublicKeyRaw()));
}

Status NoteVerifier::Verify(const Note& note) const {
  for (const NoteSignature& sig : note.signatures) {
    if (sig.name != name_ || sig.key_id != key_id_) continue;
    if (key_.VerifyRaw(note.body, sig.signature)) return Status::Ok();
    return Status(StatusCode::kDataLoss, "the signature of " + name_ + " does not verify");
  }
  return Status(StatusCode::kDataLoss, "no signature of " + name_ + "+" + NoteKeyIdHex(key_id_));
}

std::string NoteVerifier::VerifierKey() const { return FormatVerifierKey(name_, key_.PublicKeyRaw()); }

}  // namespace gpufed::audit
