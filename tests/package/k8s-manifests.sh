#!/usr/bin/env bash
# The Kubernetes manifests in deploy/kubernetes/ (one replica) and deploy/kubernetes-ha/
# (replicas on a PostgreSQL store, a kustomize variant of the first) against the
# Kubernetes OpenAPI schema and for consistency (k8s_manifests.py says what is checked),
# offline. With kubectl on PATH, the check's own rendering of each kustomization must also
# equal `kubectl kustomize`'s. Then the check itself: each planted fault below must be
# refused, so a checker that accepts everything fails this test too.
#
# Usage: tests/package/k8s-manifests.sh [REPO_ROOT]
# Exit: 0 valid; 1 a manifest is invalid or a planted fault went unnoticed;
#       77 python3 or its yaml module is missing (CTest: SKIP_RETURN_CODE 77).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$(cd "$here/../.." && pwd)}
check=$here/k8s_manifests.py
folders=(kubernetes kubernetes-ha)

command -v python3 >/dev/null || { echo "k8s-manifests: skipped: no python3"; exit 77; }
python3 -c 'import yaml' 2>/dev/null || { echo "k8s-manifests: skipped: no python3-yaml (apt-get install python3-yaml)"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_check() {
  python3 "$check" --config "$root/deploy/config/gpufed.yaml" \
    --run-source "$root/controller/cli/run_command.cc" "$@"
}

for folder in "${folders[@]}"; do
  if command -v kubectl >/dev/null; then
    kubectl kustomize "$root/deploy/$folder" >"$work/$folder.rendered.yaml"
    run_check --compare-with "$work/$folder.rendered.yaml" "$root/deploy/$folder"
  else
    run_check "$root/deploy/$folder"
  fi
done
command -v kubectl >/dev/null || echo "k8s-manifests: no kubectl: the rendering was not compared with kustomize's"

failed=0
planted=0
# plant FOLDER FILE FROM TO EXPECTED: copy deploy/kubernetes*, replace FROM by TO in
# FOLDER/FILE once, and require the check of FOLDER to fail with a line containing EXPECTED.
plant() {
  local folder=$1 file=$2 from=$3 to=$4 expected=$5
  planted=$((planted + 1))
  rm -rf "$work/d" && mkdir "$work/d"
  for f in "${folders[@]}"; do cp -r "$root/deploy/$f" "$work/d/$f"; done
  python3 - "$work/d/$folder/$file" "$from" "$to" <<'PY'
import sys
path, old, new = sys.argv[1:]
text = open(path, encoding="utf-8").read()
if old not in text:
    sys.exit(f"k8s-manifests: planted fault: {old!r} is not in {path}")
open(path, "w", encoding="utf-8").write(text.replace(old, new, 1))
PY
  local out
  if out=$(run_check "$work/d/$folder" 2>&1); then
    echo "k8s-manifests: FAIL: accepted a planted fault in $folder/$file ($from -> $to)"
    failed=1
  elif ! grep -qF -- "$expected" <<<"$out"; then
    echo "k8s-manifests: FAIL: planted fault in $folder/$file ($from -> $to) refused without '$expected':"
    echo "$out"
    failed=1
  fi
}
# One replica (deploy/kubernetes/).
k=kubernetes
plant $k deployment.yaml "readinessProbe:" "readinesProbe:" "readinesProbe: unknown field"
plant $k deployment.yaml "terminationGracePeriodSeconds: 90" 'terminationGracePeriodSeconds: "90"' "expected an integer"
plant $k deployment.yaml "requests: {cpu: 500m, memory: 512Mi}" "requests: {cpu: 500x, memory: 512Mi}" "not a quantity"
plant $k deployment.yaml "scheme: HTTPS}" "scheme: HTTPX}" "'HTTPX' is not one of"
plant $k deployment.yaml "claimName: gpufed-state" "claimName: gpufed-stat" "'gpufed-stat' does not exist"
plant $k deployment.yaml "readOnlyRootFilesystem: true" "readOnlyRootFilesystem: false" "readOnlyRootFilesystem: true"
plant $k deployment.yaml "terminationGracePeriodSeconds: 90" "terminationGracePeriodSeconds: 30" "must exceed drainTimeout"
plant $k service.yaml "targetPort: https" "targetPort: http" "no port of gpufed's containers"
plant $k rbac.yaml "verbs: [create, get, list, delete]" "verbs: [create, get, list]" "may not delete batch/jobs"
plant $k rbac.yaml "verbs: [get, list]" "verbs: [get, list, watch]" "grants 'watch'"
plant $k configmap.yaml "maxBody: 1MiB" "maxbody: 1MiB" "keys differ from deploy/config/gpufed.yaml"
plant $k configmap.yaml "listen: 0.0.0.0:8443" "listen: 0.0.0.0:8080" "not on a port the container declares"
plant $k kustomization.yaml "  - service.yaml" "" "resources does not list service.yaml"
plant $k configmap.yaml "auditKey: /run/gpufed/secrets/audit-signing.key" 'auditKey: ""' "auditKey is empty"
plant $k configmap.yaml "auditKey: /run/gpufed/secrets/audit-signing.key" "auditKey: /var/lib/gpufed/audit.key" "is on the state volume"
# Replicas on a PostgreSQL store (deploy/kubernetes-ha/, rendered with the base).
h=kubernetes-ha
plant $h statefulset.yaml "volumeClaimTemplates:" "volumeClaimTemplate:" "volumeClaimTemplate: unknown field"
plant $h statefulset.yaml "podManagementPolicy: Parallel" "podManagementPolicy: OrderedReady" "spec.podManagementPolicy: Parallel"
plant $h statefulset.yaml "type: OnDelete" "type: RollingUpdate" "spec.updateStrategy.type: OnDelete"
plant $h statefulset.yaml "replicas: 3" "replicas: 1" "two or three replicas"
plant $h statefulset.yaml "serviceName: gpufed-replicas" "serviceName: gpufed-replica" "'gpufed-replica' names no Service"
plant $h service-replicas.yaml "clusterIP: None" "clusterIP: 10.0.0.10" "must be headless"
plant $h service-replicas.yaml "publishNotReadyAddresses: true" "publishNotReadyAddresses: false" "must publish not-ready pods"
plant $h patches/service.yaml "publishNotReadyAddresses: false" "publishNotReadyAddresses: true" "the clients' Service must route to Ready pods only"
plant $h service-replicas.yaml "app.kubernetes.io/component: controller" "app.kubernetes.io/component: ctl" "does not select the pods"
plant $h statefulset.yaml "https://\$(POD_NAME).gpufed-replicas.gpufed.svc:8443" "https://\$(POD_NAME).gpufed.gpufed.svc:8443" "args: --advertise"
plant $h statefulset.yaml "- --lease-retry" "- --lease-retries" "unknown flag --lease-retries"
plant $h statefulset.yaml "            - \$(POD_NAME)" "            - \$(POD)" "which env does not define"
plant $h statefulset.yaml "            - 2s" "            - 12s" "--lease-retry < --renew-deadline < --lease-duration"
plant $h statefulset.yaml "secretName: gpufed-store" "secretName: gpufed-stor" "'gpufed-stor' does not exist"
plant $h statefulset.yaml "secretKeyRef: {name: gpufed-store, key: uri}" "secretKeyRef: {name: gpufed-stor, key: uri}" "'gpufed-stor' does not exist"
plant $h statefulset.yaml "install -m 0600 /run/gpufed/store-src/pgpass" "install -m 0644 /run/gpufed/store-src/pgpass" "env PGPASSFILE /run/gpufed/secrets/pgpass: no init container copies it there with mode 0600"
plant $h statefulset.yaml "topologyKey: kubernetes.io/hostname" "topologyKey: topology.kubernetes.io/zone" "required podAntiAffinity on kubernetes.io/hostname"
plant $h statefulset.yaml "mountPath: /var/lib/gpufed}" "mountPath: /var/lib/gpufed-state}" "is on no mounted volume"
plant $h statefulset.yaml "runAsNonRoot: true" "runAsNonRoot: false" "runAsNonRoot: true and a non-zero runAsUser"
plant $h pdb.yaml "unhealthyPodEvictionPolicy: AlwaysAllow" "unhealthyPodEvictionPolicy: IfHealthyBudget" "unhealthyPodEvictionPolicy: AlwaysAllow"
plant $h pdb.yaml "maxUnavailable: 1" "maxUnavailable: 2" "maxUnavailable: 1"
plant $h kustomization.yaml "  - path: patches/no-deployment.yaml" "" "patches does not list patches/no-deployment.yaml"
plant $h kustomization.yaml "  - path: patches/no-deployment.yaml" "" "a second workload runs gpufed"
plant $h kustomization.yaml "  - pdb.yaml" "" "no PodDisruptionBudget selects the pods"
plant $h kustomization.yaml "patches:" "namePrefix: x-"$'\n'"patches:" "namePrefix: not rendered by this check"
plant $h patches/no-pvc.yaml "name: gpufed-state" "name: gpufed-stat" "the patch names no object"
((failed == 0)) || exit 1
echo "k8s-manifests: $planted planted faults refused"
