#pragma once
// Checkpoints as C2SP signed notes (c2sp.org/signed-note, c2sp.org/tlog-checkpoint), so
// that any transparency-log verifier reads them without gpufed's code:
//
//   <origin>\n<tree size>\n<base64 root hash>\n[extension lines]\n
//   \n
//   — <key name> <base64(4-byte key id || Ed25519 signature)>\n
//
// The key id is the first 4 bytes of SHA-256(key name || '\n' || 0x01 || public key). A
// verifier key is written `<name>+<8 hex key id>+<base64(0x01 || public key)>`.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/merkle.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

inline constexpr unsigned char kNoteEd25519 = 0x01;      // signed-note's Ed25519 type
inline constexpr unsigned char kNoteCosignature = 0x04;  // tlog-cosignature's cosignature/v1
inline constexpr size_t kMaxNoteBytes = 1 << 20;
inline constexpr size_t kMaxNoteSignatures = 100;

// A tlog-checkpoint body.
struct LogCheckpoint {
  std::string origin;
  uint64_t size = 0;
  MerkleHash root{};
  std::vector<std::string> extensions;  // lines after the root, without newlines
};
std::string CheckpointBody(const LogCheckpoint& checkpoint);
// InvalidArgument naming the line that is not a checkpoint's.
Result<LogCheckpoint> ParseCheckpointBody(std::string_view body);

struct NoteSignature {
  std::string name;
  uint32_t key_id = 0;
  std::string signature;  // the bytes after the key id
};
struct Note {
  std::string body;  // up to and including its last newline
  std::vector<NoteSignature> signatures;
};
// The whole text; InvalidArgument for anything the spec does not allow (no blank line
// before the signatures, a signature line without the em dash, a bad name or base64,
// more than kMaxNoteSignatures, over kMaxNoteBytes).
Result<Note> ParseNote(std::string_view text);
std::string FormatNote(const Note& note);

// A key name: non-empty, no whitespace and no '+' (signed-note).
bool ValidNoteKeyName(std::string_view name);
uint32_t NoteKeyId(std::string_view name, unsigned char type, std::string_view public_key);

// Signs note bodies with the journal's Ed25519 key under one name (the log's origin).
class NoteSigner {
 public:
  // InvalidArgument for a name signed-note does not allow. `signer` must outlive this.
  static Result<NoteSigner> Create(std::string name, const Signer* signer);
  NoteSignature Sign(std::string_view body) const;
  const std::string& name() const { return name_; }
  uint32_t key_id() const { return key_id_; }
  std::string VerifierKey() const;

 private:
  NoteSigner(std::string name, const Signer* signer, uint32_t key_id)
      : name_(std::move(name)), signer_(signer), key_id_(key_id) {}
  std::string name_;
  const Signer* signer_;
  uint32_t key_id_;
};

class NoteVerifier {
 public:
  // `<name>+<8 hex>+<base64(0x01 || 32-byte key)>`; InvalidArgument naming the part.
  static Result<NoteVerifier> FromVerifierKey(std::string_view vkey);
  static Result<NoteVerifier> FromPublicKey(const std::string& name, const SignatureVerifier& key);
  // OK when a signature line of this key's name and id verifies over the body;
  // DataLoss saying whether it is missing or bad. Other keys' lines are ignored.
  Status Verify(const Note& note) const;
  const std::string& name() const { return name_; }
  uint32_t key_id() const { return key_id_; }
  std::string VerifierKey() const;

 private:
  NoteVerifier(std::string name, SignatureVerifier key, uint32_t key_id)
      : name_(std::move(name)), key_(std::move(key)), key_id_(key_id) {}
  std::string name_;
  SignatureVerifier key_;
  uint32_t key_id_;
};

// `<name>+<8 hex key id>+<base64(type || public key)>`: 0x01 for a log's key, 0x04 for a
// witness's (tlog-cosignature).
std::string FormatVerifierKey(std::string_view name, std::string_view public_key, unsigned char type = kNoteEd25519);
struct ParsedVerifierKey {
  std::string name;
  std::string public_key;  // 32 raw bytes
  uint32_t key_id = 0;
};
// InvalidArgument naming the part that is wrong (the name, the type, the key, the id).
Result<ParsedVerifierKey> ParseVerifierKey(std::string_view vkey, unsigned char type);
std::string NoteKeyIdHex(uint32_t key_id);

}  // namespace gpufed::audit
