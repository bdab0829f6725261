#!/usr/bin/env bash
# Schema conformance: the JSON Schemas in schemas/ (checked with ajv) and the C++ loader
# (`gpufed validate`) must agree on every fixture in tests/schema/fixtures/.
#
#   conformance.sh GPUFED_BINARY     full run
#   conformance.sh --ajv-only        schemas and fixtures against ajv only (no binary needed)
#
# Exit status: 0 all passed, 1 something failed, 2 usage error,
# 77 skipped (node or the npm packages are unavailable); CTest reports 77 as "Skipped".
# Under CI (CI=true) or GPUFED_REQUIRE_ALL=1 a missing dependency is a failure (exit 1)
# instead: a required test must never read as green because it could not run.
#
# Environment:
#   GPUFED_SCHEMA_STRICT_FIELDS=1  also fail when gpufed rejects an invalid fixture without
#                                  naming the field the fixture is about (default: warning)
#   GPUFED_SCHEMA_TIMEOUT=SECONDS  time limit per gpufed run (default 30)
set -uo pipefail

readonly SKIP=77
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fixtures="$here/fixtures"
strict_fields=${GPUFED_SCHEMA_STRICT_FIELDS:-0}
per_run_timeout=${GPUFED_SCHEMA_TIMEOUT:-30}

usage() {
  echo "usage: $0 GPUFED_BINARY | --ajv-only" >&2
  exit 2
}

[[ $# -eq 1 ]] || usage
gpufed=""
if [[ $1 == --ajv-only ]]; then
  :
elif [[ $1 == -* ]]; then
  usage
else
  gpufed=$1
  if [[ ! -x $gpufed || -d $gpufed ]]; then
    echo "conformance: $gpufed is not an executable file" >&2
    exit 2
  fi
  gpufed=$(cd "$(dirname "$gpufed")" && pwd)/$(basename "$gpufed")
fi

skip() {
  if [[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]]; then
    echo "conformance: FAILED: $* (CI=true or GPUFED_REQUIRE_ALL=1: dependencies are required)"
    exit 1
  fi
  echo "conformance: SKIPPED: $*"
  exit "$SKIP"
}

# ------------------------------------------------------------------ node and ajv

command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install nodejs npm)"

lock_hash() {
  { sha256sum "$here/package-lock.json" "$here/package.json" 2>/dev/null || cat "$here/package-lock.json" "$here/package.json"; } |
    sha256sum | cut -d' ' -f1
}

have_modules() {
  (cd "$here" && node --input-type=module -e 'await import("ajv/dist/2020.js"); await import("yaml");') >/dev/null 2>&1
}

install_modules() {
  local stamp="$here/node_modules/.gpufed-lock.sha256" want
  want=$(lock_hash)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]] && have_modules; then
    return 0  # node_modules matches the lockfile: nothing to do, works offline
  fi
  command -v npm >/dev/null 2>&1 || return 1
  echo "conformance: npm ci in $here"
  (cd "$here" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) || return 1
  have_modules || return 1
  echo "$want" >"$stamp"
}

# Serialise installs when several runs start at once (flock is optional).
if command -v flock >/dev/null 2>&1; then
  exec 9<"$here/package-lock.json"
  flock 9
fi
if ! install_modules; then
  if have_modules; then
    echo "conformance: warning: npm ci failed; using the node_modules already present"
  else
    skip "cannot install ajv and yaml with npm ci in $here (offline?)"
  fi
fi
if command -v flock >/dev/null 2>&1; then
  flock -u 9
fi

