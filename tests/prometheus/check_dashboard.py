#!/usr/bin/env python3
"""Offline checks of the Grafana dashboard (there is no Grafana in Debian to load it into).

usage: check_dashboard.py SOURCE_DIR [DASHBOARD.json]   (default deploy/grafana/gpufed.json)

- structure: valid JSON; title, uid, an integer schemaVersion, panels; unique integer panel
  ids (rows' nested panels included); a type, a title and integer gridPos h, w, x, y inside
  the 24 columns on every panel; refIds unique within a panel;
- variables: a `datasource` variable of type datasource (query prometheus), and `tenant`
  and `cluster` query variables; every panel and target uses ${datasource}; each of the
  tenant and cluster variables is used by some query;
- PromQL: every target's expr, with Grafana's variables replaced ($__rate_interval and
  friends become 5m), is parsed by `promtool check rules` (one rule group per target, so a
  parse error names its panel and refId);
- names: every metric a query or a variable reads is a family documented in
  docs/metrics.md (histograms with their _bucket, _sum and _count series), and the panels
  the issue asks for are there (the REQUIRED families below are all read).

Exit 0: fine; 1: problems (each printed as FAIL ...); 77: promtool is missing."""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promlib  # noqa: E402

# What the dashboard must show (issue 20): allocation vs capacity, GPUs in use per tenant,
# queue depth and oldest wait, wait quantiles, decision latency and pass duration,
# decisions by outcome and rule, preemptions, connector errors and refusals, budget, sink
# lag, journal head.
REQUIRED = [
    "gpufed_cluster_gpus_allocated", "gpufed_cluster_gpus_capacity", "gpufed_tenant_gpus_in_use",
    "gpufed_queue_depth", "gpufed_queue_oldest_wait_seconds", "gpufed_queue_wait_seconds_bucket",
    "gpufed_decision_latency_seconds_bucket", "gpufed_reconcile_pass_duration_seconds_bucket",
    "gpufed_decisions_total", "gpufed_preemptions_total", "gpufed_connector_errors_total",
    "gpufed_connector_refusals_total", "gpufed_tenant_budget_used_ratio", "gpufed_audit_sink_lag_seconds",
    "gpufed_audit_journal_head_sequence",
]


def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))  # collapsed rows carry their panels inside


