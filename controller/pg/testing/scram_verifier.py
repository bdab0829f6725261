#!/usr/bin/env python3
"""Prints a SCRAM-SHA-256 verifier for the password read from standard input, in the form
PostgreSQL stores and accepts in place of a password (RFC 5803:
SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>). A script that creates a role
with `PASSWORD '<verifier>'` puts no password in the statement's text, which
pg_stat_statements and a statement log would otherwise keep in the clear.

The password must be ASCII without controls (SASLprep leaves such a password as it is; the
test fixtures' passwords are hex). Usage: scram_verifier.py < passwordfile
"""
import base64
import hashlib
import hmac
import os
import sys

ITERATIONS = 4096  # PostgreSQL's default (scram_iterations)


def verifier(password: bytes, salt: bytes, iterations: int = ITERATIONS) -> str:
    salted = hashlib.pbkdf2_hmac("sha256", password, salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    b64 = lambda b: base64.b64encode(b).decode("ascii")
    return "SCRAM-SHA-256$%d:%s$%s:%s" % (iterations, b64(salt), b64(stored_key), b64(server_key))


def main() -> int:
    password = sys.stdin.read().rstrip("\n")
    if not password or not all(0x20 < ord(c) < 0x7F for c in password):
        print("scram_verifier.py: the password must be printable ASCII without spaces", file=sys.stderr)
        return 2
    print(verifier(password.encode("ascii"), os.urandom(16)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
