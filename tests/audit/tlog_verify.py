#!/usr/bin/env python3
"""An independent verifier for gpufed's transparency log, written from the public
specifications only (not from gpufed's code):

* RFC 9162, sections 2.1.1 (Merkle Tree Hash), 2.1.3.1/2.1.3.2 (inclusion proofs),
  2.1.4.2 (consistency proofs);
* C2SP signed-note (note format, key IDs, Ed25519 type 0x01, verifier keys),
  C2SP tlog-checkpoint (note body), C2SP tlog-cosignature (cosignature/v1, type 0x04),
  C2SP tlog-tiles (hash tiles, entry bundles, paths, partial tiles).

Leaves are journal records: one line of ASCII JSON without its newline; leaf index =
seq - 1.

Usage (exit 0 = verified, 1 = verification failed, 2 = usage or I/O error):

  tlog_verify.py --vkey VKEY [--origin O] checkpoint FILE
  tlog_verify.py --vkey VKEY [--origin O] inclusion PROOF.json [--checkpoint FILE]
  tlog_verify.py --vkey VKEY [--origin O] consistency PROOF.json [--old FILE] [--new FILE]
  tlog_verify.py --vkey VKEY [--origin O] tiles BASE [--token-file F] [--cacert F]
                 [--entries] [--all-tiles] [--prove SEQ ...]

--vkey, --origin, --witness-vkey VKEY (repeatable) and --require-witnesses K are accepted
before or after the command and apply to every checkpoint the command reads. A VKEY
argument of the form @FILE is read from FILE.
"""
from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import http.client
import json
import os
import ssl
import sys
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass, field

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
except ImportError:  # pragma: no cover - reported as a usage error by main()
    Ed25519PublicKey = None
    InvalidSignature = Exception

EXIT_VERIFIED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

HASH_SIZE = 32
TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT                  # 256 hashes in a full tile
MAX_TILE_BYTES = TILE_WIDTH * HASH_SIZE        # 8,192 bytes
MAX_BUNDLE_ENTRIES = TILE_WIDTH
MAX_ENTRY_BYTES = 0xFFFF                       # uint16 length prefix
MAX_BUNDLE_BYTES = MAX_BUNDLE_ENTRIES * (2 + MAX_ENTRY_BYTES)
MAX_NOTE_BYTES = 1 << 20
MAX_PROOF_FILE_BYTES = 4 << 20
MAX_TREE_SIZE = (1 << 64) - 1                  # tree sizes are uint64
MAX_PROOF_HASHES = 130                         # > any RFC 9162 proof for a uint64 tree
MAX_GZIP_OVERHEAD = 64 << 10
HTTP_TIMEOUT_SECONDS = 30

SIG_TYPE_ED25519 = 0x01                        # C2SP signed-note
SIG_TYPE_COSIGNATURE_V1 = 0x04                 # C2SP tlog-cosignature
ED25519_SIG_SIZE = 64
COSIG_TIMESTAMP_SIZE = 8
EM_DASH_SPACE = "\u2014 ".encode("utf-8")


class VerifyFailed(Exception):
    """The evidence does not verify (exit 1)."""


class UsageError(Exception):
    """Bad arguments, unreadable files, network errors (exit 2)."""


class FetchError(UsageError):
    """A resource could not be fetched."""


class NotFound(FetchError):
    """The resource does not exist (HTTP 404/410, or no such file)."""


# ---------------------------------------------------------------------------
# RFC 9162 section 2.1: Merkle tree hashing and proof verification
# ---------------------------------------------------------------------------

def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


EMPTY_TREE_ROOT = sha256(b"")  # RFC 9162 2.1.1: MTH({}) = HASH()


def leaf_hash(data: bytes) -> bytes:
    """RFC 9162 2.1.1: MTH({d(0)}) = HASH(0x00 || d(0))."""
    return sha256(b"\x00" + data)


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 9162 2.1.1: interior node = HASH(0x01 || left || right)."""
    return sha256(b"\x01" + left + right)


def split_point(n: int) -> int:
    """RFC 9162 2.1.1: k, the largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def perfect_root(hashes: list[bytes]) -> bytes:
    """MTH of a power-of-two number of subtree hashes (RFC 9162 2.1.1 with every split
    exactly in half)."""
    if not hashes or len(hashes) & (len(hashes) - 1):
        raise ValueError("perfect_root needs a power-of-two number of hashes")
    while len(hashes) > 1:
        hashes = [node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]


def verify_inclusion(leaf_index: int, tree_size: int, leaf: bytes,
                     path: list[bytes], root: bytes) -> None:
    """RFC 9162 2.1.3.2, step by step. Raises VerifyFailed."""
    if leaf_index >= tree_size:                                    # step 1
        raise VerifyFailed(f"inclusion: leaf index {leaf_index} is not below "
                           f"tree size {tree_size}")
    fn, sn = leaf_index, tree_size - 1                             # step 2
    r = leaf                                                       # step 3
    for p in path:                                                 # step 4
        if sn == 0:                                                # 4a
            raise VerifyFailed("inclusion: proof has too many hashes")
        if fn & 1 or fn == sn:                                     # 4b
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1                                                   # 4c
        sn >>= 1
    if sn != 0:                                                    # step 5
        raise VerifyFailed("inclusion: proof has too few hashes")
    if r != root:
        raise VerifyFailed("inclusion: computed root differs from the tree head's root")


