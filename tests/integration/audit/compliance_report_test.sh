#!/usr/bin/env bash
# `gpufed audit report` judges each placement by the policy revision that decided it,
# through the real binary: a site whose stdlib/compliance-zones policy keeps PII in
# Switzerland (piiZones [ch], not the library's default [eu]) runs its work with `gpufed
# run`; then a second revision, in another folder, keeps PII in the EU and runs more work
# on the same state. The report passes the PII placed in ch under the first and in eu under
# the second (a report that checked the default [eu] flagged the first), says "unknown"
# for the first once its repository has moved on (exit 4), and judges it again when
# --repo names a copy of it.
# Usage: compliance_report_test.sh GPUFED
set -euo pipefail
G=$1
T=$(mktemp -d /tmp/gpufed-compliance-report.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {  # expect_rc RC OUT CMD...
  local want=$1 out=$2; shift 2
  set +e; "$@" >"$out" 2>"$out.err"; local rc=$?; set -e
  [ "$rc" = "$want" ] || { cat "$out" "$out.err" >&2; fail "'$*' exited $rc, expected $want"; }
}

# repository DIR PII_ZONES PII_WORKLOAD PII_CLUSTER
repository() {
  mkdir -p "$1"
  cat >"$1/fleet.yaml" <<'YAML'
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: zurich}
spec:
  provider: onprem
  region: ch-north
  zone: ch
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 4, memory: 80Gi}}
  pricing: {currency: CHF, gpuHour: {A100-80GB: "1.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: frankfurt}
spec:
  provider: ionos
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 4, memory: 80Gi}}
  pricing: {currency: CHF, gpuHour: {A100-80GB: "2.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team}
spec: {weight: 1}
YAML
  cat >"$1/policies.yaml" <<YAML
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: zones}
spec:
  import: stdlib/compliance-zones
  params: {piiZones: $2}
---
apiVersion: gpufed/v1alpha1
kind: PolicyTest
metadata: {name: pii}
spec:
  cases:
    - name: PII goes where the zones let it
      workload: {tenant: team, resources: {gpus: 1}, data: {pii: true}}
      expect: {placed: {cluster: $4}}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: $3}
spec:
  tenant: team
  type: training
  resources: {gpus: 2, gpuModels: [A100-80GB]}
  durationHint: 1h
  data: {pii: true}
YAML
}

repository "$T/ch" "[ch]" claims-ch zurich
repository "$T/eu" "[eu]" claims-eu frankfurt
"$G" run --config "$T/ch" --state "$T/state" --speed 0 --until-idle >"$T/run1.out" 2>&1 ||
  { cat "$T/run1.out" >&2; fail "gpufed run (piiZones [ch])"; }
"$G" run --config "$T/eu" --state "$T/state" --speed 0 --until-idle >"$T/run2.out" 2>&1 ||
  { cat "$T/run2.out" >&2; fail "gpufed run (piiZones [eu])"; }

verdicts() {  # verdicts REPORT.json: "workload zone verdict checks" per sensitive placement
  python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["sensitive"]:
    print(s["workload"], s["zone"], s["verdict"], "|".join(s["checks"]), (s.get("unknown") or {}).get("reason", ""))
' "$1"
}

# Both revisions are where the journal says: each placement judged by its own.
expect_rc 0 "$T/r1.json" "$G" audit report -d "$T/state/audit" -f json
verdicts "$T/r1.json" >"$T/v1"
grep -q "^claims-ch ch ok pii-zones \[ch\]|verdict" "$T/v1" || { cat "$T/v1"; fail "PII in ch under piiZones [ch]"; }
grep -q "^claims-eu eu ok pii-zones \[eu\]|verdict" "$T/v1" || { cat "$T/v1"; fail "PII in eu under piiZones [eu]"; }
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["revisions"]))' "$T/r1.json")" = 2 ] ||
  fail "expected two revisions in the report"

# The first repository moves on: its placements cannot be judged, and the report says so.
cp -r "$T/ch" "$T/ch-then"
sed -i 's/piiZones: \[ch\]/piiZones: [ch, eu]/' "$T/ch/policies.yaml"
expect_rc 4 "$T/r2.json" "$G" audit report -d "$T/state/audit" -f json
verdicts "$T/r2.json" >"$T/v2"
grep -q "^claims-ch ch unknown .* revision .* is not available: $T/ch is at revision " "$T/v2" ||
  { cat "$T/v2"; fail "a moved-on revision should be unknown"; }
grep -q "^claims-eu eu ok " "$T/v2" || { cat "$T/v2"; fail "the second revision is still there"; }
grep -q "NOT JUDGED: 1 placement" "$T/r2.json.err" || { cat "$T/r2.json.err"; fail "stderr names the unjudged"; }
expect_rc 4 "$T/r2.md" "$G" audit report -d "$T/state/audit"
grep -q "^> \*\*NOT JUDGED: 1 placement" "$T/r2.md" || { cat "$T/r2.md"; fail "markdown opens with NOT JUDGED"; }

# --repo names a checkout of it: judged again.
expect_rc 0 "$T/r3.json" "$G" audit report -d "$T/state/audit" -f json --repo "$T/ch-then"
verdicts "$T/r3.json" >"$T/v3"
grep -q "^claims-ch ch ok pii-zones \[ch\]" "$T/v3" || { cat "$T/v3"; fail "--repo did not bring the revision back"; }
# The fixed default is gone, and says so.
expect_rc 2 "$T/r4" "$G" audit report -d "$T/state/audit" --pii-zones eu
grep -q "piiZones of the policy revision that decided it" "$T/r4.err" || { cat "$T/r4.err"; fail "--pii-zones message"; }
echo "compliance report test: OK"
