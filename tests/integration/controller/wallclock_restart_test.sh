#!/usr/bin/env bash
# A wall-clock controller keeps a workload's queue wait across a restart. A `local` on-prem
# cluster with one GPU is held by a restricted job; a second workload waits for on-prem
# and may burst to the (simulated) cloud after queueWait: 20s. The controller is killed
# (SIGKILL) a few seconds into that wait and started again: the wait it reports after the
# restart counts from the submission, not from the new process, and the workload bursts
# about 20 s after it was first queued (when the clock restarted at 0 it burst 20 s after
# the restart instead). Every queued decision journalled reports its true wait (the restart
# journals one again only when it changed). The wait is long enough that a restart slowed by a loaded machine
# (10 s were seen under a parallel build and test run) still comes back before it ends.
# Usage: wallclock_restart_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1
T=$(mktemp -d /tmp/gpufed-wallclock.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  # the blocker job runs in its own session: end its group (its pid is in the job folder)
  for f in "$T"/state/connectors/onprem/jobs/*/pid; do [ -f "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$T/run.out" >&2 2>/dev/null || true; exit 1; }

mkdir -p "$T/repo"
cat >"$T/repo/fleet.yaml" <<'YAML'
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata:
  name: onprem
  # The blocker only sleeps; this test is about the clock, not isolation: jobs run as the
  # controller's user (connectors/local/README.md), in a job root inside the test folder.
  annotations: {local.gpufed.io/allow-controller-user: "true", local.gpufed.io/job-root: JOB_ROOT}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: local}
  nodePools:
    - {name: box, count: 1, cpu: 2, memory: 2Gi, gpu: {model: A100-40GB, count: 1, memory: 40Gi}}
  pricing: {currency: EUR, gpuHour: {A100-40GB: "0.50"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: cloud}
spec:
  provider: ionos
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: h100, count: 1, cpu: 8, memory: 64Gi, gpu: {model: H100-80GB, count: 1, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {H100-80GB: "3.90"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: lab}
spec:
  quota: {maxGpus: 4}
  budget: {period: monthly, limit: "100 EUR"}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: burst}
spec:
  enforcement: deny
  rules:
    - name: restricted-stays-onprem
      when: {data.sensitivity: restricted}
      require: {cluster.provider: onprem}
  burst: {queueWait: 20s}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: blocker}
spec:
  tenant: lab
  priority: 1000
  resources: {gpus: 1}
  data: {sensitivity: restricted}
  run: {command: [sleep, "300"]}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: waiter}
spec:
  tenant: lab
  resources: {gpus: 1}
  durationHint: 5s
  run: {command: ["true"]}
YAML
sed -i "s|JOB_ROOT|$T/jobs|" "$T/repo/fleet.yaml"

start() { "$G" run --config "$T/repo" --state "$T/state" --resync 1s >>"$T/run.out" 2>&1 & pid=$!; }
waiter_decisions() { "$G" audit query -d "$T/state/audit" --workload waiter --output jsonl 2>/dev/null || true; }
wait_until() {  # DESCRIPTION COMMAND...: polls (bounded to 60 s)
  local what=$1; shift
  for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done
  fail "timed out waiting for $what"
}
queued() { waiter_decisions | grep -q '"outcome":"queued"'; }
# Seconds the waiter has been queued, from the journal's own record times.
queued_for() { waiter_decisions | python3 -c '
import json, sys, time
first = min(json.loads(l)["time"] for l in sys.stdin if "\"outcome\":\"queued\"" in l)
from datetime import datetime
t = datetime.fromisoformat(first.replace("Z", "+00:00")).timestamp()
print(int(time.time() - t))'; }

start
wait_until "the waiter to queue" queued
over_three() { [ "$(queued_for)" -ge 3 ]; }
wait_until "3 s of queue wait" over_three
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true; pid=""
before_restart=$(queued_for)
start
placed() { waiter_decisions | grep -q '"outcome":"placed"'; }
wait_until "the waiter to burst" placed
kill -TERM "$pid"; wait "$pid" || true; pid=""

waiter_decisions | python3 -c '
import json, re, sys
from datetime import datetime
before_restart = int(sys.argv[1])
def secs(text):
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?", text)
    h, mi, s, ms = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0) + int(ms or 0) / 1000
def when(r): return datetime.fromisoformat(r["time"].replace("Z", "+00:00")).timestamp()
records = [json.loads(l) for l in sys.stdin]
queued = [r for r in records if r.get("outcome") == "queued"]
placed = [r for r in records if r.get("outcome") == "placed"]
assert placed and placed[0]["target"]["cluster"] == "cloud", placed
# Every wait a queued decision reports matches the time since the first one (within a pass).
for r in queued:
    waits = re.findall(r"waited ([0-9hms.]+) of 20s", json.dumps(r))
    assert waits, r
    true_wait = when(r) - when(queued[0])
    assert abs(secs(waits[0]) - true_wait) <= 1.5, (waits[0], true_wait)
# The restart journals a queued decision again only when it changed (schema 11): the
# time of the burst, below, is what shows the wait counted across the restart.
assert placed[0]["time"] > max(r["time"] for r in queued), "placed before its last queued decision"
assert when(placed[0]) - when(queued[0]) >= before_restart, "placed before the restart"
burst_after = when(placed[0]) - when(queued[0])
assert 20 <= burst_after + 1.5 and burst_after <= 20 + 2.5, ("burst after", burst_after)
print("waited %.1f s before bursting; restart %d s into the wait" % (burst_after, before_restart))
' "$before_restart" || fail "queue wait across the restart"
echo "wallclock restart test: OK"