def verify_consistency(first: int, second: int, first_hash: bytes, second_hash: bytes,
                       path: list[bytes]) -> None:
    """RFC 9162 2.1.4.2 for 0 < first < second; first == second and first == 0 have
    empty proofs (RFC 9162 2.1.4.1 defines proofs only for 0 < m < n). Raises
    VerifyFailed."""
    if first > second:
        raise VerifyFailed(f"consistency: first size {first} exceeds second size {second}")
    for size, root, what in ((first, first_hash, "first"), (second, second_hash, "second")):
        if size == 0 and root != EMPTY_TREE_ROOT:
            raise VerifyFailed(f"consistency: {what} tree is empty but its root is not "
                               "SHA-256 of the empty string")
    if first == second or first == 0:
        if path:
            raise VerifyFailed("consistency: proof must be empty when the first tree is "
                               "empty or equal to the second")
        if first == second and first_hash != second_hash:
            raise VerifyFailed("consistency: equal sizes but different roots")
        return
    if not path:                                                   # step 1
        raise VerifyFailed("consistency: empty proof")
    path = list(path)
    if first & (first - 1) == 0:                                   # step 2
        path.insert(0, first_hash)
    fn, sn = first - 1, second - 1                                 # step 3
    while fn & 1:                                                  # step 4
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]                                              # step 5
    for c in path[1:]:                                             # step 6
        if sn == 0:                                                # 6a
            raise VerifyFailed("consistency: proof has too many hashes")
        if fn & 1 or fn == sn:                                     # 6b
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1                                                   # 6c
        sn >>= 1
    if sn != 0:                                                    # step 7
        raise VerifyFailed("consistency: proof has too few hashes")
    if fr != first_hash:
        raise VerifyFailed("consistency: computed first root differs from fromRoot")
    if sr != second_hash:
        raise VerifyFailed("consistency: computed second root differs from toRoot")


# ---------------------------------------------------------------------------
# Encodings shared by the specs
# ---------------------------------------------------------------------------

