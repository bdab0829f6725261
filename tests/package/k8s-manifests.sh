#!/usr/bin/env bash
# The Kubernetes manifests in deploy/kubernetes/ against the Kubernetes OpenAPI schema
# and the folder's own consistency (k8s_manifests.py says what is checked), offline.
# Then the check itself: each planted fault below must be refused, so a checker that
# accepts everything fails this test too.
#
# Usage: tests/package/k8s-manifests.sh [REPO_ROOT]
# Exit: 0 valid; 1 a manifest is invalid or a planted fault went unnoticed;
#       77 python3 or its yaml module is missing (CTest: SKIP_RETURN_CODE 77).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/../.." && pwd)}
check=$here/k8s_manifests.py

command -v python3 >/dev/null || { echo "k8s-manifests: skipped: no python3"; exit 77; }
python3 -c 'import yaml' 2>/dev/null || { echo "k8s-manifests: skipped: no python3-yaml (apt-get install python3-yaml)"; exit 77; }

python3 "$check" --config "$root/deploy/config/gpufed.yaml" "$root/deploy/kubernetes"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
# plant FILE FROM TO EXPECTED: copy the folder, replace FROM by TO in FILE once, and
# require the check to fail with a line containing EXPECTED.
plant() {
  local file=$1 from=$2 to=$3 expected=$4
  rm -rf "$work/k" && cp -r "$root/deploy/kubernetes" "$work/k"
  python3 - "$work/k/$file" "$from" "$to" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path, encoding="utf-8").read()
if old not in text:
    sys.exit(f"k8s-manifests: planted fault: {old!r} is not in {path}")
open(path, "w", encoding="utf-8").write(text.replace(old, new, 1))
PY
  local out
  if out=$(python3 "$check" --config "$root/deploy/config/gpufed.yaml" "$work/k" 2>&1); then
    echo "k8s-manifests: FAIL: accepted a planted fault in $file ($from -> $to)"
    failed=1
  elif ! grep -qF -- "$expected" <<<"$out"; then
    echo "k8s-manifests: FAIL: planted fault in $file ($from -> $to) refused without '$expected':"
    echo "$out"
    failed=1
  fi
}
plant deployment.yaml "readinessProbe:" "readinesProbe:" "readinesProbe: unknown field"
plant deployment.yaml "terminationGracePeriodSeconds: 90" 'terminationGracePeriodSeconds: "90"' "expected an integer"
plant deployment.yaml "requests: {cpu: 500m, memory: 512Mi}" "requests: {cpu: 500x, memory: 512Mi}" "not a quantity"
plant deployment.yaml "scheme: HTTPS}" "scheme: HTTPX}" "'HTTPX' is not one of"
plant deployment.yaml "claimName: gpufed-state" "claimName: gpufed-stat" "'gpufed-stat' does not exist"
plant deployment.yaml "readOnlyRootFilesystem: true" "readOnlyRootFilesystem: false" "readOnlyRootFilesystem: true"
plant deployment.yaml "terminationGracePeriodSeconds: 90" "terminationGracePeriodSeconds: 30" "must exceed drainTimeout"
plant service.yaml "targetPort: https" "targetPort: http" "no port of gpufed's containers"
plant rbac.yaml "verbs: [create, get, list, delete]" "verbs: [create, get, list]" "may not delete batch/jobs"
plant rbac.yaml "verbs: [get, list]" "verbs: [get, list, watch]" "grants 'watch'"
plant configmap.yaml "maxBody: 1MiB" "maxbody: 1MiB" "keys differ from deploy/config/gpufed.yaml"
plant configmap.yaml "listen: 0.0.0.0:8443" "listen: 0.0.0.0:8080" "not on a port the container declares"
plant kustomization.yaml "  - service.yaml" "" "resources does not list service.yaml"
plant configmap.yaml "auditKey: /run/gpufed/secrets/audit-signing.key" 'auditKey: ""' "auditKey is empty"
plant configmap.yaml "auditKey: /run/gpufed/secrets/audit-signing.key" "auditKey: /var/lib/gpufed/audit.key" "is on the state volume"
((failed == 0)) || exit 1
echo "k8s-manifests: 15 planted faults refused"
