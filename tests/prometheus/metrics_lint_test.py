#!/usr/bin/env python3
"""Lints a live /metrics: starts `gpufed run` on a copy of examples/quickstart (plus one
AuditSink, so the sink families are linted too), scrapes /metrics with the generated admin
token, and requires

- `promtool check metrics` to exit 0 and print nothing (no warnings);
- what promtool does not check: no series twice (same name and labels), HELP (non-empty)
  and TYPE before every family's samples and only once, every sample in a declared
  family, every *_total a counter and every counter a *_total, histograms with cumulative
  buckets ending in le="+Inf" equal to _count and a _sum, no counter lower in a second
  scrape, a sample in every family (docs/metrics.md names the exceptions);
- the families exported to be exactly those docs/metrics.md documents, with its types.

usage: metrics_lint_test.py GPUFED SOURCE_DIR WORK_DIR"""
import math
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promlib  # noqa: E402
from promlib import fail  # noqa: E402

# Families that may legitimately have no sample on the quickstart: its clusters are all
# `sim`, whose connector reports no remote API version.
MAY_BE_EMPTY = {"gpufed_cluster_api_info"}
# Families only a replica exports (`gpufed run --store postgres://`: the leader election);
# the quickstart runs one process on its own. tests/integration/ha checks them on replicas.
ONLY_REPLICAS = {"gpufed_leader", "gpufed_leader_changes_total", "gpufed_lease_renew_failures_total"}


def lint(text, families_doc):
    """Problems promtool does not report."""
    problems = []
    try:
        e = promlib.parse_exposition(text)
    except ValueError as err:
        return [str(err)], None
    problems += e["problems"]
    for family in e["order"]:
        if family not in e["type"]:
            problems.append(f"{family}: HELP without TYPE")
        if not e["help"].get(family, "").strip():
            problems.append(f"{family}: no HELP text")
        kind = e["type"].get(family)
        if family.endswith("_total") and kind != "counter":
            problems.append(f"{family}: ends in _total but is a {kind}")
        if kind == "counter" and not family.endswith("_total"):
            problems.append(f"{family}: a counter without the _total suffix")
    seen = {}
    per_family = {}
    for name, labels, value, line, family in e["samples"]:
        if family is None:
            problems.append(f"line {line}: {name} is not in the family declared before it (HELP/TYPE missing or misplaced)")
            continue
        key = (name, labels)
        if key in seen:
            problems.append(f"line {line}: {name}{dict(labels)} repeats the series of line {seen[key]}")
        seen[key] = line
        per_family.setdefault(family, []).append((name, labels, value))
        if math.isnan(value):
            problems.append(f"line {line}: {name} is NaN")
    for family in e["order"]:
        if family not in per_family and family not in MAY_BE_EMPTY:
            problems.append(f"{family}: no sample (gauges must be present, at zero if need be)")
        if e["type"].get(family) != "histogram":
            continue
        series = {}
        for name, labels, value in per_family.get(family, []):
            base = tuple(kv for kv in labels if kv[0] != "le")
            s = series.setdefault(base, {"buckets": [], "sum": None, "count": None})
            if name == family + "_bucket":
                le = dict(labels).get("le")
                s["buckets"].append((float(le), value))
            elif name == family + "_sum":
                s["sum"] = value
            elif name == family + "_count":
                s["count"] = value
        for base, s in series.items():
            where = f"{family}{dict(base)}"
            bounds = [b for b, _ in s["buckets"]]
            counts = [c for _, c in s["buckets"]]
            if bounds != sorted(bounds) or not bounds or bounds[-1] != math.inf:
                problems.append(f"{where}: buckets not ascending or no le=\"+Inf\"")
            if counts != sorted(counts):
                problems.append(f"{where}: bucket counts not cumulative")
            if s["count"] is None or s["sum"] is None:
                problems.append(f"{where}: no _count or _sum")
            elif counts and counts[-1] != s["count"]:
                problems.append(f"{where}: le=\"+Inf\" bucket {counts[-1]} != _count {s['count']}")
    # Exported families against docs/metrics.md.
    exported = {f: e["type"].get(f) for f in e["order"]}
    for f in sorted(set(exported) - set(families_doc)):
        problems.append(f"{f} is exported but not documented in docs/metrics.md (add a table row)")
    for f in sorted(set(families_doc) - set(exported) - ONLY_REPLICAS):
        problems.append(f"{f} is documented in docs/metrics.md but not exported")
    for f in sorted(ONLY_REPLICAS & set(exported)):
        problems.append(f"{f} is exported by a process on its own, not a replica")
    for f in sorted(set(exported) & set(families_doc)):
        if exported[f] != families_doc[f]:
            problems.append(f"{f} is a {exported[f]} but docs/metrics.md says {families_doc[f]}")
    return problems, e


