#!/usr/bin/env python3
"""Self-test for tlog_verify.py.

Builds logs with its own, independent tree builder (the recursive definitions of RFC
9162 2.1.1 MTH, 2.1.3.1 PATH and 2.1.4.1 PROOF/SUBPROOF, and the C2SP signed-note,
tlog-checkpoint, tlog-cosignature and tlog-tiles formats), writes checkpoints, proofs,
tiles and entry bundles in gpufed's formats into a temporary folder, and requires that
tlog_verify.py (run as a subprocess, and in-process for exhaustive bit-flip loops)
accepts them, and rejects with exit status 1 a single flipped bit in a record, a proof
hash, a checkpoint's root or signature, a tile or an entry bundle.

Run: python3 tests/audit/tlog_verify_selftest.py
"""
from __future__ import annotations

import base64
import contextlib
import datetime
import gzip
import hashlib
import http.server
import importlib.util
import io
import ipaddress
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import unittest

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
VERIFIER = os.path.join(HERE, "tlog_verify.py")
ORIGIN = "gpufed.example/selftest-log"
BIG_SIZE = 70000  # tlog-tiles' own example size
SMALL_SIZE = 1000

sys.dont_write_bytecode = True  # leave no __pycache__ beside the verifier
_spec = importlib.util.spec_from_file_location("tlog_verify", VERIFIER)
tv = importlib.util.module_from_spec(_spec)
sys.modules["tlog_verify"] = tv
_spec.loader.exec_module(tv)

# ---------------------------------------------------------------------------
# Independent builder: RFC 9162 2.1 by its recursive definitions
# ---------------------------------------------------------------------------


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def hleaf(data: bytes) -> bytes:
    return sha(b"\x00" + data)


def hnode(left: bytes, right: bytes) -> bytes:
    return sha(b"\x01" + left + right)