validate() { node "$here/validate.mjs" "$@"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
failures=()
warnings=()
pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() {
  failed=$((failed + 1))
  failures+=("$1")
  echo "FAIL $1"
}
join() {  # join ITEM... -> "a; b; c"
  local out=$1
  shift
  for item in "$@"; do out+="; $item"; done
  printf '%s' "$out"
}
warn() {
  warnings+=("$1")
  echo "warn $1"
}

# ------------------------------------------------------------------ the schemas themselves

echo "== schemas: meta-schema, compile (strict mode), descriptions, additionalProperties"
if validate --check-schemas >"$tmp/check.out" 2>&1; then
  pass "schemas: every schema is valid draft 2020-12 and compiles"
else
  cat "$tmp/check.out"
  fail "schemas: see the FAIL lines above"
fi

echo "== ajv self-test: valid/ passes, invalid/ fails for the field it names"
if validate --self-test "$fixtures" >"$tmp/self.out" 2>&1; then
  pass "ajv self-test ($(tail -n1 "$tmp/self.out"))"
else
  grep '^FAIL' "$tmp/self.out" || cat "$tmp/self.out"
  fail "ajv self-test: see the FAIL lines above"
fi

# ------------------------------------------------------------------ ajv verdicts

declare -A ajv_verdict ajv_messages
if ! validate --tsv "$fixtures/valid" "$fixtures/invalid" "$fixtures/context.yaml" >"$tmp/ajv.tsv" 2>"$tmp/ajv.err"; then
  # Exit 1 only means some file is invalid; anything else (no output) is a crash.
  if [[ ! -s $tmp/ajv.tsv ]]; then
    cat "$tmp/ajv.err" >&2
    fail "validate.mjs produced no results (see the error above)"
    echo
    echo "$passed passed, $failed failed"
    exit 1
  fi
fi
# Tabs become \x1f before `read`: IFS whitespace (tab) would merge empty columns.
while IFS=$'\x1f' read -r file verdict _fields messages; do
  rel=${file#"$fixtures"/}
  ajv_verdict[$rel]=$verdict
  ajv_messages[$rel]=$messages
done < <(tr '\t' '\037' <"$tmp/ajv.tsv")

mapfile -t fixture_list < <(cd "$fixtures" && find valid invalid -type f \( -name '*.yaml' -o -name '*.yml' \) | LC_ALL=C sort)
if [[ ${#fixture_list[@]} -eq 0 ]]; then
  fail "no fixtures found in $fixtures"
fi

expected_of() { [[ $1 == valid/* ]] && echo valid || echo invalid; }

if [[ -z $gpufed ]]; then
  echo "== fixtures (ajv only)"
  for rel in "${fixture_list[@]}"; do
    want=$(expected_of "$rel")
    got=${ajv_verdict[$rel]:-missing}
    if [[ $got == "$want" ]]; then
      pass "$rel (ajv: $got)"
    else
      fail "$rel: expected $want, ajv says $got ${ajv_messages[$rel]:-}"
    fi
  done
  echo
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]] && exit 0 || exit 1
fi

# ------------------------------------------------------------------ gpufed verdicts

run_gpufed() {  # run_gpufed OUT ERR FILE... -> exit status of gpufed
  local out=$1 err=$2
  shift 2
  if command -v timeout >/dev/null 2>&1; then
    (cd "$fixtures" && timeout "$per_run_timeout" "$gpufed" validate --output json "$@") >"$out" 2>"$err"
  else
    (cd "$fixtures" && "$gpufed" validate --output json "$@") >"$out" 2>"$err"
  fi
}

echo "== gpufed: context.yaml on its own"
run_gpufed "$tmp/ctx.out" "$tmp/ctx.err" context.yaml
rc=$?
ctx_valid=$(validate --summarize-gpufed context.yaml <"$tmp/ctx.out" | cut -f1)
case $rc in
  0)
    if [[ $ctx_valid == true ]]; then
      pass "context.yaml (gpufed: valid)"
    else
      cat "$tmp/ctx.out"
      fail "context.yaml: gpufed exits 0 but its JSON output says \"valid\": $ctx_valid"
    fi
    ;;
  1)
    cat "$tmp/ctx.out" "$tmp/ctx.err"
    fail "context.yaml: gpufed rejects the context every fixture is validated with"
    ;;
  *)
    echo "--- gpufed validate --output json context.yaml exited $rc; stdout:"
    head -c 2000 "$tmp/ctx.out"
    echo "--- stderr:"
    head -c 2000 "$tmp/ctx.err"
    echo "---"
    fail "gpufed validate is unusable (exit $rc)"
    echo
    echo "$passed passed, $failed failed"
    exit 1
    ;;
esac

echo "== fixtures: ajv and gpufed must agree with the folder each fixture is in"
strip_index() { sed -E 's/\[([0-9]+)\]/.\1/g' <<<"$1"; }
# field_named EXPECTED "a,b,c": is some reported field EXPECTED or below it?
field_named() {
  local want got
  want=$(strip_index "$1")
  IFS=',' read -ra got <<<"$2"
  for g in "${got[@]}"; do
    g=$(strip_index "$g")
    [[ $g == "$want" || $g == "$want".* ]] && return 0
  done
  return 1
}

for rel in "${fixture_list[@]}"; do
  want=$(expected_of "$rel")
  ajv=${ajv_verdict[$rel]:-missing}

  run_gpufed "$tmp/out" "$tmp/err" context.yaml "$rel"
  rc=$?
  case $rc in
    0) cli=valid ;;
    1) cli=invalid ;;
    124) cli="timeout after ${per_run_timeout}s" ;;
    *) cli="error (exit $rc)" ;;
  esac
  IFS=$'\x1f' read -r json_valid _docs cli_fields foreign cli_messages \
    < <(validate --summarize-gpufed "$rel" <"$tmp/out" | tr '\t' '\037')

  problems=()
  [[ $ajv != "$want" ]] && problems+=("ajv says $ajv${ajv_messages[$rel]:+: ${ajv_messages[$rel]}}")
  [[ $cli != "$want" ]] && problems+=("gpufed says $cli${cli_messages:+: $cli_messages}")
  if [[ $cli == valid || $cli == invalid ]]; then
    if [[ $json_valid == unparsable ]]; then
      problems+=("gpufed output is not JSON: $(head -c 300 "$tmp/out" | tr '\n' ' ')")
    elif [[ $json_valid != true && $json_valid != false ]]; then
      problems+=("gpufed JSON has no boolean 'valid'")
    elif [[ ($json_valid == true && $cli != valid) || ($json_valid == false && $cli != invalid) ]]; then
      problems+=("gpufed exit status $rc contradicts \"valid\": $json_valid")
    fi
  fi
  if [[ $ajv != "$cli" && ${#problems[@]} -gt 0 ]]; then
    problems=("ajv and gpufed disagree (ajv: $ajv, gpufed: $cli)" "${problems[@]}")
  fi

  if [[ ${#problems[@]} -gt 0 ]]; then
    [[ -s $tmp/err ]] && problems+=("gpufed stderr: $(head -c 300 "$tmp/err" | tr '\n' ' ')")
    fail "$rel: $(join "${problems[@]}")"
    continue
  fi

  # Both reject an invalid fixture: they should reject it for the same field, and in the
  # fixture rather than in context.yaml.
  if [[ $want == invalid ]]; then
    notes=()
    [[ -n $foreign ]] && notes+=("gpufed reports errors in $foreign")
    while read -r field; do
      field_named "$field" "$cli_fields" || notes+=("gpufed does not name $field (names: ${cli_fields:-nothing})")
    done < <(sed -nE 's/^#[[:space:]]*field:[[:space:]]*(\S+)[[:space:]]*$/\1/p' "$fixtures/$rel")
    if [[ ${#notes[@]} -gt 0 ]]; then
      if [[ $strict_fields == 1 ]]; then
        fail "$rel: $(join "${notes[@]}")"
        continue
      fi
      warn "$rel: $(join "${notes[@]}")"
    fi
  fi
  pass "$rel (ajv: $ajv, gpufed: $cli)"
done

echo
if [[ ${#warnings[@]} -gt 0 ]]; then
  echo "${#warnings[@]} warning(s) (set GPUFED_SCHEMA_STRICT_FIELDS=1 to make them failures)"
fi
if [[ $failed -gt 0 ]]; then
  echo "failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