def counters(e):
    """{(name, labels): value} of counter samples and histogram _count/_sum/_bucket."""
    out = {}
    for name, labels, value, _, family in e["samples"]:
        if family and e["type"].get(family) in ("counter", "histogram"):
            out[(name, labels)] = value
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    gpufed, source_dir, work_dir = sys.argv[1:4]
    promtool = promlib.require_promtool()
    families_doc = promlib.documented_families(source_dir)
    t0 = time.monotonic()
    ctl = promlib.Controller(gpufed, source_dir, work_dir)
    try:
        token = ctl.admin_token()
        status, _ = promlib.http_get(ctl.url + "/metrics")
        if status != 401:
            fail(f"/metrics without a token answered {status}, want 401")

        # Wait for two reconcile passes, so that the families filled by a pass (policy hooks,
        # decisions) and the sink's first connection attempts are there.
        def scraped_after_passes():
            status, body = promlib.http_get(ctl.url + "/metrics", token)
            if status != 200:
                fail(f"/metrics with the admin token answered {status}: {body[:200]}")
            for line in body.splitlines():
                if line.startswith("gpufed_reconcile_pass_duration_seconds_count ") and float(line.split()[1]) >= 2:
                    return body
            return None

        first = promlib.poll("two reconcile passes", scraped_after_passes, timeout=20, interval=0.2, alive=ctl.alive)
        with open(os.path.join(work_dir, "metrics-1.txt"), "w") as f:
            f.write(first)

        r = subprocess.run([promtool, "check", "metrics"], input=first, capture_output=True, text=True, timeout=30)
        print(f"promtool check metrics: exit {r.returncode}, {len(first.splitlines())} lines scraped")
        if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
            fail(f"promtool check metrics exit {r.returncode} with output:\n{r.stdout}{r.stderr}"
                 f"(the scrape is in {work_dir}/metrics-1.txt)")

        problems, e1 = lint(first, families_doc)
        # A second scrape a few passes later: no counter (or histogram count) went down.
        passes = lambda e: next(v for n, _, v, _, _ in e["samples"] if n == "gpufed_reconcile_pass_duration_seconds_count")
        if e1 is not None:
            def later():
                status, body = promlib.http_get(ctl.url + "/metrics", token)
                if status == 200:
                    e = promlib.parse_exposition(body)
                    if passes(e) >= passes(e1) + 2:
                        return e
                return None
            e2 = promlib.poll("two more reconcile passes", later, timeout=20, interval=0.2, alive=ctl.alive)
            c1, c2 = counters(e1), counters(e2)
            for key, v in c1.items():
                if key in c2 and c2[key] < v:
                    problems.append(f"{key[0]}{dict(key[1])} went down between scrapes: {v} -> {c2[key]}")
                if key not in c2:
                    problems.append(f"{key[0]}{dict(key[1])} vanished between scrapes")
        for p in problems:
            print("FAIL", p, file=sys.stderr)
        if problems:
            fail(f"{len(problems)} problem(s) in the scrape (kept in {work_dir}/metrics-1.txt)")
        print(f"metrics lint: OK: {len(e1['order'])} families, {len(e1['samples'])} samples, "
              f"{time.monotonic() - t0:.1f} s")
    finally:
        ctl.stop()


if __name__ == "__main__":
    main()