def largest_pow2_below(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(hs: list[bytes]) -> bytes:
    """MTH over already-hashed leaves (RFC 9162 2.1.1)."""
    if not hs:
        return sha(b"")
    if len(hs) == 1:
        return hs[0]
    k = largest_pow2_below(len(hs))
    return hnode(mth(hs[:k]), mth(hs[k:]))


def rfc_path(m: int, hs: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) (RFC 9162 2.1.3.1)."""
    if len(hs) <= 1:
        return []
    k = largest_pow2_below(len(hs))
    if m < k:
        return rfc_path(m, hs[:k]) + [mth(hs[k:])]
    return rfc_path(m - k, hs[k:]) + [mth(hs[:k])]


def rfc_subproof(m: int, hs: list[bytes], complete: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) (RFC 9162 2.1.4.1)."""
    n = len(hs)
    if m == n:
        return [] if complete else [mth(hs)]
    k = largest_pow2_below(n)
    if m <= k:
        return rfc_subproof(m, hs[:k], complete) + [mth(hs[k:])]
    return rfc_subproof(m - k, hs[k:], False) + [mth(hs[:k])]


def rfc_consistency(m: int, hs: list[bytes]) -> list[bytes]:
    if m == 0 or m == len(hs):
        return []
    return rfc_subproof(m, hs, True)


def b64e(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def make_record(seq: int) -> bytes:
    """A journal-like record line (ASCII JSON, seq first, no newline)."""
    return json.dumps({"seq": seq, "time": "2026-11-22T10:00:00.123456Z", "kind": "selftest",
                       "controller": "ctl-1", "pad": "p" * (seq % 23)},
                      separators=(",", ":")).encode("ascii")


def index_path(n: int) -> str:
    """tlog-tiles <N>: 3-digit groups, `x` on all but the last."""
    digits = str(n)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    return "/".join(["x" + g for g in groups[:-1]] + [groups[-1]])


class Key:
    """An Ed25519 signed-note key of signature type 0x01 (log) or 0x04 (witness)."""

    def __init__(self, name: str, sig_type: int):
        self.name, self.sig_type = name, sig_type
        self.private = Ed25519PrivateKey.generate()
        self.public = self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.kid = sha(name.encode() + b"\n" + bytes([sig_type]) + self.public)[:4]

    @property
    def vkey(self) -> str:
        return f"{self.name}+{self.kid.hex()}+{b64e(bytes([self.sig_type]) + self.public)}"

    def line(self, body: bytes, timestamp: int = 1700000000) -> bytes:
        if self.sig_type == 0x01:
            payload = self.kid + self.private.sign(body)
        else:
            message = b"cosignature/v1\ntime %d\n" % timestamp + body
            payload = self.kid + timestamp.to_bytes(8, "big") + self.private.sign(message)
        return "\u2014 ".encode() + self.name.encode() + b" " + b64e(payload).encode() + b"\n"


class Log:
    def __init__(self, size: int, log_key: Key, records: list[bytes] | None = None):
        self.key = log_key
        self.records = records or [make_record(seq) for seq in range(1, size + 1)]
        self.leaves = [hleaf(r) for r in self.records]
        # Tile hashes straight from tlog-tiles: level l, index i =
        # MTH(D[i * 256**l : (i + 1) * 256**l]) for every complete range.
        self.levels = [self.leaves]
        span = 256
        while span <= len(self.leaves):
            self.levels.append([mth(self.leaves[i:i + span])
                                for i in range(0, len(self.leaves) - span + 1, span)])
            span *= 256

    def root(self, size: int) -> bytes:
        return mth(self.leaves[:size])

    def body(self, size: int, root: bytes | None = None, origin: str = ORIGIN,
             extensions: tuple[str, ...] = ()) -> bytes:
        root = self.root(size) if root is None else root
        text = f"{origin}\n{size}\n{b64e(root)}\n" + "".join(e + "\n" for e in extensions)
        return text.encode()

    def checkpoint(self, size: int, witnesses: tuple[Key, ...] = (), **kw) -> bytes:
        body = self.body(size, **kw)
        return body + b"\n" + self.key.line(body) + b"".join(w.line(body) for w in witnesses)

    def tiles(self, size: int) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        level = 0
        while size // 256 ** level:
            units = size // 256 ** level
            for n in range((units + 255) // 256):
                width = min(256, units - 256 * n)
                suffix = "" if width == 256 else f".p/{width}"
                hashes = self.levels[level][256 * n:256 * n + width]
                out[f"tile/{level}/{index_path(n)}{suffix}"] = b"".join(hashes)
                if level == 0:
                    entries = self.records[256 * n:256 * n + width]
                    out[f"tile/entries/{index_path(n)}{suffix}"] = b"".join(
                        len(e).to_bytes(2, "big") + e for e in entries)
            level += 1
        return out

    def write(self, folder: str, size: int, checkpoint: bytes | None = None) -> str:
        files = self.tiles(size)
        files["checkpoint"] = checkpoint if checkpoint is not None else self.checkpoint(size)
        for rel, data in files.items():
            path = os.path.join(folder, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        return folder

    def inclusion(self, seq: int, size: int, checkpoint: bytes | None = None) -> dict:
        cp = self.checkpoint(size) if checkpoint is None else checkpoint
        return {"type": "inclusion", "seq": seq, "leafIndex": seq - 1, "treeSize": size,
                "record": self.records[seq - 1].decode("ascii"),
                "proof": [b64e(h) for h in rfc_path(seq - 1, self.leaves[:size])],
                "checkpoint": cp.decode()}

    def consistency(self, first: int, second: int) -> dict:
        return {"type": "consistency", "fromSize": first, "toSize": second,
                "fromRoot": b64e(self.root(first)), "toRoot": b64e(self.root(second)),
                "proof": [b64e(h) for h in rfc_consistency(first, self.leaves[:second])],
                "checkpoint": self.checkpoint(second).decode()}


# ---------------------------------------------------------------------------
# Fixtures shared by the tests
# ---------------------------------------------------------------------------

ENV = {k: v for k, v in os.environ.items()
       if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
TMP: tempfile.TemporaryDirectory | None = None
LOG_KEY = Key(ORIGIN, 0x01)
OTHER_KEY = Key(ORIGIN, 0x01)  # same name, different key: a different key ID
WITNESS1 = Key("witness.example/w1", 0x04)
WITNESS2 = Key("witness.example/w2", 0x04)
BIG: Log
SMALL_DIR = BIG_DIR = ""


def setUpModule():
    global TMP, BIG, SMALL_DIR, BIG_DIR
    TMP = tempfile.TemporaryDirectory(prefix="tlog-selftest-")
    BIG = Log(BIG_SIZE, LOG_KEY)
    SMALL_DIR = BIG.write(tmp("small"), SMALL_SIZE)
    BIG_DIR = BIG.write(tmp("big"), BIG_SIZE)


def tearDownModule():
    TMP.cleanup()


def tmp(*parts: str) -> str:
    return os.path.join(TMP.name, *parts)


def write(name: str, data) -> str:
    path = tmp(name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, dict):
        data = json.dumps(data).encode()
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, VERIFIER, *args], capture_output=True, text=True,
                          env=ENV, timeout=300)


def run_inprocess(*args: str) -> int:
    """tlog_verify.main() in this process (fast, for exhaustive bit-flip loops)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return tv.main(list(args))
        except SystemExit as e:
            return int(e.code)


@contextlib.contextmanager
def flipped(path: str, offset: int, bit: int = 0):
    """Flips one bit of a file for the duration of the block."""
    with open(path, "rb") as f:
        original = f.read()
    data = bytearray(original)
    data[offset] ^= 1 << bit
    with open(path, "wb") as f:
        f.write(data)
    try:
        yield
    finally:
        with open(path, "wb") as f:
            f.write(original)


@contextlib.contextmanager
def replaced(path: str, data: bytes | None):
    """Replaces (or, with None, removes) a file for the duration of the block."""
    with open(path, "rb") as f:
        original = f.read()
    if data is None:
        os.remove(path)
    else:
        with open(path, "wb") as f:
            f.write(data)
    try:
        yield
    finally:
        with open(path, "wb") as f:
            f.write(original)


def flip_b64(text: str, byte: int, bit: int = 0) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[byte] ^= 1 << bit
    return b64e(bytes(raw))


class CliCase(unittest.TestCase):
    def verified(self, *args: str) -> str:
        p = run("--vkey", LOG_KEY.vkey, *args)
        self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
        self.assertEqual(p.stderr, "")
        return p.stdout

    def fails(self, *args: str, code: int = 1, vkey: str | None = None) -> str:
        p = run("--vkey", vkey or LOG_KEY.vkey, *args)
        self.assertEqual(p.returncode, code, f"{args}: stdout={p.stdout!r} stderr={p.stderr!r}")
        if code == 1:
            self.assertTrue(p.stderr.startswith("FAILED: "), p.stderr)
            self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
            self.assertEqual(p.stdout, "")
        return p.stderr


# ---------------------------------------------------------------------------
# The builder against the specs' own examples
# ---------------------------------------------------------------------------

class BuilderSanity(unittest.TestCase):
    def test_tile_paths(self):
        self.assertEqual(index_path(1234067), "x001/x234/067")
        self.assertEqual(index_path(0), "000")
        self.assertEqual(index_path(1000), "x001/000")
        for n in (0, 7, 999, 1000, 1234067, 10 ** 12):
            self.assertEqual(tv.tile_index_path(n), index_path(n))

    def test_70000_layout_matches_tlog_tiles_example(self):
        # "273 full level 0 tiles, one partial level 0 tile of width 112, one full level 1
        # tile, one partial level 1 tile of width 17, and one partial level 2 tile of
        # width 1"; and a tree of size 256 has "a full level 0 tile and a partial level 1
        # tile of width 1".
        names = [p for p in BIG.tiles(70000) if not p.startswith("tile/entries/")]
        full0 = [p for p in names if p.startswith("tile/0/") and ".p/" not in p]
        self.assertEqual(len(full0), 273)
        self.assertIn("tile/0/273.p/112", names)
        self.assertIn("tile/1/000", names)
        self.assertIn("tile/1/001.p/17", names)
        self.assertIn("tile/2/000.p/1", names)
        self.assertEqual(len(names), 273 + 4)
        self.assertEqual(sorted(Log(256, LOG_KEY).tiles(256)),
                         ["tile/0/000", "tile/1/000.p/1", "tile/entries/000"])


# ---------------------------------------------------------------------------
# RFC 9162 algorithms, in-process and exhaustive on small trees
# ---------------------------------------------------------------------------

class MerkleAlgorithms(unittest.TestCase):
    N = 72

    def setUp(self):
        self.hs = BIG.leaves[:self.N]

    def test_inclusion_all_leaves(self):
        for n in range(1, self.N + 1):
            root = mth(self.hs[:n])
            for m in range(n):
                path = rfc_path(m, self.hs[:n])
                tv.verify_inclusion(m, n, self.hs[m], path, root)
                bad = []
                if path:
                    bad += [(m, n, self.hs[m], path[:-1]),
                            (m, n, self.hs[m], path[1:])]
                    for i in range(len(path)):
                        p = list(path)
                        p[i] = bytes([p[i][0] ^ 1]) + p[i][1:]
                        bad.append((m, n, self.hs[m], p))
                # (A proof for size n may also verify for another size whose tree has
                # the same shape along the path, so sizes are not varied here.)
                bad += [(m, n, self.hs[m], path + [root]),
                        (m, n, hnode(self.hs[m], self.hs[m]), path),
                        (n, n, self.hs[m], path)]
                if n > 1:
                    bad.append(((m + 1) % n, n, self.hs[m], path))
                for args in bad:
                    with self.assertRaises(tv.VerifyFailed, msg=f"m={m} n={n}"):
                        tv.verify_inclusion(*args, root)

    def test_consistency_all_pairs(self):
        roots = [mth(self.hs[:n]) for n in range(self.N + 1)]
        for n in range(0, self.N + 1):
            for m in range(0, n + 1):
                proof = rfc_consistency(m, self.hs[:n])
                tv.verify_consistency(m, n, roots[m], roots[n], proof)
                bad = [(m, n, roots[m], roots[n], proof + [roots[0]])]
                if m:  # from the empty tree, any second root is consistent
                    bad.append((m, n, roots[m], hnode(roots[n], roots[n]), proof))
                if 0 < m:
                    bad.append((m, n, hnode(roots[m], roots[m]), roots[n], proof))
                if 0 < m < n:
                    bad += [(m, n, roots[m], roots[n], proof[:-1]),
                            (m, n, roots[m], roots[n], proof[1:]),
                            (m + 1, n, roots[m], roots[n], proof),
                            (m, n, roots[m], roots[n], [])]
                    for i in range(len(proof)):
                        p = list(proof)
                        p[i] = bytes([p[i][0] ^ 0x80]) + p[i][1:]
                        bad.append((m, n, roots[m], roots[n], p))
                if m == n and n:
                    bad.append((m, n, roots[m], roots[n], [roots[m]]))
                if n:
                    bad.append((n, m - 1 if m else 0, roots[n], roots[m], proof))
                for args in bad:
                    if args[0] == args[1] and args[2] == args[3] and not args[4] and \
                            (args[0] or args[2] == roots[0]):
                        continue  # (n, n) with equal roots and no proof is valid
                    with self.assertRaises(tv.VerifyFailed, msg=f"m={m} n={n} {args[:2]}"):
                        tv.verify_consistency(*args)


class DictFetcher:
    def __init__(self, files: dict[str, bytes]):
        self.files = files

    def get(self, rel: str, limit: int) -> bytes:
        if rel not in self.files:
            raise tv.NotFound(rel)
        return self.files[rel]


class TiledTreeMatchesBuilder(unittest.TestCase):
    def test_roots_and_paths_from_tiles(self):
        sizes = list(range(1, 530)) + [767, 768, 769, 1000, 4095, 65535, 65536, 65537, 70000]
        for size in sizes:
            tree = tv.TiledTree(DictFetcher(BIG.tiles(size)), size)
            expected = BIG.root(size)
            self.assertEqual(tree.root(), expected, f"size {size}")
            indexes = {0, size - 1, size // 2, (size * 7) // 11}
            if size in (1000, 65537, 70000):
                for index in sorted(indexes):
                    self.assertEqual(tree.inclusion_path(index),
                                     rfc_path(index, BIG.leaves[:size]), f"{size}/{index}")
                    self.assertEqual(tree.prove(index + 1, expected),
                                     len(rfc_path(index, BIG.leaves[:size])))
        self.assertEqual(tv.TiledTree(DictFetcher({}), 0).root(), sha(b""))


# ---------------------------------------------------------------------------
# `checkpoint`
# ---------------------------------------------------------------------------

class CheckpointCommand(CliCase):
    def test_valid(self):
        path = write("cp/valid", BIG.checkpoint(SMALL_SIZE))
        out = self.verified("checkpoint", path)
        self.assertEqual(out, f"size={SMALL_SIZE} root={b64e(BIG.root(SMALL_SIZE))}\n")
        self.verified("--origin", ORIGIN, "checkpoint", path)
        self.verified("checkpoint", path, "--origin", ORIGIN)  # options after the command
        self.fails("--origin", "gpufed.example/other", "checkpoint", path)

    def test_every_bit_of_the_note(self):
        note = BIG.checkpoint(SMALL_SIZE)
        path = write("cp/flip", note)
        body_len = len(BIG.body(SMALL_SIZE))
        for offset in range(len(note)):
            for bit in range(8):
                with flipped(path, offset, bit):
                    self.assertEqual(run_inprocess("--vkey", LOG_KEY.vkey, "checkpoint", path),
                                     1, f"byte {offset} bit {bit} (body is {body_len})")
        # The same as a subprocess, once for each part of the note.
        root_line = note.index(b"\n", note.index(b"\n") + 1) + 1
        sig_at = note.rindex(b" ") + 1
        for offset, what in ((root_line + 3, "root"), (sig_at + 2, "key id"),
                             (sig_at + 20, "signature"), (len(note) - 4, "signature end"),
                             (0, "origin"), (root_line - 2, "size")):
            with flipped(path, offset, 1):
                self.fails("checkpoint", path)

    def test_tampered_root_resigned_by_another_key(self):
        root = bytearray(BIG.root(SMALL_SIZE))
        root[0] ^= 1
        body = BIG.body(SMALL_SIZE, root=bytes(root))
        path = write("cp/other", body + b"\n" + OTHER_KEY.line(body))
        self.fails("checkpoint", path)
        # The other key's own vkey verifies it: the key ID is what tells them apart.
        p = run("--vkey", OTHER_KEY.vkey, "checkpoint", path)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_signature_lines(self):
        body = BIG.body(SMALL_SIZE)
        good = LOG_KEY.line(body)
        # Unknown signers are ignored, before or after the log's.
        extra = OTHER_KEY.line(body) + WITNESS1.line(body)
        self.verified("checkpoint", write("cp/extra1", body + b"\n" + extra + good))
        self.verified("checkpoint", write("cp/extra2", body + b"\n" + good + extra))
        # Same name and ID as the log key but a bad signature: reject the note.
        bad = LOG_KEY.line(body + b"x")
        self.fails("checkpoint", write("cp/twosigs", body + b"\n" + good + bad))
        # Only a witness cosignature: no log signature.
        self.fails("checkpoint", write("cp/witnessonly", body + b"\n" + WITNESS1.line(body)))
        # The log's signature of another body.
        other = BIG.body(SMALL_SIZE - 1)
        self.fails("checkpoint", write("cp/swapped", body + b"\n" + LOG_KEY.line(other)))
        # Malformed notes.
        for name, data in (("nosep", body + good), ("nonl", body + b"\n" + good[:-1]),
                           ("crlf", body.replace(b"\n", b"\r\n") + b"\r\n" + good),
                           ("nosig", body + b"\n"),
                           ("big", body + b"\n" + good * (1 + (1 << 20) // len(good)))):
            self.fails("checkpoint", write(f"cp/{name}", data))

    def test_body_rules(self):
        root = BIG.root(5)
        cases = {
            "leadingzero": (f"{ORIGIN}\n05\n{b64e(root)}\n".encode(), 1),
            "shortroot": (f"{ORIGIN}\n5\n{b64e(root[:31])}\n".encode(), 1),
            "tworoots": (f"{ORIGIN}\n5\n\n{b64e(root)}\n".encode(), 1),
            "emptyext": (f"{ORIGIN}\n5\n{b64e(root)}\n\nx\n".encode(), 1),
            "twolines": (f"{ORIGIN}\n5\n".encode(), 1),
            "emptybad": (f"{ORIGIN}\n0\n{b64e(root)}\n".encode(), 1),
            "empty": (f"{ORIGIN}\n0\n{b64e(sha(b''))}\n".encode(), 0),
            "extensions": (BIG.body(5, extensions=("ext one", "ext-two")), 0),
        }
        for name, (body, code) in cases.items():
            path = write(f"cp/{name}", body + b"\n" + LOG_KEY.line(body))
            p = run("--vkey", LOG_KEY.vkey, "checkpoint", path)
            self.assertEqual(p.returncode, code, f"{name}: {p.stderr}")

    def test_vkeys(self):
        path = write("cp/vkeys", BIG.checkpoint(3))
        self.fails("checkpoint", path, vkey=OTHER_KEY.vkey)
        name, kid, key = LOG_KEY.vkey.split("+", 2)
        wrong_id = f"{name}+{(int(kid, 16) ^ 1):08x}+{key}"
        self.fails("checkpoint", path, vkey=wrong_id, code=2)
        self.fails("checkpoint", path, vkey=WITNESS1.vkey, code=2)       # type 0x04
        self.fails("checkpoint", path, vkey="not-a-vkey", code=2)
        p = run("--vkey", "@" + write("cp/vkeyfile", LOG_KEY.vkey + "\n"), "checkpoint", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.fails("checkpoint", tmp("cp/does-not-exist"), code=2)
        # A public key whose base64 holds '+', the vkey's own separator.
        key = next(k for k in iter(lambda: Key(ORIGIN, 0x01), None)
                   if "+" in k.vkey.split("+", 2)[2])
        body = BIG.body(3)
        p = run("--vkey", key.vkey, "checkpoint", write("cp/plus", body + b"\n" + key.line(body)))
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_witnesses(self):
        note = BIG.checkpoint(SMALL_SIZE, witnesses=(WITNESS1,))
        path = write("cp/witnessed", note)
        w1, w2 = WITNESS1.vkey, WITNESS2.vkey
        self.verified("checkpoint", path, "--witness-vkey", w1, "--require-witnesses", "1")
        self.verified("--witness-vkey", w1, "--witness-vkey", w2, "--require-witnesses", "1",
                      "checkpoint", path)
        self.fails("--witness-vkey", w1, "--witness-vkey", w2, "--require-witnesses", "2",
                   "checkpoint", path)
        self.fails("--witness-vkey", w2, "--require-witnesses", "1", "checkpoint", path)
        self.fails("--require-witnesses", "1", "checkpoint", path, code=2)
        self.fails("--witness-vkey", LOG_KEY.vkey, "checkpoint", path, code=2)  # type 0x01
        # A cosignature over another timestamp than the one it carries.
        body = BIG.body(SMALL_SIZE)
        line = WITNESS1.line(body, timestamp=1700000000)
        raw = bytearray(base64.b64decode(line.split(b" ")[-1]))
        raw[4 + 7] ^= 1
        forged = line.rsplit(b" ", 1)[0] + b" " + b64e(bytes(raw)).encode() + b"\n"
        bad = write("cp/badtime", body + b"\n" + LOG_KEY.line(body) + forged)
        self.fails("--witness-vkey", w1, "checkpoint", bad)
        self.verified("checkpoint", bad)  # an unconfigured witness's line is ignored
        # Every bit of the cosignature line.
        start = note.index(b"\n\n") + 1 + len(LOG_KEY.line(body)) + 1
        for offset in range(start, len(note)):
            for bit in range(8):
                with flipped(path, offset, bit):
                    rc = run_inprocess("--vkey", LOG_KEY.vkey, "--witness-vkey", w1,
                                       "--require-witnesses", "1", "checkpoint", path)
                    self.assertEqual(rc, 1, f"byte {offset} bit {bit}")


# ---------------------------------------------------------------------------
# `inclusion`
# ---------------------------------------------------------------------------

class InclusionCommand(CliCase):
    SEQS = (1, 2, 255, 256, 257, 512, 513, 768, 999, 1000)

    def test_valid(self):
        for seq in self.SEQS:
            path = write(f"inc/{seq}.json", BIG.inclusion(seq, SMALL_SIZE))
            out = self.verified("--origin", ORIGIN, "inclusion", path)
            self.assertEqual(out, f"verified inclusion seq={seq} size={SMALL_SIZE} "
                                  f"root={b64e(BIG.root(SMALL_SIZE))}\n")
        one = Log(1, LOG_KEY)
        self.verified("inclusion", write("inc/one.json", one.inclusion(1, 1)))
        self.verified("inclusion", write("inc/big.json", BIG.inclusion(65537, BIG_SIZE)))

    def test_external_checkpoint(self):
        proof = BIG.inclusion(300, SMALL_SIZE)
        proof["checkpoint"] = None
        path = write("inc/nocp.json", proof)
        self.fails("inclusion", path, code=2)
        del proof["checkpoint"]
        path = write("inc/nocp2.json", proof)
        self.fails("inclusion", path, code=2)
        cp = write("inc/cp", BIG.checkpoint(SMALL_SIZE))
        self.verified("inclusion", path, "--checkpoint", cp)
        self.fails("inclusion", path, "--checkpoint", write("inc/cp999", BIG.checkpoint(999)))
        # A checkpoint of the right size whose root was changed and signed again.
        forged = BIG.checkpoint(SMALL_SIZE, root=BIG.root(SMALL_SIZE - 1))
        self.fails("inclusion", path, "--checkpoint", write("inc/forged", forged))
        with flipped(cp, len(BIG.body(SMALL_SIZE)) - 5, 0):   # root, unsigned
            self.fails("inclusion", path, "--checkpoint", cp)
        with flipped(cp, len(BIG.checkpoint(SMALL_SIZE)) - 10, 0):   # signature
            self.fails("inclusion", path, "--checkpoint", cp)

    def test_every_bit_of_the_record(self):
        proof = BIG.inclusion(513, SMALL_SIZE)
        record = proof["record"].encode()
        for offset in range(len(record)):
            for bit in range(8):
                bad = bytearray(record)
                bad[offset] ^= 1 << bit
                proof["record"] = bad.decode("latin-1")
                path = write("inc/record.json", proof)
                self.assertEqual(run_inprocess("--vkey", LOG_KEY.vkey, "inclusion", path), 1,
                                 f"byte {offset} bit {bit}")
        for offset in (2, 8, len(record) - 3):   # seq digits, record body
            bad = bytearray(record)
            bad[offset] ^= 1
            proof["record"] = bad.decode()
            self.fails("inclusion", write("inc/record1.json", proof))

    def test_every_bit_of_the_proof(self):
        proof = BIG.inclusion(700, SMALL_SIZE)
        hashes = list(proof["proof"])
        for i in range(len(hashes)):
            for byte in range(32):
                for bit in range(8):
                    proof["proof"] = hashes[:i] + [flip_b64(hashes[i], byte, bit)] + hashes[i + 1:]
                    path = write("inc/proof.json", proof)
                    self.assertEqual(run_inprocess("--vkey", LOG_KEY.vkey, "inclusion", path),
                                     1, f"hash {i} byte {byte} bit {bit}")
            proof["proof"] = hashes[:i] + [flip_b64(hashes[i], 31, 7)] + hashes[i + 1:]
            self.fails("inclusion", write("inc/proof1.json", proof))
        for bad in (hashes[:-1], hashes[1:], hashes + [hashes[0]], hashes[::-1], []):
            proof["proof"] = bad
            self.fails("inclusion", write("inc/proof2.json", proof))

    def test_fields(self):
        base = BIG.inclusion(20, SMALL_SIZE)
        for change in ({"leafIndex": 20}, {"leafIndex": 18}, {"seq": 21, "leafIndex": 20},
                       {"treeSize": 999}, {"treeSize": 1001}, {"seq": 0, "leafIndex": -1},
                       {"seq": "20"}, {"seq": True}, {"proof": "x"}, {"record": 5},
                       {"checkpoint": 7}, {"proof": base["proof"][:1] + ["AAAA"]}):
            self.fails("inclusion", write("inc/fields.json", {**base, **change}))
        self.fails("inclusion", write("inc/notjson.json", b"{"))
        self.fails("inclusion", write("inc/type.json", {**base, "type": "consistency"}),
                   code=2)
        self.fails("consistency", write("inc/type2.json", base), code=2)
        # A log whose record 20 says it is seq 21: leaf index and seq disagree.
        records = list(BIG.records[:SMALL_SIZE])
        records[19] = make_record(21)
        lying = Log(SMALL_SIZE, LOG_KEY, records)
        self.fails("inclusion", write("inc/lying.json", lying.inclusion(20, SMALL_SIZE)))


# ---------------------------------------------------------------------------
# `consistency`
# ---------------------------------------------------------------------------

class ConsistencyCommand(CliCase):
    PAIRS = ((1, 2), (1, 1000), (2, 3), (3, 7), (4, 1000), (255, 256), (256, 257),
             (512, 1000), (513, 999), (999, 1000), (1000, 1000), (0, 1000), (0, 0),
             (256, 65536), (65536, 70000), (1000, 70000))

    def test_valid(self):
        for first, second in self.PAIRS:
            path = write(f"con/{first}-{second}.json", BIG.consistency(first, second))
            p = run("--vkey", LOG_KEY.vkey, "consistency", path)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "note: the old tree head is not backed by a signed "
                                       "checkpoint\n")
            self.assertTrue(p.stdout.startswith(f"verified consistency from={first} "
                                                f"to={second} "), p.stdout)

    def test_old_and_new_checkpoints(self):
        path = write("con/p.json", BIG.consistency(300, SMALL_SIZE))
        old = write("con/old", BIG.checkpoint(300))
        new = write("con/new", BIG.checkpoint(SMALL_SIZE))
        self.verified("consistency", path, "--old", old)
        self.verified("consistency", path, "--old", old, "--new", new)
        self.fails("consistency", path, "--old", new)
        self.fails("consistency", path, "--new", old)
        self.fails("consistency", path, "--old", write("con/old299", BIG.checkpoint(299)))
        self.fails("consistency", path, "--old",
                   write("con/oldorigin", BIG.checkpoint(300, origin="gpufed.example/b")))
        self.fails("--origin", "gpufed.example/b", "consistency", path)
        with flipped(old, len(BIG.checkpoint(300)) - 10, 0):
            self.fails("consistency", path, "--old", old)
        with flipped(old, len(BIG.body(300)) - 5, 0):
            self.fails("consistency", path, "--old", old)
        # No signed checkpoint at all: the proof's math is checked, and that is said.
        proof = BIG.consistency(300, SMALL_SIZE)
        proof["checkpoint"] = None
        p = run("--vkey", LOG_KEY.vkey, "consistency", write("con/nocp.json", proof))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("not backed by a signed checkpoint", p.stderr)

    def test_every_bit_of_proof_and_roots(self):
        proof = BIG.consistency(300, SMALL_SIZE)
        original = json.loads(json.dumps(proof))
        for i in range(len(original["proof"])):
            for byte in range(0, 32, 3):
                for bit in range(8):
                    proof["proof"] = list(original["proof"])
                    proof["proof"][i] = flip_b64(proof["proof"][i], byte, bit)
                    path = write("con/flip.json", proof)
                    self.assertEqual(run_inprocess("--vkey", LOG_KEY.vkey, "consistency",
                                                   path), 1, f"hash {i} byte {byte} bit {bit}")
        proof["proof"] = list(original["proof"])
        for name in ("fromRoot", "toRoot"):
            for byte in range(32):
                proof[name] = flip_b64(original[name], byte, byte % 8)
                path = write("con/flip.json", proof)
                self.assertEqual(run_inprocess("--vkey", LOG_KEY.vkey, "consistency", path), 1)
                # Without any checkpoint the math alone must still catch it.
                proof["checkpoint"] = None
                path = write("con/flip.json", proof)
                self.assertEqual(run_inprocess("--vkey", LOG_KEY.vkey, "consistency", path), 1)
                proof["checkpoint"] = original["checkpoint"]
            proof[name] = original[name]
        proof["proof"] = [flip_b64(original["proof"][0], 0)] + original["proof"][1:]
        self.fails("consistency", write("con/flip1.json", proof))
        proof["proof"] = original["proof"]
        proof["fromRoot"] = flip_b64(original["fromRoot"], 5)
        self.fails("consistency", write("con/flip2.json", proof))

    def test_edge_cases(self):
        same = BIG.consistency(SMALL_SIZE, SMALL_SIZE)
        self.fails("consistency", write("con/e1.json", {**same, "proof": [same["toRoot"]]}))
        self.fails("consistency", write("con/e2.json",
                                        {**same, "fromRoot": b64e(BIG.root(999))}))
        empty = BIG.consistency(0, SMALL_SIZE)
        self.fails("consistency", write("con/e3.json",
                                        {**empty, "fromRoot": b64e(BIG.root(1))}))
        self.fails("consistency", write("con/e4.json",
                                        {**empty, "proof": [b64e(BIG.root(1))]}))
        back = BIG.consistency(300, SMALL_SIZE)
        self.fails("consistency", write("con/e5.json",
                                        {**back, "fromSize": SMALL_SIZE, "toSize": 300,
                                         "checkpoint": None}))
        self.fails("consistency", write("con/e6.json", {**back, "fromSize": 301}))
        self.fails("consistency", write("con/e7.json", {**back, "proof": []}))


# ---------------------------------------------------------------------------
# `tiles` on a directory
# ---------------------------------------------------------------------------

class TilesDirectory(CliCase):
    def test_sizes(self):
        for size in (0, 1, 2, 255, 256, 257, 511, 512, 513, 65536):
            folder = BIG.write(tmp(f"sizes/{size}"), size)
            out = self.verified("tiles", folder, "--entries")
            self.assertEqual(out, f"verified size={size} entries={size}\n")
            if size:
                out = self.verified("tiles", folder, "--prove", "1", str(size))
                self.assertTrue(out.endswith(f"verified size={size} entries="
                                             f"{len({1, size})}\n"), out)
        self.fails("tiles", tmp("sizes/0"), "--prove", "1")
        self.fails("tiles", tmp("sizes/257"), "--prove", "258")
        self.fails("tiles", tmp("sizes/257"), "--prove", "0", code=2)

    def test_small_and_big(self):
        out = self.verified("tiles", SMALL_DIR, "--entries", "--prove", "1", "700", "1000")
        self.assertEqual(out.splitlines()[-1], f"verified size={SMALL_SIZE} entries=1000")
        self.assertEqual(len(out.splitlines()), 4)
        self.verified("tiles", SMALL_DIR)
        self.verified("tiles", SMALL_DIR, "--all-tiles")
        self.verified("tiles", "file://" + SMALL_DIR, "--origin", ORIGIN)
        out = self.verified("tiles", BIG_DIR, "--entries", "--prove", "65536", "65537", "70000")
        self.assertEqual(out.splitlines()[-1], f"verified size={BIG_SIZE} entries={BIG_SIZE}")
        self.fails("tiles", tmp("no-such-dir"), code=2)
        self.fails("tiles", SMALL_DIR, "--token-file", VERIFIER, code=2)

    def tile(self, rel: str, folder: str | None = None) -> str:
        return os.path.join(folder or SMALL_DIR, *rel.split("/"))

    def test_flipped_bits_in_tiles(self):
        # Size 1000: level 0 = 000 001 002 (full) + 003.p/232; level 1 = 000.p/3.
        cases = [
            ("tile/0/000", 0, ("--all-tiles",)),
            ("tile/0/001", 8191, ("--entries",)),
            ("tile/0/002", 4000, ("--all-tiles",)),
            ("tile/0/003.p/232", 100, ()),         # right edge: always read
            ("tile/1/000.p/3", 33, ()),
            ("tile/1/000.p/3", 95, ()),
            ("tile/entries/000", 2, ("--entries",)),
            ("tile/entries/001", 5000, ("--entries",)),
            ("tile/entries/003.p/232", 17, ("--entries",)),
            ("tile/entries/002", 0, ("--prove", "513")),  # a length prefix
            ("checkpoint", 50, ()),
        ]
        for rel, offset, flags in cases:
            with flipped(self.tile(rel), offset, 3):
                self.fails("tiles", SMALL_DIR, *flags)
        # Exhaustive in-process over the small tiles, sampled over the big ones.
        for rel, step, flag in (("tile/1/000.p/3", 1, "--all-tiles"),
                                ("tile/0/003.p/232", 61, "--all-tiles"),
                                ("tile/0/001", 127, "--all-tiles"),
                                ("tile/entries/003.p/232", 409, "--entries")):
            path = self.tile(rel)
            for offset in range(0, os.path.getsize(path), step):
                for bit in range(8):
                    with flipped(path, offset, bit):
                        rc = run_inprocess("--vkey", LOG_KEY.vkey, "tiles", SMALL_DIR, flag)
                        self.assertEqual(rc, 1, f"{rel} byte {offset} bit {bit}")

    def test_flipped_bits_in_big_log(self):
        for rel, offset, flags in (("tile/2/000.p/1", 7, ()), ("tile/1/000", 300, ("--all-tiles",)),
                                   ("tile/1/001.p/17", 500, ()),
                                   ("tile/0/100", 64, ("--all-tiles",)),
                                   ("tile/entries/100", 64, ("--entries",))):
            with flipped(self.tile(rel, BIG_DIR), offset, 0):
                self.fails("tiles", BIG_DIR, *flags)

    def test_wrong_shapes(self):
        full = self.tile("tile/0/001")
        with open(full, "rb") as f:
            data = f.read()
        for bad in (data[:-1], data + b"\0", data[:-32], data + data[:32]):
            with replaced(full, bad):
                self.fails("tiles", SMALL_DIR, "--all-tiles")
        bundle = self.tile("tile/entries/001")
        with open(bundle, "rb") as f:
            entries = f.read()
        extra = entries + len(BIG.records[0]).to_bytes(2, "big") + BIG.records[0]
        for bad in (entries[:-1], entries + b"\0", extra, entries + b"\0\0"):
            with replaced(bundle, bad):
                self.fails("tiles", SMALL_DIR, "--entries")
        with replaced(self.tile("tile/entries/000"), b"\0\0" * 257):
            self.fails("tiles", SMALL_DIR, "--entries")
        # A bundle whose records are swapped: the level-0 hashes then disagree.
        records = BIG.records[256:512]
        swapped = [records[1], records[0]] + records[2:]
        with replaced(bundle, b"".join(len(r).to_bytes(2, "big") + r for r in swapped)):
            self.fails("tiles", SMALL_DIR, "--entries")
        # A missing tile the checkpoint needs is an I/O error.
        with replaced(self.tile("tile/1/000.p/3"), None):
            self.fails("tiles", SMALL_DIR, code=2)

    def test_consistent_log_with_wrong_seqs(self):
        # Every hash matches and the checkpoint is signed, but record 6 says seq 5.
        records = BIG.records[:300]
        records = records[:5] + [records[4]] + records[6:]
        lying = Log(300, LOG_KEY, records)
        folder = lying.write(tmp("lying"), 300)
        self.verified("tiles", folder)
        self.fails("tiles", folder, "--entries")
        self.fails("tiles", folder, "--prove", "6")
        self.verified("tiles", folder, "--prove", "7")

    def test_partial_tiles_replaced_by_full_ones(self):
        # The log grew from 1000 to 1100: the partial level-0 tile and bundle of size 1000
        # were deleted once the full ones existed; a client at 1000 reads the full ones.
        folder = tmp("grown")
        BIG.write(folder, 1100)
        BIG.write(folder, SMALL_SIZE)
        os.remove(self.tile("tile/0/003.p/232", folder))
        os.remove(self.tile("tile/entries/003.p/232", folder))
        out = self.verified("tiles", folder, "--entries", "--prove", "1000")
        self.assertEqual(out.splitlines()[-1], f"verified size={SMALL_SIZE} entries=1000")
        with flipped(self.tile("tile/0/003", folder), 231 * 32, 0):
            self.fails("tiles", folder)
        with flipped(self.tile("tile/0/003", folder), 232 * 32, 0):   # beyond size 1000
            self.verified("tiles", folder, "--entries")

    def test_witnessed_tiles(self):
        folder = BIG.write(tmp("witnessed"), 300,
                           BIG.checkpoint(300, witnesses=(WITNESS1, WITNESS2)))
        out = self.verified("tiles", folder, "--witness-vkey", WITNESS1.vkey,
                            "--witness-vkey", WITNESS2.vkey, "--require-witnesses", "2")
        self.assertEqual(out, "witnesses=2\nverified size=300 entries=0\n")
        one = BIG.write(tmp("witnessed1"), 300, BIG.checkpoint(300, witnesses=(WITNESS1,)))
        self.fails("tiles", one, "--witness-vkey", WITNESS1.vkey,
                   "--witness-vkey", WITNESS2.vkey, "--require-witnesses", "2")
        with flipped(os.path.join(folder, "checkpoint"),
                     len(BIG.checkpoint(300, witnesses=(WITNESS1, WITNESS2))) - 9, 0):
            self.fails("tiles", folder, "--witness-vkey", WITNESS1.vkey,
                       "--witness-vkey", WITNESS2.vkey, "--require-witnesses", "1")


# ---------------------------------------------------------------------------
# `tiles` over HTTPS
# ---------------------------------------------------------------------------

def make_tls_material(folder: str, name: str) -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=True,
                                         crl_sign=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(ski, critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(folder, f"{name}.crt"), os.path.join(folder, f"{name}.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM,
                                  serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path


class TileServer(http.server.BaseHTTPRequestHandler):
    """Serves SMALL_DIR under /log/ to a bearer token; gzips entry bundles when asked;
    /redirect/... answers 302 to /log/..."""
    token = "s3cret-token"
    folder = ""

    def do_GET(self):
        if self.headers.get("Authorization") != f"Bearer {self.token}":
            return self.answer(401, b"no")
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", "/log/" + self.path[len("/redirect/"):])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if not self.path.startswith("/log/") or ".." in self.path:
            return self.answer(404, b"")
        path = os.path.join(self.folder, *self.path[len("/log/"):].split("/"))
        if not os.path.isfile(path):
            return self.answer(404, b"")
        with open(path, "rb") as f:
            data = f.read()
        gz = "gzip" in self.headers.get("Accept-Encoding", "") and "/entries/" in self.path
        return self.answer(200, gzip.compress(data) if gz else data, gz)

    def answer(self, code: int, body: bytes, gz: bool = False):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "application/octet-stream")
        if gz:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class TilesHttps(CliCase):
    @classmethod
    def setUpClass(cls):
        folder = tmp("tls")
        os.makedirs(folder, exist_ok=True)
        cls.cert, key = make_tls_material(folder, "server")
        cls.other_ca, _ = make_tls_material(folder, "other")
        cls.token = write("tls/token", TileServer.token + "\n")
        cls.bad_token = write("tls/badtoken", "wrong\n")
        TileServer.folder = SMALL_DIR
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cls.cert, key)
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TileServer)
        cls.server.socket = context.wrap_socket(cls.server.socket, server_side=True)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.base = f"https://127.0.0.1:{cls.server.server_address[1]}/log"

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def test_https(self):
        out = self.verified("tiles", self.base, "--token-file", self.token, "--cacert",
                            self.cert, "--entries", "--prove", "1000")
        self.assertEqual(out.splitlines()[-1], f"verified size={SMALL_SIZE} entries=1000")
        self.verified("tiles", self.base + "/", "--token-file", self.token,
                      "--cacert", self.cert)
        with flipped(os.path.join(SMALL_DIR, "tile", "entries", "001"), 300, 2):
            self.fails("tiles", self.base, "--token-file", self.token, "--cacert", self.cert,
                       "--entries")
        with flipped(os.path.join(SMALL_DIR, "tile", "1", "000.p", "3"), 0, 2):
            self.fails("tiles", self.base, "--token-file", self.token, "--cacert", self.cert)

    def test_refusals(self):
        common = ("--cacert", self.cert)
        self.fails("tiles", self.base, *common, code=2)                      # no token: 401
        self.fails("tiles", self.base, "--token-file", self.bad_token, *common, code=2)
        self.fails("tiles", self.base, "--token-file", self.token, code=2)   # system CAs
        self.fails("tiles", self.base, "--token-file", self.token,
                   "--cacert", self.other_ca, code=2)
        self.fails("tiles", self.base.replace("/log", "/redirect"), "--token-file",
                   self.token, *common, code=2)
        self.fails("tiles", self.base.replace("https:", "http:"), "--token-file",
                   self.token, code=2)
        self.fails("tiles", self.base + "/nothing-here", "--token-file", self.token,
                   *common, code=2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
