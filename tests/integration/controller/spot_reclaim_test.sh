#!/usr/bin/env bash
# Spot capacity, end to end through `gpufed run` on a simulated cloud (issue 37):
#   - workloads with spot: false never land on the spot pool, though it is the cheaper and
#     the one free: one of the two waits for the on-demand node;
#   - a checkpointable workload with spot: true does, and when the cloud reclaims the
#     spot node it is requeued as attempt 2, resuming from its last checkpoint, and
#     finishes: the journal books attempt 1 as preempted and the workload as succeeded.
# Usage: spot_reclaim_test.sh GPUFED
set -euo pipefail
G=$1
T=$(mktemp -d /tmp/gpufed-spot.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/repo"
cat >"$T/repo/fleet.yaml" <<'YAML'
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: cloud}
spec:
  provider: aws
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: l4-spot, count: 1, spot: true, gpu: {model: L4, count: 4, memory: 24Gi}}
    - {name: l4, count: 1, gpu: {model: L4, count: 4, memory: 24Gi}}
  pricing: {currency: EUR, gpuHour: {L4: "0.80"}, spotGpuHour: {L4: "0.30"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team}
spec: {weight: 1}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: render-spot}
spec:
  tenant: team
  type: rendering
  spot: true
  resources: {gpus: 4, gpuModels: [L4]}
  durationHint: 3h
  checkpoint: {enabled: true, interval: 30m}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: train-ondemand}
spec:
  tenant: team
  type: training
  resources: {gpus: 4, gpuModels: [L4]}
  durationHint: 2h
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: eval-ondemand}
spec:
  tenant: team
  type: batch
  resources: {gpus: 4, gpuModels: [L4]}
  durationHint: 1h
YAML
cat >"$T/scenario.yaml" <<'YAML'
failures:
  - {cluster: cloud, type: spot-reclaim, node: l4-spot-0, at: 1h15m}
YAML
"$G" run --config "$T/repo" --state "$T/state" --scenario "$T/scenario.yaml" --speed 0 --until-idle \
  >"$T/out" 2>"$T/err" || { echo "FAIL: gpufed run exited $?" >&2; cat "$T/out" "$T/err" >&2; exit 1; }
"$G" audit query -d "$T/state/audit" --kind decision -o jsonl >"$T/decisions.json"
"$G" audit query -d "$T/state/audit" --kind attempt-metered -o jsonl >"$T/metered.json"
python3 - "$T/decisions.json" "$T/metered.json" <<'PY'
import json, sys

def records(path):
    return [json.loads(line) for line in open(path) if line.strip()]

placed = [r for r in records(sys.argv[1]) if r.get("outcome") == "placed"]
metered = records(sys.argv[2])
def pools_of(name):  # node names are <pool>-<index>
    return [n.rsplit("-", 1)[0] for r in placed if r["workload"] == name for n in r["target"]["nodes"]]
fail = []
ondemand, spot = pools_of("train-ondemand"), pools_of("render-spot")
evaluation = pools_of("eval-ondemand")
if not ondemand or not evaluation or "l4-spot" in ondemand + evaluation:
    fail.append("spot: false work placed on %s (train), %s (eval)" % (ondemand, evaluation))
if len(spot) < 2 or spot[0] != "l4-spot":
    fail.append("render-spot should be placed on l4-spot, then again after the reclaim: %s" % spot)
booked = {(r["workload"], r["attempt"]): r for r in metered}
first, second = booked.get(("render-spot", 1)), booked.get(("render-spot", 2))
if first is None or first["outcome"] != "preempted" or first["finishedMillis"] != 4500000:
    fail.append("attempt 1 of render-spot should be booked preempted at 1h15m: %s" % first)
# Resumed from the checkpoint of 1h: 2 of its 3 hours are left (a restart would run 3).
if second is None or second["outcome"] != "succeeded" or second["gpuSeconds"] != 4 * 2 * 3600:
    fail.append("attempt 2 of render-spot should run the 2h after its checkpoint and succeed: %s" % second)
if fail:
    print("FAIL: " + "; ".join(fail))
    sys.exit(1)
print("PASS: train on %s, eval on %s; render-spot on %s, preempted at 1h15m, resumed from 1h" % (ondemand, evaluation, spot))
PY