def load(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    return d.get("dashboard", d)  # also accept the HTTP API's {"dashboard": {...}} wrapper


def targets(dashboard):
    """(panel id, panel title, refId, expr) of every PromQL target."""
    out = []
    for p in walk(dashboard.get("panels", [])):
        for t in p.get("targets", []):
            if t.get("expr"):
                out.append((p.get("id"), p.get("title", ""), t.get("refId", "?"), t["expr"]))
    return out


def variable_queries(dashboard):
    out = []
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        out.append((v.get("name"), q))
    return out


def concrete(expr, rate_range="5m"):
    """expr with Grafana's variables replaced so that Prometheus can run it: intervals become
    rate_range, `=~"$var"` matches everything, other variables become `x`."""
    e = re.sub(r"\$\{?__(rate_interval|interval|range)(_s|_ms)?\}?", rate_range, expr)
    e = re.sub(r'(=~|!~)\s*"(\$\{\w+(:\w+)?\}|\$\w+|\[\[\w+\]\])"', r'\1".*"', e)
    return re.sub(r"\$\{\w+(:\w+)?\}|\[\[\w+\]\]|\$\w+", "x", e)


def metrics_used(dashboard):
    """{metric name: [where]} for every metric the targets and query variables read."""
    used = {}
    for pid, title, ref, expr in targets(dashboard):
        for m in promlib.promql_metrics(concrete(expr)):
            used.setdefault(m, []).append(f"panel {pid} ({title}) {ref}")
    for name, q in variable_queries(dashboard):
        m = re.match(r"\s*label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,", q)
        if m:
            used.setdefault(m.group(1), []).append(f"variable {name}")
        elif not q.strip().startswith("label_values("):  # a PromQL query (query_result(...) aside)
            for metric in promlib.promql_metrics(concrete(q)):
                used.setdefault(metric, []).append(f"variable {name}")
    return used


def check(source_dir, path):
    problems = []
    try:
        d = load(path)
    except (OSError, ValueError) as e:
        return [f"{path}: not a JSON file: {e}"], None
    for key in ("title", "uid", "schemaVersion", "panels"):
        if key not in d:
            problems.append(f'missing top-level "{key}"')
    if not isinstance(d.get("schemaVersion"), int):
        problems.append("schemaVersion must be an integer")

    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append('no "datasource" variable of type datasource with query "prometheus"')
    for name in ("tenant", "cluster"):
        if variables.get(name, {}).get("type") != "query":
            problems.append(f'no "{name}" query variable')
        elif not any(f"${name}" in e or f"${{{name}}}" in e for _, _, _, e in targets(d)):
            problems.append(f'variable "{name}" is used by no query')
    for name, v in variables.items():
        if v.get("type") == "query" and (v.get("datasource") or {}).get("uid") != "${datasource}":
            problems.append(f'variable "{name}" does not use ${{datasource}}')

    seen = set()
    for p in walk(d.get("panels", [])):
        pid = p.get("id")
        where = f"panel {pid} ({p.get('title')})"
        if not isinstance(pid, int):
            problems.append(f"{where}: id must be an integer")
        if pid in seen:
            problems.append(f"duplicate panel id {pid}")
        seen.add(pid)
        if not p.get("type"):
            problems.append(f"{where}: no type")
        if not p.get("title"):
            problems.append(f"{where}: no title")
        gp = p.get("gridPos", {})
        if not all(isinstance(gp.get(k), int) for k in ("h", "w", "x", "y")):
            problems.append(f"{where}: gridPos needs integer h, w, x, y")
        elif gp["x"] < 0 or gp["w"] < 1 or gp["x"] + gp["w"] > 24:
            problems.append(f"{where}: gridPos outside the 24 columns")
        if p.get("type") == "row":
            continue
        if (p.get("datasource") or {}).get("uid") != "${datasource}":
            problems.append(f"{where}: datasource is not ${{datasource}}")
        refs = [t.get("refId") for t in p.get("targets", [])]
        if not refs:
            problems.append(f"{where}: no targets")
        if len(refs) != len(set(refs)):
            problems.append(f"{where}: refIds repeat: {refs}")
        for t in p.get("targets", []):
            if (t.get("datasource") or {}).get("uid") != "${datasource}":
                problems.append(f"{where} {t.get('refId')}: datasource is not ${{datasource}}")
            if not t.get("expr"):
                problems.append(f"{where} {t.get('refId')}: no expr")

    # Parse every expression with promtool: one group per target names the culprit.
    exprs = targets(d) + [(f"variable {n}", "", "query", q) for n, q in variable_queries(d)
                          if not q.strip().startswith("label_values(")]
    if exprs:
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            f.write("groups:\n")
            for i, (pid, _, ref, e) in enumerate(exprs):
                f.write(f"  - name: {json.dumps(f'{i}: panel {pid} {ref}')}\n    rules:\n"
                        f"      - record: dashboard_expr\n        expr: {json.dumps(concrete(e))}\n")
        r = subprocess.run([promlib.require_promtool(), "check", "rules", f.name], capture_output=True, text=True)
        os.unlink(f.name)
        if r.returncode != 0:
            found = False
            for line in (r.stdout + r.stderr).splitlines():
                m = re.search(r'group "(\d+): [^"]*", rule \d+, "dashboard_expr": (.*)', line)
                if m:
                    pid, title, ref, e = exprs[int(m.group(1))]
                    problems.append(f"panel {pid} ({title}) {ref}: {m.group(2)}\n    expr: {e}")
                    found = True
            if not found:
                problems.append("promtool check rules: " + (r.stdout + r.stderr).strip())

    families = promlib.documented_families(source_dir)
    used = metrics_used(d)
    for metric, where in sorted(used.items()):
        if promlib.family_of(metric, families) is None:
            problems.append(f"{metric} (read by {', '.join(where)}) is not a family documented in docs/metrics.md")
    for metric in REQUIRED:
        if metric not in used:
            problems.append(f"no panel reads {metric}")
    return problems, d


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    source_dir = sys.argv[1]
    path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(source_dir, "deploy", "grafana", "gpufed.json")
    promlib.require_promtool()
    problems, d = check(source_dir, path)
    if d is not None:
        print(f"{path}: {sum(1 for _ in walk(d.get('panels', [])))} panels, {len(targets(d))} PromQL targets, "
              f"{len(metrics_used(d))} metrics read")
    for p in problems:
        print("FAIL", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
