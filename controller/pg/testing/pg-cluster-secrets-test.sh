#!/usr/bin/env bash
# The test fixtures' role passwords never reach the server as text: pg-cluster.sh creates
# the role from the password's SCRAM verifier (scram_verifier.py), so a statement log (or
# pg_stat_statements) holds no password. Run against a cluster of its own that logs every
# statement; the role must still log in with the password from the passfile.
# Usage: pg-cluster-secrets-test.sh   (skips, exit 77, without PostgreSQL 15 outside CI;
# pg-cluster.sh fails the start instead when CI is set)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
state=$(mktemp /tmp/gpufed-pg-secrets.XXXXXX)
cleanup() { "$here/pg-cluster.sh" stop "$state" >/dev/null 2>&1 || true; rm -f "$state"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

GPUFED_PG_CONF="log_statement = 'all'" "$here/pg-cluster.sh" start "$state"
value() { sed -n "s/^$1=//p" "$state" | head -1; }
if [[ -n $(value missing) ]]; then
  echo "skipped: $(value missing)"
  exit 77
fi
password=$(cut -d: -f5 "$(value passfile)")
[[ ${#password} -ge 32 ]] || fail "no password in the passfile"
log=$(value dir)/log/server.log
grep -q 'CREATE ROLE gpufed LOGIN CREATEDB PASSWORD .SCRAM-SHA-256\$4096:' "$log" ||
  fail "the role's statement is not in the server's log as a verifier: $(grep -c . "$log") lines"
if grep -qF "$password" "$log"; then fail "the password is in the server's log"; fi
got=$(psql -X -At "host=127.0.0.1 port=$(value port) user=gpufed dbname=postgres sslmode=verify-full sslrootcert=$(value ca) passfile=$(value passfile)" -c "SELECT current_user")
[[ $got == gpufed ]] || fail "the role did not log in with its password: $got"
echo "pg-cluster secrets test: OK (the log holds the verifier, not the password; SCRAM login over TLS works)"
