"""gpufed-load --replicas N --pg --local-jobs L: real processes under replicas (issue 38).

A `local` cluster "lab" joins the load's repository, with a tenant "lab" of its own (rules
keep the load's workloads off it and lab's on it) and a bookkeeping folder that every
replica shares (local.gpufed.io/bookkeeping-dir: the replicas run on this one host). Its
jobs run as the controller's user (local.gpufed.io/allow-controller-user: "true": the run
is a test, not a lab with tenants) in a job root under the run's folder.

Each lab job appends "<workload> <attempt>" to one file when it starts, then sleeps 1-4 s
and exits 0. After the run:
  - duplicate starts: an attempt (workload, attempt) that started twice: a process started
    twice for one attempt, across kills and freezes of the leader;
  - duplicate ledger keys: an action (kind, key) recorded twice in the shared ledger: an
    action key applied twice at the connector;
  - every lab workload must end (Succeeded, or Failed with a reason) within the bound.
"""
import os

CLUSTER = "lab"


def paths(top):
    return {"book": os.path.join(top, "local-book"), "jobs": os.path.join(top, "local-jobs"),
            "starts": os.path.join(top, "local-starts")}


def add_local_cluster(repo, top, gpus):
    p = paths(top)
    os.makedirs(p["jobs"], mode=0o700, exist_ok=True)
    with open(os.path.join(repo, "lab.yaml"), "w") as f:
        f.write("apiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata:\n  name: %s\n  annotations:\n"
                "    local.gpufed.io/allow-controller-user: \"true\"\n"
                "    local.gpufed.io/job-root: %s\n"
                "    local.gpufed.io/bookkeeping-dir: %s\n"
                "    local.gpufed.io/grace: 1s\n"
                "spec:\n  provider: onprem\n  zone: eu\n  connector: {type: local}\n"
                "  nodePools:\n    - {name: box, count: 1, cpu: 64, memory: 256Gi, gpu: {model: A100-80GB, count: %d, "
                "memory: 80Gi}}\n  pricing: {currency: EUR, gpuHour: {A100-80GB: \"0.00\"}}\n---\n"
                "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: lab}\nspec: {weight: 1}\n---\n"
                "apiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: lab}\nspec:\n  rules:\n"
                "    - name: lab-cluster-for-lab\n      when: {tenant: {notIn: [lab]}}\n"
                "      require: {cluster.name: {notIn: [lab]}}\n"
                "    - name: lab-on-lab-cluster\n      when: {tenant: lab}\n      require: {cluster.name: lab}\n"
                % (CLUSTER, p["jobs"], p["book"], gpus))


def body(top):
    """The lab's workload_body(index, rng) for the load's clients."""
    starts = paths(top)["starts"]

    def make(index, rng):
        name = "lab-%05d" % index
        script = 'echo "$GPUFED_WORKLOAD $GPUFED_ATTEMPT" >> "$STARTS"; sleep %d' % rng.randint(1, 4)
        text = ("apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: %s}\nspec:\n  tenant: lab\n"
                "  type: batch\n  resources: {gpus: 1, cpu: 1, memory: 1Gi}\n  durationHint: 4s\n"
                "  data: {sensitivity: public, pii: false}\n"
                "  run:\n    command: [sh, -c, '%s']\n    env: {STARTS: %s}\n" % (name, script, starts))
        return "lab", name, text
    return make


def check(top, items):
    """What the lab's processes did: duplicate starts and ledger keys, and its states."""
    p = paths(top)
    starts = {}
    try:
        with open(p["starts"]) as f:
            for line in f:
                key = tuple(line.split())
                starts[key] = starts.get(key, 0) + 1
    except OSError:
        pass
    keys = {}
    try:
        with open(os.path.join(p["book"], "ledger.log")) as f:
            for line in f:
                parts = line.split("\t", 2)
                if len(parts) == 3:
                    keys[(parts[0], parts[1])] = keys.get((parts[0], parts[1]), 0) + 1
    except OSError:
        pass
    attempts_of = {}
    for key in starts:
        if key:
            attempts_of[key[0]] = attempts_of.get(key[0], 0) + 1
    states = {}
    for it in items:
        if it.get("tenant") == "lab":
            states[it["state"]] = states.get(it["state"], 0) + 1
    return {
        "local_workloads": sum(states.values()),
        "local_states": states,
        "local_attempts_started": len(starts),
        "local_duplicate_starts": sum(n - 1 for n in starts.values() if n > 1),
        # Not a fault: a workload whose attempt was lost (its leader died mid-launch) runs
        # again as its next attempt, under a new action key.
        "local_workloads_run_again": sum(1 for n in attempts_of.values() if n > 1),
        "local_ledger_actions": len(keys),
        "local_duplicate_ledger_keys": sum(n - 1 for n in keys.values() if n > 1),
    }


def unfinished(items):
    return sum(1 for it in items if it.get("tenant") == "lab" and it["state"] not in ("Succeeded", "Failed",
                                                                                      "Cancelled", "Rejected"))
