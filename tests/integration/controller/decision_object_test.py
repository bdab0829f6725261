#!/usr/bin/env python3
"""One decision object everywhere (issue 41): for each workload of a repository written
here (not the quickstart), `gpufed plan -o json`, the audit journal's decision record,
GET /v1/decisions and GET .../explain carry the same decision object
(controller/placement/decision_object.h), field for field.

The repository has an EU on-prem cluster and a US cloud cluster, a deny rule that keeps
PII in the EU, and three workloads: one placed on-prem (the cloud rejected by the rule),
one that asks for a GPU model only the cloud has (placed there), and one PII workload
too large for the EU (never placed: every cluster has a verdict against it).

Usage: decision_object_test.py GPUFED
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

DECISION_KEYS = ["decisionVersion", "workload", "tenant", "priority", "outcome", "reason", "cost", "target",
                 "verdicts", "verdictGroups", "deniedBy", "warnings", "preempted"]

REPO = """\
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: onprem-eu}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, cpu: 32, memory: 256Gi, gpu: {model: A100-80GB, count: 2, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.10"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: cloud-us}
spec:
  provider: aws
  region: us-east-1
  zone: us
  connector: {type: sim}
  nodePools:
    - {name: h100, count: 2, cpu: 64, memory: 512Gi, gpu: {model: H100-80GB, count: 4, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {H100-80GB: "3.90"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: genomics}
spec:
  quota: {maxGpus: 16}
  budget: {period: monthly, limit: "5000 EUR"}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: residency}
spec:
  enforcement: deny
  rules:
    - name: pii-stays-in-eu
      when: {data.pii: true}
      require: {cluster.zone: eu}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: variant-calling}
spec:
  tenant: genomics
  priority: 200
  resources: {gpus: 2}
  data: {pii: true}
  durationHint: 2h
  run: {command: ["true"]}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: protein-fold}
spec:
  tenant: genomics
  priority: 100
  resources: {gpus: 1, gpuModels: [H100-80GB]}
  durationHint: 2h
  run: {command: ["true"]}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: cohort-scan}
spec:
  tenant: genomics
  priority: 50
  resources: {gpus: 8}
  data: {pii: true}
  durationHint: 1h
  run: {command: ["true"]}
"""
WORKLOADS = ["variant-calling", "protein-fold", "cohort-scan"]
ADMIN = "golden-admin-token-0123456789abcdef"


def project(record):
    return {k: record[k] for k in DECISION_KEYS if k in record}


def get(base, path):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + ADMIN})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def main():
    gpufed = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="gpufed-decision-object.")
    proc = None
    log_path = os.path.join(tmp, "run.log")
    try:
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        with open(os.path.join(repo, "fleet.yaml"), "w") as f:
            f.write(REPO)
        tokens = os.path.join(tmp, "tokens")
        with open(tokens, "w") as f:
            f.write(ADMIN + " admin\n")
        os.chmod(tokens, 0o600)

        plan = json.loads(subprocess.run([gpufed, "plan", "--config", repo, "-o", "json"], check=True,
                                         capture_output=True, text=True).stdout)
        planned = {d["workload"]: d for d in plan["decisions"]}
        assert set(planned) == set(WORKLOADS), planned.keys()

        state = os.path.join(tmp, "state")
        log = open(log_path, "w")
        # An all-sim fleet runs on virtual time, by default as fast as it can, and would
        # finish its 30 days before the API is read: one virtual second per wall second
        # keeps it serving (the decisions are made in the first pass, at t=0).
        proc = subprocess.Popen([gpufed, "run", "--config", repo, "--state", state, "--listen", "127.0.0.1:0",
                                 "--tokens", tokens, "--speed", "1"], stdout=log, stderr=subprocess.STDOUT)
        base = None
        journal = {}
        for _ in range(600):  # bounded: 60 s
            if proc.poll() is not None:
                raise AssertionError("gpufed run exited with %d" % proc.returncode)
            text = open(log_path).read()
            if base is None:
                m = re.search(r"gpufed run: API on (http://127\.0\.0\.1:\d+)", text)
                base = m.group(1) if m else None
            q = subprocess.run([gpufed, "audit", "query", "-d", os.path.join(state, "audit"), "--kind", "decision",
                                "-o", "jsonl"], capture_output=True, text=True)
            journal = {}
            for line in q.stdout.splitlines():
                r = json.loads(line)
                journal.setdefault(r["workload"], r)  # each workload's first decision
            if base and set(journal) == set(WORKLOADS):
                break
            time.sleep(0.1)
        assert base and set(journal) == set(WORKLOADS), ("no decision for every workload", journal.keys())

        listed = {}
        for item in sorted(get(base, "/v1/decisions")["items"], key=lambda i: i["seq"]):
            listed.setdefault(item["workload"], item)  # each workload's first decision
        explained = {w: get(base, "/v1/tenants/genomics/workloads/%s/explain" % w) for w in WORKLOADS}
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)

    failures = []
    for w in WORKLOADS:
        expected = project(planned[w])
        if expected.get("decisionVersion") != 1:
            failures.append("%s: plan -o json has no decisionVersion 1: %s" % (w, expected))
        hosts = {"journal": journal[w], "GET /v1/decisions": listed.get(w, {}),
                 "explain": explained[w].get("decision", {})}
        for host, record in hosts.items():
            got = project(record)
            if got != expected:
                failures.append("%s: %s carries another decision object than plan -o json:\n  %s\n  plan: %s" %
                                (w, host, json.dumps(got, sort_keys=True), json.dumps(expected, sort_keys=True)))
    outcomes = {w: planned[w]["outcome"] for w in WORKLOADS}
    if outcomes["variant-calling"] != "placed" or planned["variant-calling"].get("target", {}).get("cluster") != "onprem-eu":
        failures.append("variant-calling should be placed on onprem-eu: %s" % planned["variant-calling"])
    if outcomes["protein-fold"] != "placed" or planned["protein-fold"].get("target", {}).get("zone") != "us":
        failures.append("protein-fold should be placed in the US: %s" % planned["protein-fold"])
    if outcomes["cohort-scan"] == "placed":
        failures.append("cohort-scan cannot be placed: %s" % planned["cohort-scan"])
    rules = {v.get("rule") for v in planned["cohort-scan"].get("verdicts", [])}
    if "pii-stays-in-eu" not in rules:
        failures.append("cohort-scan's verdicts do not name pii-stays-in-eu: %s" % planned["cohort-scan"].get("verdicts"))
    if failures:
        print("\n".join(failures))
        print("--- gpufed run log:\n" + open(log_path).read()[-4000:])
        return 1
    print("decision object: plan -o json, journal, GET /v1/decisions and explain agree for %d workloads" % len(WORKLOADS))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