def b64decode_strict(text: str, what: str) -> bytes:
    """Standard base64 (RFC 4648 section 4), padded and canonical."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise VerifyFailed(f"{what}: not standard base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise VerifyFailed(f"{what}: non-canonical base64")
    return raw


def decode_hash(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise VerifyFailed(f"{what}: not a base64 string")
    raw = b64decode_strict(text, what)
    if len(raw) != HASH_SIZE:
        raise VerifyFailed(f"{what}: {len(raw)} bytes, not {HASH_SIZE}")
    return raw


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def check_record(record: bytes, seq: int) -> None:
    """gpufed's leaf data: one line of ASCII JSON (no newline), an object whose `seq`
    member is the leaf index + 1."""
    if b"\n" in record:
        raise VerifyFailed(f"record seq {seq}: contains a newline")
    try:
        text = record.decode("ascii")
    except UnicodeDecodeError:
        raise VerifyFailed(f"record seq {seq}: not ASCII") from None

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate member")
        return dict(pairs)

    try:
        obj = json.loads(text, object_pairs_hook=no_duplicates)
    except ValueError:
        raise VerifyFailed(f"record seq {seq}: not a JSON object") from None
    if not isinstance(obj, dict):
        raise VerifyFailed(f"record seq {seq}: not a JSON object")
    got = obj.get("seq")
    if type(got) is not int or got != seq:
        raise VerifyFailed(f"record at leaf index {seq - 1} has seq {got!r}, not {seq}")


# ---------------------------------------------------------------------------
# C2SP signed-note: verifier keys, note parsing, signatures
# ---------------------------------------------------------------------------

def key_id(name: str, sig_type: int, public_key: bytes) -> bytes:
    """signed-note: key ID = SHA-256(key name || 0x0A || type || public key)[:4]."""
    return sha256(name.encode("utf-8") + b"\n" + bytes([sig_type]) + public_key)[:4]


def valid_key_name(name: str) -> bool:
    """signed-note: non-empty, no Unicode spaces, no '+'."""
    return bool(name) and "+" not in name and not any(ch.isspace() for ch in name)


@dataclass(frozen=True)
class VerifierKey:
    """A signed-note verifier key: <name>+<8 hex key ID>+<base64(type || key)>."""
    name: str
    key_id: bytes
    sig_type: int
    public_key: bytes

    def verify(self, signature: bytes, message: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
            return True
        except InvalidSignature:
            return False


def parse_vkey(text: str, sig_type: int, what: str) -> VerifierKey:
    """Parses a verifier key of the given signature type (0x01 log key, 0x04 witness
    key). Its key ID must be the one the specs define for that type."""
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as f:
                text = f.read(64 << 10).strip()
        except OSError as e:
            raise UsageError(f"{what}: cannot read {text[1:]}: {e.strerror}") from None
    parts = text.split("+", 2)  # the name and ID hold no '+'; the base64 may
    if len(parts) != 3:
        raise UsageError(f"{what}: not of the form <name>+<hex key id>+<base64 key>")
    name, hex_id, key_b64 = parts
    if not valid_key_name(name):
        raise UsageError(f"{what}: invalid key name {name!r}")
    if len(hex_id) != 8 or any(c not in "0123456789abcdefABCDEF" for c in hex_id):
        raise UsageError(f"{what}: key id must be 8 hex digits")
    try:
        raw = b64decode_strict(key_b64, what)
    except VerifyFailed as e:
        raise UsageError(str(e)) from None
    if len(raw) != 1 + 32 or raw[0] != sig_type:
        raise UsageError(f"{what}: expected signature type 0x{sig_type:02x} and a 32-byte "
                         "Ed25519 public key")
    public_key = raw[1:]
    kid = bytes.fromhex(hex_id)
    if kid != key_id(name, sig_type, public_key):
        raise UsageError(f"{what}: key id {hex_id} does not match the key "
                         f"(expected {key_id(name, sig_type, public_key).hex()})")
    try:
        Ed25519PublicKey.from_public_bytes(public_key)
    except ValueError:
        raise UsageError(f"{what}: invalid Ed25519 public key") from None
    return VerifierKey(name, kid, sig_type, public_key)


@dataclass
class NoteSignature:
    name: str
    key_id: bytes
    signature: bytes  # the bytes after the 4-byte key ID


@dataclass
class SignedNote:
    text: bytes  # the signed note text, including its final newline
    signatures: list[NoteSignature]


def parse_signed_note(data: bytes, what: str) -> SignedNote:
    """C2SP signed-note "Format": UTF-8 without control characters other than newline;
    text ending in newline, a blank line (the last one in the note), then one or more
    lines `— <key name> <base64(key ID || signature)>`."""
    if len(data) > MAX_NOTE_BYTES:
        raise VerifyFailed(f"{what}: note larger than {MAX_NOTE_BYTES} bytes")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise VerifyFailed(f"{what}: note is not valid UTF-8") from None
    if any(b < 0x20 and b != 0x0A for b in data):
        raise VerifyFailed(f"{what}: note contains a control character")
    sep = data.rfind(b"\n\n")
    if sep < 0:
        raise VerifyFailed(f"{what}: note has no blank line before its signatures")
    text, sig_block = data[:sep + 1], data[sep + 2:]
    if not sig_block or not sig_block.endswith(b"\n"):
        raise VerifyFailed(f"{what}: note has no signature lines, or does not end in newline")
    signatures = [parse_signature_line(line, what) for line in sig_block[:-1].split(b"\n")]
    return SignedNote(text, signatures)


def parse_signature_line(line: bytes, what: str) -> NoteSignature:
    """signed-note "Signatures": em dash, space, key name, space, base64(4+n bytes)."""
    if not line.startswith(EM_DASH_SPACE):
        raise VerifyFailed(f"{what}: malformed signature line")
    parts = line[len(EM_DASH_SPACE):].decode("utf-8").split(" ")
    if len(parts) != 2 or not valid_key_name(parts[0]):
        raise VerifyFailed(f"{what}: malformed signature line")
    raw = b64decode_strict(parts[1], f"{what}: signature of {parts[0]}")
    if len(raw) < 5:
        raise VerifyFailed(f"{what}: signature of {parts[0]} too short")
    return NoteSignature(parts[0], raw[:4], raw[4:])


def matching_signatures(note: SignedNote, key: VerifierKey) -> list[NoteSignature]:
    """signed-note: a signature belongs to a known key only if both name and ID match;
    all others are ignored."""
    return [s for s in note.signatures if s.name == key.name and s.key_id == key.key_id]


def verify_log_signature(note: SignedNote, key: VerifierKey, what: str) -> None:
    """signed-note "Ed25519 signatures" over the note text. Every signature by the log
    key must verify and there must be at least one."""
    sigs = matching_signatures(note, key)
    if not sigs:
        raise VerifyFailed(f"{what}: no signature by the log key {key.name} "
                           f"({key.key_id.hex()})")
    for s in sigs:
        if len(s.signature) != ED25519_SIG_SIZE or not key.verify(s.signature, note.text):
            raise VerifyFailed(f"{what}: the log key's signature does not verify")


def count_cosignatures(note: SignedNote, witnesses: list[VerifierKey], what: str) -> int:
    """C2SP tlog-cosignature, Ed25519 (type 0x04): signature = timestamp (uint64 BE) ||
    Ed25519 over "cosignature/v1\\ntime <timestamp>\\n" || note text. Returns the number of
    distinct witness keys with a valid cosignature; a bad one from a known key fails."""
    count = 0
    for key in witnesses:
        sigs = matching_signatures(note, key)
        for s in sigs:
            if len(s.signature) != COSIG_TIMESTAMP_SIZE + ED25519_SIG_SIZE:
                raise VerifyFailed(f"{what}: cosignature of {key.name} has the wrong length")
            timestamp = int.from_bytes(s.signature[:COSIG_TIMESTAMP_SIZE], "big")
            if timestamp >= 1 << 63:
                raise VerifyFailed(f"{what}: cosignature of {key.name}: timestamp too large")
            message = b"cosignature/v1\ntime %d\n" % timestamp + note.text
            if not key.verify(s.signature[COSIG_TIMESTAMP_SIZE:], message):
                raise VerifyFailed(f"{what}: cosignature of {key.name} does not verify")
        if sigs:
            count += 1
    return count


# ---------------------------------------------------------------------------
# C2SP tlog-checkpoint
# ---------------------------------------------------------------------------

@dataclass
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: list[str]
    cosignatures: int = 0


def parse_checkpoint_body(text: bytes, what: str) -> Checkpoint:
    """tlog-checkpoint "Note text": origin, tree size (decimal, no leading zeros),
    base64 root hash, then optional non-empty extension lines."""
    lines = text.decode("utf-8")[:-1].split("\n")
    if len(lines) < 3:
        raise VerifyFailed(f"{what}: checkpoint body has fewer than three lines")
    origin, size_text, root_text, extensions = lines[0], lines[1], lines[2], lines[3:]
    if not origin:
        raise VerifyFailed(f"{what}: empty origin line")
    if not size_text.isascii() or not size_text.isdigit() or \
            (size_text != "0" and size_text.startswith("0")):
        raise VerifyFailed(f"{what}: tree size {size_text!r} is not a canonical decimal")
    size = int(size_text)
    if size > MAX_TREE_SIZE:
        raise VerifyFailed(f"{what}: tree size exceeds 2^64-1")
    root = decode_hash(root_text, f"{what}: root hash")
    if any(not line for line in extensions):
        raise VerifyFailed(f"{what}: empty extension line")
    if size == 0 and root != EMPTY_TREE_ROOT:
        raise VerifyFailed(f"{what}: empty tree whose root is not SHA-256 of the empty string")
    return Checkpoint(origin, size, root, extensions)


@dataclass
class Trust:
    """What the verifier trusts: the log key, the expected origin, the witnesses."""
    log_key: VerifierKey
    origin: str | None = None
    witnesses: list[VerifierKey] = field(default_factory=list)
    required_witnesses: int = 0

    def open_checkpoint(self, data: bytes, what: str) -> Checkpoint:
        """Verifies the note's log signature (and witness quorum) before reading its
        body, as signed-note requires, then parses and checks the checkpoint."""
        note = parse_signed_note(data, what)
        verify_log_signature(note, self.log_key, what)
        cosigs = count_cosignatures(note, self.witnesses, what)
        if cosigs < self.required_witnesses:
            raise VerifyFailed(f"{what}: {cosigs} valid witness cosignature(s), "
                               f"{self.required_witnesses} required")
        cp = parse_checkpoint_body(note.text, what)
        if self.origin is not None and cp.origin != self.origin:
            raise VerifyFailed(f"{what}: origin {cp.origin!r}, expected {self.origin!r}")
        cp.cosignatures = cosigs
        return cp


# ---------------------------------------------------------------------------
# Input files
# ---------------------------------------------------------------------------

def read_file(path: str, limit: int, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise UsageError(f"{what}: cannot read {path}: {e.strerror}") from None
    if len(data) > limit:
        raise VerifyFailed(f"{what}: {path} is larger than {limit} bytes")
    return data


def load_proof(path: str, expected_type: str) -> dict:
    data = read_file(path, MAX_PROOF_FILE_BYTES, "proof")
    try:
        proof = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise VerifyFailed(f"proof {path}: not JSON") from None
    if not isinstance(proof, dict):
        raise VerifyFailed(f"proof {path}: not a JSON object")
    if proof.get("type") != expected_type:
        raise UsageError(f"proof {path}: type {proof.get('type')!r}, this command "
                         f"verifies {expected_type!r}")
    return proof


def proof_int(proof: dict, name: str) -> int:
    value = proof.get(name)
    if type(value) is not int or not 0 <= value <= MAX_TREE_SIZE:
        raise VerifyFailed(f"proof: {name} is not an integer in 0..2^64-1")
    return value


def proof_hashes(proof: dict) -> list[bytes]:
    hashes = proof.get("proof")
    if not isinstance(hashes, list) or len(hashes) > MAX_PROOF_HASHES:
        raise VerifyFailed("proof: `proof` is not a list of at most "
                           f"{MAX_PROOF_HASHES} hashes")
    return [decode_hash(h, f"proof hash {i}") for i, h in enumerate(hashes)]


def embedded_checkpoint(proof: dict) -> bytes | None:
    note = proof.get("checkpoint")
    if note is None:
        return None
    if not isinstance(note, str):
        raise VerifyFailed("proof: `checkpoint` is not a string")
    return note.encode("utf-8")


def checkpoint_source(path: str | None, proof: dict, what: str) -> tuple[bytes | None, str]:
    if path is not None:
        return read_file(path, MAX_NOTE_BYTES, what), f"{what} {path}"
    return embedded_checkpoint(proof), f"{what} (embedded)"


# ---------------------------------------------------------------------------
# Commands: checkpoint, inclusion, consistency
# ---------------------------------------------------------------------------

def cmd_checkpoint(args, trust: Trust) -> int:
    cp = trust.open_checkpoint(read_file(args.file, MAX_NOTE_BYTES, "checkpoint"),
                               f"checkpoint {args.file}")
    print(f"size={cp.size} root={b64(cp.root)}")
    return EXIT_VERIFIED


def cmd_inclusion(args, trust: Trust) -> int:
    proof = load_proof(args.proof, "inclusion")
    seq = proof_int(proof, "seq")
    index = proof_int(proof, "leafIndex")
    size = proof_int(proof, "treeSize")
    if seq < 1 or index != seq - 1:
        raise VerifyFailed(f"proof: leafIndex {index} is not seq - 1 (seq {seq})")
    record = proof.get("record")
    if not isinstance(record, str):
        raise VerifyFailed("proof: `record` is not a string")
    record_bytes = record.encode("utf-8")
    if len(record_bytes) > MAX_ENTRY_BYTES:
        raise VerifyFailed(f"proof: record longer than {MAX_ENTRY_BYTES} bytes")
    check_record(record_bytes, seq)
    path = proof_hashes(proof)
    note, what = checkpoint_source(args.checkpoint, proof, "checkpoint")
    if note is None:
        raise UsageError("the proof carries no checkpoint: give --checkpoint FILE")
    cp = trust.open_checkpoint(note, what)
    if cp.size != size:
        raise VerifyFailed(f"{what}: size {cp.size}, the proof is for tree size {size}")
    verify_inclusion(index, size, leaf_hash(record_bytes), path, cp.root)
    print(f"verified inclusion seq={seq} size={size} root={b64(cp.root)}")
    return EXIT_VERIFIED


def cmd_consistency(args, trust: Trust) -> int:
    proof = load_proof(args.proof, "consistency")
    first, second = proof_int(proof, "fromSize"), proof_int(proof, "toSize")
    first_root = decode_hash(proof.get("fromRoot"), "proof: fromRoot")
    second_root = decode_hash(proof.get("toRoot"), "proof: toRoot")
    path = proof_hashes(proof)
    origins = []
    unauthenticated = []
    for path_arg, embedded_ok, size, root, label in (
            (args.old, False, first, first_root, "old"),
            (args.new, True, second, second_root, "new")):
        if path_arg is not None:
            note, what = read_file(path_arg, MAX_NOTE_BYTES, f"{label} checkpoint"), \
                f"{label} checkpoint {path_arg}"
        elif embedded_ok:
            note, what = embedded_checkpoint(proof), "checkpoint (embedded)"
        else:
            note, what = None, ""
        if note is None:
            unauthenticated.append(label)
            continue
        cp = trust.open_checkpoint(note, what)
        if cp.size != size or cp.root != root:
            raise VerifyFailed(f"{what}: signs size {cp.size} root {b64(cp.root)}, the proof "
                               f"is for size {size} root {b64(root)}")
        origins.append(cp.origin)
    if len(origins) == 2 and origins[0] != origins[1]:
        raise VerifyFailed(f"old and new checkpoints have different origins "
                           f"({origins[0]!r}, {origins[1]!r})")
    verify_consistency(first, second, first_root, second_root, path)
    for label in unauthenticated:
        print(f"note: the {label} tree head is not backed by a signed checkpoint",
              file=sys.stderr)
    print(f"verified consistency from={first} to={second} "
          f"fromRoot={b64(first_root)} toRoot={b64(second_root)}")
    return EXIT_VERIFIED


# ---------------------------------------------------------------------------
# C2SP tlog-tiles: paths, tiles, entry bundles
# ---------------------------------------------------------------------------

def tile_index_path(n: int) -> str:
    """tlog-tiles: N in zero-padded 3-digit path elements, all but the last prefixed
    with `x` (1234067 -> x001/x234/067)."""
    groups = []
    while True:
        groups.append(n % 1000)
        n //= 1000
        if n == 0:
            break
    groups.reverse()
    return "/".join(("x%03d" if i < len(groups) - 1 else "%03d") % g
                    for i, g in enumerate(groups))


def tile_path(level: int | None, n: int, width: int) -> str:
    """tlog-tiles: tile/<L>/<N>[.p/<W>] for hash tiles, tile/entries/<N>[.p/<W>] for
    entry bundles (level None); `.p/W` only for partial tiles (1 <= W < 256)."""
    prefix = "tile/entries/" if level is None else f"tile/{level}/"
    suffix = f".p/{width}" if width < TILE_WIDTH else ""
    return prefix + tile_index_path(n) + suffix


def tile_width(level: int, n: int, size: int) -> int:
    """tlog-tiles "Partial Tiles": tile n at level l of a tree of size s is full when it
    is entirely below s; the right-edge one has floor(s / 256**l) mod 256 hashes; 0 means
    no such tile."""
    units = size >> (TILE_HEIGHT * level)
    full = units >> TILE_HEIGHT
    if n < full:
        return TILE_WIDTH
    if n == full:
        return units & (TILE_WIDTH - 1)
    return 0


def parse_hash_tile(data: bytes, width: int, what: str) -> list[bytes]:
    """tlog-tiles: a tile is `width` concatenated 32-byte hashes, nothing else."""
    if len(data) != width * HASH_SIZE:
        raise VerifyFailed(f"{what}: {len(data)} bytes, expected {width * HASH_SIZE}")
    return [data[i:i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)]


def parse_entry_bundle(data: bytes, width: int, what: str) -> list[bytes]:
    """tlog-tiles "Log entries": a sequence of big-endian uint16 length-prefixed
    entries, exactly `width` of them."""
    entries, pos = [], 0
    while pos < len(data):
        if len(entries) == MAX_BUNDLE_ENTRIES:
            raise VerifyFailed(f"{what}: more than {MAX_BUNDLE_ENTRIES} entries")
        if pos + 2 > len(data):
            raise VerifyFailed(f"{what}: truncated length prefix")
        length = int.from_bytes(data[pos:pos + 2], "big")
        pos += 2
        if pos + length > len(data):
            raise VerifyFailed(f"{what}: truncated entry")
        entries.append(data[pos:pos + length])
        pos += length
    if len(entries) != width:
        raise VerifyFailed(f"{what}: {len(entries)} entries, expected {width}")
    return entries


# ---------------------------------------------------------------------------
# Fetching: a directory laid out like the HTTP API, or HTTP(S)
# ---------------------------------------------------------------------------

class DirFetcher:
    def __init__(self, root: str):
        self.root = root

    def get(self, rel: str, limit: int) -> bytes:
        path = os.path.join(self.root, *rel.split("/"))
        try:
            with open(path, "rb") as f:
                data = f.read(limit + 1)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound(f"{path}: not found") from None
        except OSError as e:
            raise FetchError(f"{path}: {e.strerror}") from None
        if len(data) > limit:
            raise VerifyFailed(f"{rel}: larger than {limit} bytes")
        return data


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are refused: they could carry the bearer token elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise FetchError(f"{req.full_url}: refusing HTTP {code} redirect to {newurl}")


class HttpFetcher:
    def __init__(self, base: str, token: str | None, cafile: str | None):
        self.base = base.rstrip("/")
        handlers: list = [_RefuseRedirects()]
        if self.base.startswith("https://"):
            try:
                context = ssl.create_default_context(cafile=cafile)
            except (OSError, ssl.SSLError) as e:
                raise UsageError(f"--cacert {cafile}: {e}") from None
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self.opener = urllib.request.build_opener(*handlers)
        self.headers = {"User-Agent": "gpufed-tlog-verify/1",
                        "Accept-Encoding": "gzip, identity"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"

    def get(self, rel: str, limit: int) -> bytes:
        url = f"{self.base}/{rel}"
        request = urllib.request.Request(url, headers=self.headers)
        try:
            with self.opener.open(request, timeout=HTTP_TIMEOUT_SECONDS) as response:
                encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
                raw = response.read(limit + MAX_GZIP_OVERHEAD + 1)
        except urllib.error.HTTPError as e:
            if e.code in (404, 410):
                raise NotFound(f"{url}: HTTP {e.code}") from None
            raise FetchError(f"{url}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise FetchError(f"{url}: {reason}") from None
        if encoding == "gzip":
            return gunzip_bounded(raw, limit, rel)
        if encoding not in ("identity", ""):
            raise FetchError(f"{url}: unsupported Content-Encoding {encoding}")
        if len(raw) > limit:
            raise VerifyFailed(f"{rel}: larger than {limit} bytes")
        return raw


def gunzip_bounded(raw: bytes, limit: int, what: str) -> bytes:
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(raw, limit + 1)
    except zlib.error:
        raise VerifyFailed(f"{what}: bad gzip content") from None
    if len(out) > limit:
        raise VerifyFailed(f"{what}: larger than {limit} bytes")
    if not decompressor.eof or decompressor.unused_data:
        raise VerifyFailed(f"{what}: truncated or trailing gzip data")
    return out


def read_token(path: str) -> str:
    data = read_file(path, 64 << 10, "token file")
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise UsageError(f"token file {path}: not ASCII") from None
    if not token or any(ord(c) <= 0x20 or ord(c) == 0x7F for c in token):
        raise UsageError(f"token file {path}: empty, or contains spaces or control characters")
    return token


def make_fetcher(base: str, token_file: str | None, cafile: str | None):
    if base.startswith(("https://", "http://")):
        if base.startswith("http://") and (token_file or cafile):
            raise UsageError("--token-file and --cacert need an https:// base")
        token = read_token(token_file) if token_file else None
        return HttpFetcher(base, token, cafile)
    if token_file or cafile:
        raise UsageError("--token-file and --cacert apply to https:// bases only")
    if base.startswith("file://"):
        base = base[len("file://"):]
    if not os.path.isdir(base):
        raise UsageError(f"{base}: not a directory (nor an http(s):// URL)")
    return DirFetcher(base)


# ---------------------------------------------------------------------------
# The tree of a checkpoint, read from tiles
# ---------------------------------------------------------------------------

class TiledTree:
    """The Merkle tree of `size` entries as served in tiles (tlog-tiles "Merkle Tree"):
    the hash at index i of level l is MTH(D[i*256**l : (i+1)*256**l])."""

    def __init__(self, fetcher, size: int):
        self.fetcher = fetcher
        self.size = size
        self.cache: dict[tuple[int, int], list[bytes]] = {}
        self.fetches = 0

    def _fetch(self, level: int | None, n: int, width: int) -> tuple[bytes, int]:
        """Fetches a tile or bundle of the given width. A missing partial one falls back
        to the full one (tlog-tiles allows deleting partial tiles once the full tile
        exists); the caller parses it with the width returned."""
        limit = MAX_TILE_BYTES if level is not None else MAX_BUNDLE_BYTES
        self.fetches += 1
        try:
            return self.fetcher.get(tile_path(level, n, width), limit), width
        except NotFound:
            if width == TILE_WIDTH:
                raise
        return self.fetcher.get(tile_path(level, n, TILE_WIDTH), limit), TILE_WIDTH

    def load_tile(self, level: int, n: int) -> list[bytes]:
        width = tile_width(level, n, self.size)
        if width == 0:
            raise ValueError(f"tile {level}/{n} does not exist at size {self.size}")
        data, got = self._fetch(level, n, width)
        return parse_hash_tile(data, got, tile_path(level, n, got))[:width]

    def tile(self, level: int, n: int) -> list[bytes]:
        key = (level, n)
        if key not in self.cache:
            self.cache[key] = self.load_tile(level, n)
        return self.cache[key]

    def bundle(self, n: int) -> list[bytes]:
        width = tile_width(0, n, self.size)
        if width == 0:
            raise ValueError(f"entry bundle {n} does not exist at size {self.size}")
        data, got = self._fetch(None, n, width)
        return parse_entry_bundle(data, got, tile_path(None, n, got))[:width]

    def hash_at(self, level: int, index: int) -> bytes:
        return self.tile(level, index >> TILE_HEIGHT)[index & (TILE_WIDTH - 1)]

    def subtree_hash(self, start: int, height: int) -> bytes:
        """MTH(D[start : start + 2**height]) for an aligned perfect subtree: from the
        2**(height mod 8) hashes of the level floor(height / 8) tile that span it."""
        if start % (1 << height):
            raise ValueError("unaligned subtree")
        level = height // TILE_HEIGHT
        first = start >> (TILE_HEIGHT * level)
        return perfect_root([self.hash_at(level, first + j)
                             for j in range(1 << (height % TILE_HEIGHT))])

    def range_hash(self, start: int, count: int) -> bytes:
        """MTH(D[start : start + count]) by RFC 9162 2.1.1's split, for the ranges the
        root and inclusion paths need (start aligned to a power of two above count)."""
        if count & (count - 1) == 0:
            return self.subtree_hash(start, count.bit_length() - 1)
        k = split_point(count)
        return node_hash(self.range_hash(start, k), self.range_hash(start + k, count - k))

    def root(self) -> bytes:
        return EMPTY_TREE_ROOT if self.size == 0 else self.range_hash(0, self.size)

    def inclusion_path(self, index: int) -> list[bytes]:
        """RFC 9162 2.1.3.1 PATH(m, D[n]), with the subtree hashes read from tiles."""
        def path(m: int, start: int, n: int) -> list[bytes]:
            if n == 1:
                return []
            k = split_point(n)
            if m < k:
                return path(m, start, k) + [self.range_hash(start + k, n - k)]
            return path(m - k, start + k, n - k) + [self.range_hash(start, k)]
        return path(index, 0, self.size)

    def audit(self, check_entries: bool) -> int:
        """Binds every tile hash to the root: each full tile's MTH must equal its hash in
        the level above (partial tiles are bound by root() already). With check_entries,
        each entry bundle's leaf hashes must equal the level-0 tile. Returns the number
        of entries checked."""
        checked = 0
        level = 0
        while self.size >> (TILE_HEIGHT * level):
            units = self.size >> (TILE_HEIGHT * level)
            full = units >> TILE_HEIGHT
            tiles = full + (1 if units & (TILE_WIDTH - 1) else 0)
            for n in range(tiles):
                hashes = self.tile(level, n) if level or n == full else self.load_tile(level, n)
                if n < full and perfect_root(hashes) != self.hash_at(level + 1, n):
                    raise VerifyFailed(f"{tile_path(level, n, TILE_WIDTH)}: its hash "
                                       f"differs from tile level {level + 1}'s")
                if level == 0 and check_entries:
                    checked += self.check_bundle(n, hashes)
            level += 1
        return checked

    def check_bundle(self, n: int, hashes: list[bytes]) -> int:
        entries = self.bundle(n)
        for j, (entry, expected) in enumerate(zip(entries, hashes)):
            index = n * TILE_WIDTH + j
            if leaf_hash(entry) != expected:
                raise VerifyFailed(f"entry seq {index + 1} ({tile_path(None, n, len(hashes))}):"
                                   " leaf hash differs from the level-0 tile")
            check_record(entry, index + 1)
        return len(entries)

    def prove(self, seq: int, root: bytes) -> int:
        """Inclusion of record `seq` (leaf index seq - 1): its entry's leaf hash must be
        the level-0 tile's, and the RFC 9162 path computed from tiles must verify
        (2.1.3.2) against the signed root. Returns the proof length."""
        index = seq - 1
        if index >= self.size:
            raise VerifyFailed(f"seq {seq} is not in the tree of size {self.size}")
        entry = self.bundle(index >> TILE_HEIGHT)[index & (TILE_WIDTH - 1)]
        leaf = leaf_hash(entry)
        if leaf != self.hash_at(0, index):
            raise VerifyFailed(f"entry seq {seq}: leaf hash differs from the level-0 tile")
        check_record(entry, seq)
        path = self.inclusion_path(index)
        verify_inclusion(index, self.size, leaf, path, root)
        return len(path)


def cmd_tiles(args, trust: Trust) -> int:
    fetcher = make_fetcher(args.base, args.token_file, args.cacert)
    cp = trust.open_checkpoint(fetcher.get("checkpoint", MAX_NOTE_BYTES), "checkpoint")
    tree = TiledTree(fetcher, cp.size)
    if tree.root() != cp.root:
        raise VerifyFailed(f"root computed from the tiles for size {cp.size} differs from "
                           "the checkpoint's")
    checked = 0
    if args.entries or args.all_tiles:
        checked = tree.audit(check_entries=args.entries)
    proved = set()
    for seq in args.prove:
        if seq < 1:
            raise UsageError(f"--prove {seq}: seqs start at 1")
        hashes = tree.prove(seq, cp.root)
        print(f"proved seq={seq} leafIndex={seq - 1} size={cp.size} hashes={hashes}")
        proved.add(seq)
    if not args.entries:
        checked = len(proved)
    if trust.witnesses:
        print(f"witnesses={cp.cosignatures}")
    print(f"verified size={cp.size} entries={checked}")
    return EXIT_VERIFIED


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _add_trust_options(parser: argparse.ArgumentParser, prefix: str) -> None:
    parser.add_argument("--vkey", dest=prefix + "vkey", metavar="VKEY",
                        help="the log's verifier key, <name>+<hex id>+<base64(0x01||key)>")
    parser.add_argument("--origin", dest=prefix + "origin",
                        help="the checkpoint origin line to require")
    parser.add_argument("--witness-vkey", dest=prefix + "witness", action="append",
                        default=[], metavar="VKEY",
                        help="a witness key (type 0x04); repeatable")
    parser.add_argument("--require-witnesses", dest=prefix + "quorum", type=int,
                        metavar="K", help="valid cosignatures required among the witnesses")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlog_verify.py",
        description="Verify gpufed transparency log checkpoints, proofs and tiles "
                    "(RFC 9162, C2SP signed-note/tlog-checkpoint/tlog-tiles/"
                    "tlog-cosignature).")
    _add_trust_options(parser, "g_")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("checkpoint", help="verify a checkpoint's log signature")
    p.add_argument("file")
    p.set_defaults(func=cmd_checkpoint)

    p = sub.add_parser("inclusion", help="verify an inclusion proof")
    p.add_argument("proof")
    p.add_argument("--checkpoint", help="checkpoint to verify against (default: embedded)")
    p.set_defaults(func=cmd_inclusion)

    p = sub.add_parser("consistency", help="verify a consistency proof")
    p.add_argument("proof")
    p.add_argument("--old", help="signed checkpoint for fromSize/fromRoot")
    p.add_argument("--new", help="signed checkpoint for toSize/toRoot (default: embedded)")
    p.set_defaults(func=cmd_consistency)

    p = sub.add_parser("tiles", help="verify a tiled log (directory or https:// URL)")
    p.add_argument("base")
    p.add_argument("--token-file", help="bearer token to send (https only)")
    p.add_argument("--cacert", help="CA certificate(s) to verify the server against")
    p.add_argument("--entries", action="store_true",
                   help="fetch every tile and entry bundle and check every entry")
    p.add_argument("--all-tiles", action="store_true",
                   help="fetch every hash tile and bind each to the root")
    p.add_argument("--prove", action="extend", nargs="+", type=int, default=[],
                   metavar="SEQ", help="compute and verify inclusion of these seqs")
    p.set_defaults(func=cmd_tiles)

    for p in sub.choices.values():
        _add_trust_options(p, "s_")
    return parser


def build_trust(args) -> Trust:
    def pick(name, option):
        g, s = getattr(args, "g_" + name), getattr(args, "s_" + name)
        if g is not None and s is not None and g != s:
            raise UsageError(f"{option} given twice with different values")
        return s if s is not None else g

    vkey = pick("vkey", "--vkey")
    if vkey is None:
        raise UsageError("--vkey is required")
    log_key = parse_vkey(vkey, SIG_TYPE_ED25519, "--vkey")
    witnesses = [parse_vkey(w, SIG_TYPE_COSIGNATURE_V1, "--witness-vkey")
                 for w in args.g_witness + args.s_witness]
    witnesses = list({(w.name, w.key_id): w for w in witnesses}.values())
    quorum = pick("quorum", "--require-witnesses") or 0
    if quorum < 0 or quorum > len(witnesses):
        raise UsageError(f"--require-witnesses {quorum}: needs 0..{len(witnesses)} "
                         "(the number of --witness-vkey keys)")
    return Trust(log_key, pick("origin", "--origin"), witnesses, quorum)


def one_line(message: str) -> str:
    return " ".join(str(message).split())


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if Ed25519PublicKey is None:
            raise UsageError("the Python `cryptography` package is required "
                             "(Debian: python3-cryptography)")
        return args.func(args, build_trust(args))
    except VerifyFailed as e:
        print(f"FAILED: {one_line(e)}", file=sys.stderr)
        return EXIT_FAILED
    except UsageError as e:
        print(f"error: {one_line(e)}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:  # a bug here, not a verdict on the log: never exit 1 for it
        print(f"error: internal error: {type(e).__name__}: {one_line(e)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
