#!/usr/bin/env bash
# Retention end to end: `gpufed run` with small journal segments, `gpufed audit archive`
# by seq, verification of the live journal alone (it says where it begins), of the archive
# alone and of both as one history; a proof of an archived record; a second `gpufed run`
# on the same state that starts and appends; then archive by date and verify again.
# Usage: archive_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1 SRC=$2
T=$(mktemp -d /tmp/gpufed-archive.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
A=$T/state/audit
KEY=$A/signing.pub
run() {
  "$G" run --config "$SRC/examples/quickstart" --until-idle --state "$T/state" --audit-segment-size 64KiB \
    >"$T/run.out" 2>&1 || { cat "$T/run.out" >&2; fail "gpufed run"; }
}
segments() { find "$1/journal" -maxdepth 1 -name '*.log' -printf '%f\n' | sort; }
seq_of() { echo $((10#${1%.log})); }

run
[ "$(segments "$A" | wc -l)" -ge 4 ] || fail "expected several segments, got: $(segments "$A" | tr '\n' ' ')"
"$G" audit verify "$A" --key "$KEY" --require-closed >"$T/whole.out" || { cat "$T/whole.out"; fail "verify before"; }
whole_records=$(grep -o '^OK: [0-9]*' "$T/whole.out" | cut -d' ' -f2)

# By seq: the segments whose last seq is below the third segment's first.
third=$(segments "$A" | sed -n 3p)
bound=$(seq_of "$third")
"$G" audit archive "$A" --before "$bound" --to "$T/archive" >"$T/archive.out" 2>&1 ||
  { cat "$T/archive.out" >&2; fail "audit archive --before $bound"; }
[ "$(grep -c '^archived ' "$T/archive.out")" -eq 2 ] || { cat "$T/archive.out"; fail "two segments archived"; }
grep -q "the live journal begins at seq $bound" "$T/archive.out" || { cat "$T/archive.out"; fail "new beginning"; }
[ "$(segments "$A" | head -1)" = "$third" ] || fail "the live journal does not begin with $third"
[ "$(segments "$T/archive" | wc -l)" -eq 2 ] || fail "the archive holds $(segments "$T/archive" | wc -l) segments"
[ "$(stat -c %a "$T/archive")" = 700 ] || fail "the archive folder is not private"

# The live journal alone: OK, and it says where it begins; --require-complete refuses it.
"$G" audit verify "$A" --key "$KEY" >"$T/live.out" || { cat "$T/live.out"; fail "verify the live journal alone"; }
grep -q "^OK: [0-9]* records (seq $bound-" "$T/live.out" || { cat "$T/live.out"; fail "live range"; }
grep -q "NOTE: the journal begins at seq $bound" "$T/live.out" || { cat "$T/live.out"; fail "no begins-at note"; }
if "$G" audit verify "$A" --key "$KEY" --require-complete >/dev/null; then fail "--require-complete passed a part"; fi
# The archive alone: an archive, not an unclosed journal.
"$G" audit verify "$T/archive" --key "$KEY" --require-closed >"$T/archive-verify.out" ||
  { cat "$T/archive-verify.out"; fail "verify the archive alone"; }
grep -q "^an archive of " "$T/archive-verify.out" || { cat "$T/archive-verify.out"; fail "archive not named"; }
grep -q "WARNING: unclosed" "$T/archive-verify.out" && fail "an archive reported as unclosed"
# Both as one: every record from seq 1, every signature.
"$G" audit verify "$A" --archive "$T/archive" --key "$KEY" --require-closed --require-complete >"$T/both.out" ||
  { cat "$T/both.out"; fail "verify with --archive"; }
grep -q "^OK: $whole_records records (seq 1-" "$T/both.out" || { cat "$T/both.out"; fail "both: records"; }

# An archived record: no proof without the archive, a proof that checks with it.
if "$G" audit prove "$A" --seq 1 >/dev/null 2>"$T/prove.err"; then fail "proved an archived record without it"; fi
grep -q "give its archive" "$T/prove.err" || { cat "$T/prove.err"; fail "prove's refusal"; }
"$G" audit prove "$A" --seq 1 --archive "$T/archive" >"$T/proof.json" || fail "audit prove --archive"
"$G" audit verify-proof "$T/proof.json" --key "$KEY" >/dev/null || fail "the archived record's proof"
# Queries read the whole history with --archive.
repo_subs() { "$G" audit query -d "$A" "$@" --kind workload-submitted --principal repository -o jsonl | wc -l; }
[ "$(repo_subs --archive "$T/archive")" -eq 31 ] || fail "query --archive: $(repo_subs --archive "$T/archive")"

# The controller starts again on the same state and appends.
before_restart=$(grep -o '(seq 1-[0-9]*' "$T/both.out" | cut -d- -f2)
run
"$G" audit verify "$A" --archive "$T/archive" --key "$KEY" --require-closed --require-complete >"$T/after.out" ||
  { cat "$T/after.out"; fail "verify after the restart"; }
after_restart=$(grep -o '(seq 1-[0-9]*' "$T/after.out" | cut -d- -f2)
[ "$after_restart" -gt "$before_restart" ] || fail "the restart appended nothing ($before_restart -> $after_restart)"
[ "$(repo_subs --archive "$T/archive")" -eq 31 ] || fail "the restart submitted the repository's workloads again"

# By date: everything sealed before a minute from now; only the newest segment stays.
"$G" audit archive "$A" --before "$(date -u -d '+1 minute' +%Y-%m-%dT%H:%M:%SZ)" --to "$T/archive" >"$T/date.out" ||
  { cat "$T/date.out"; fail "audit archive --before DATE"; }
grep -q "only the segment being written is left" "$T/date.out" || { cat "$T/date.out"; fail "date stop"; }
[ "$(segments "$A" | wc -l)" -eq 1 ] || fail "more than the newest segment stayed live"
"$G" audit verify "$A" --archive "$T/archive" --key "$KEY" --require-closed --require-complete >/dev/null ||
  fail "verify after archiving by date"
"$G" audit replay --all -d "$A" --archive "$T/archive" >"$T/replay.out" 2>&1 || { cat "$T/replay.out"; fail "replay"; }
grep -q " 0 different" "$T/replay.out" || { cat "$T/replay.out"; fail "replay differs"; }
run  # and once more: a start on a journal of one live segment
"$G" audit verify "$A" --key "$KEY" --require-closed >/dev/null || fail "verify the live journal after the last start"
echo "archive test: OK"
