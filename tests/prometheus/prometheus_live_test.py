#!/usr/bin/env python3
"""A real Prometheus scrapes a running controller.

Starts `gpufed run` (a copy of examples/quickstart plus one AuditSink whose receiver never
answers) with a tokens file holding a `metrics` token, and Prometheus on 127.0.0.1 (a free
port, its config and TSDB in WORK_DIR). The config is deploy/prometheus/prometheus.yml with
its target, token path, rule file path and intervals replaced, so the documented example is
the one tested; it loads deploy/prometheus/alerts.yaml. Through Prometheus's HTTP API the
test then requires that:

- the gpufed target is up (scraped with the bearer token from credentials_file);
- every alerting rule of alerts.yaml is loaded and evaluates without error;
- every metric the Grafana dashboard reads (deploy/grafana/gpufed.json) has series; the
  AuditSink makes the gpufed_audit_sink_* families exist, so there are no exceptions;
- GpufedAuditSinkLagging is pending (or firing) for that sink: the alert matches the series
  the controller really exports.

Every wait is a bounded poll. Only the two processes started here are stopped, by PID (and
both die with this script if ctest kills it).

usage: prometheus_live_test.py GPUFED SOURCE_DIR WORK_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_dashboard  # noqa: E402
import promlib  # noqa: E402
from promlib import fail  # noqa: E402


def substitute(text, old, new):
    if text.count(old) != 1:
        fail(f"deploy/prometheus/prometheus.yml no longer has exactly one `{old}`; update this test")
    return text.replace(old, new)


def api(base, path, **params):
    """The `data` of a Prometheus API answer, or None while it cannot answer."""
    url = f"{base}{path}" + ("?" + urllib.parse.urlencode(params) if params else "")
    status, body = promlib.http_get(url, timeout=5)
    if status != 200:
        return None
    answer = json.loads(body)
    return answer["data"] if answer.get("status") == "success" else None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    gpufed, source_dir, work_dir = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    promtool = promlib.require_promtool()
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        fail("promtool is installed but prometheus is not (both come with Debian's `prometheus` package)")
    t0 = time.monotonic()
    metrics_token, admin_token = promlib.new_token(), promlib.new_token()
    ctl = promlib.Controller(gpufed, source_dir, os.path.join(work_dir, "controller"),
                             tokens=[(metrics_token, "metrics"), (admin_token, "admin")])
    prom = None
    try:
        status, _ = promlib.http_get(ctl.url + "/v1/clusters", metrics_token)
        if status != 403:
            fail(f"a metrics token reading /v1/clusters got {status}, want 403")

        # The example config, pointed at this controller.
        prom_dir = os.path.join(work_dir, "prometheus")
        shutil.rmtree(prom_dir, ignore_errors=True)
        os.makedirs(os.path.join(prom_dir, "data"))
        token_file = os.path.join(prom_dir, "gpufed-metrics.token")
        with open(os.path.join(prom_dir, "gpufed-metrics.token"), "w") as f:
            f.write(metrics_token + "\n")
        os.chmod(token_file, 0o600)
        with open(os.path.join(source_dir, "deploy", "prometheus", "prometheus.yml")) as f:
            config = f.read()
        config = substitute(config, "scrape_interval: 30s", "scrape_interval: 1s")
        config = substitute(config, "evaluation_interval: 30s", "evaluation_interval: 1s")
        config = substitute(config, "- alerts.yaml", "- " + os.path.join(source_dir, "deploy", "prometheus", "alerts.yaml"))
        config = substitute(config, "credentials_file: /etc/prometheus/secrets/gpufed-metrics.token",
                            "credentials_file: " + token_file)
        config = substitute(config, "targets: ['gpufed.example.internal:8443']", f"targets: ['127.0.0.1:{ctl.port}']")
        config_file = os.path.join(prom_dir, "prometheus.yml")
        with open(config_file, "w") as f:
            f.write(config)
        r = subprocess.run([promtool, "check", "config", config_file], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            fail(f"promtool check config:\n{r.stdout}{r.stderr}")

        # Prometheus on a free port (retried if another process takes the port first).
        log = os.path.join(prom_dir, "prometheus.log")
        for attempt in range(3):
            port = promlib.free_port()
            base = f"http://127.0.0.1:{port}"
            prom = promlib.spawn([prometheus, f"--config.file={config_file}", f"--storage.tsdb.path={prom_dir}/data",
                                  "--storage.tsdb.retention.time=1h", f"--web.listen-address=127.0.0.1:{port}",
                                  "--log.level=info"], log)
            deadline = time.monotonic() + 15
            while prom.poll() is None and time.monotonic() < deadline:
                if promlib.http_get(base + "/-/ready", timeout=1)[0] == 200:
                    break
                time.sleep(0.1)
            if prom.poll() is None and promlib.http_get(base + "/-/ready", timeout=1)[0] == 200:
                break
            promlib.stop(prom)
            if "address already in use" not in promlib.tail(log) or attempt == 2:
                fail(f"prometheus did not become ready; the end of {log}:\n{promlib.tail(log)}")
        print(f"prometheus (pid {prom.pid}) ready on {base} after {time.monotonic() - t0:.1f} s")
        prom_alive = lambda: prom.poll() is None and ctl.alive()

        # The target is up: scraped with the metrics token.
        last = {}

        def target_up():
            data = api(base, "/api/v1/targets")
            for t in (data or {}).get("activeTargets", []):
                if t.get("labels", {}).get("job") == "gpufed":
                    last.update(t)
                    return t.get("health") == "up"
            return False

        try:
            promlib.poll("the gpufed target to be up", target_up, timeout=30, interval=0.2, alive=prom_alive)
        except SystemExit:
            print(f"last target state: health={last.get('health')} lastError={last.get('lastError')}", file=sys.stderr)
            raise
        print(f"target 127.0.0.1:{ctl.port} up after {time.monotonic() - t0:.1f} s")

        # Every alerting rule loaded and evaluated without error.
        with open(os.path.join(source_dir, "deploy", "prometheus", "alerts.yaml")) as f:
            wanted = set(re.findall(r"^\s*- alert:\s*(\w+)", f.read(), re.M))

        def rules_ok():
            data = api(base, "/api/v1/rules")
            rules = {r["name"]: r for g in (data or {}).get("groups", []) for r in g["rules"] if r.get("type") == "alerting"}
            if set(rules) != wanted:
                return False
            bad = {n: r.get("lastError") for n, r in rules.items() if r.get("health") != "ok"}
            return not bad or None

        promlib.poll(f"the {len(wanted)} alerting rules to load and evaluate (health ok)", rules_ok, timeout=15,
                     interval=0.2, alive=prom_alive)

        # Every metric the dashboard reads has series.
        dashboard = check_dashboard.load(os.path.join(source_dir, "deploy", "grafana", "gpufed.json"))
        used = sorted(check_dashboard.metrics_used(dashboard))
        missing = []

        def all_present():
            missing.clear()
            for metric in used:
                data = api(base, "/api/v1/query", query=f'count({{__name__="{metric}"}})')
                if not data or not data.get("result"):
                    missing.append(metric)
            return not missing

        try:
            promlib.poll("series of every metric the dashboard reads", all_present, timeout=15, interval=0.5,
                         alive=prom_alive)
        except SystemExit:
            print("no series in Prometheus for: " + ", ".join(missing), file=sys.stderr)
            raise
        print(f"all {len(used)} metrics the dashboard reads have series")

        # The sink alert sees the real series.
        def sink_alert():
            data = api(base, "/api/v1/alerts")
            return any(a["labels"].get("alertname") == "GpufedAuditSinkLagging"
                       and a["labels"].get("sink") == "archive-https" and a.get("state") in ("pending", "firing")
                       for a in (data or {}).get("alerts", []))

        promlib.poll("GpufedAuditSinkLagging to be pending for the unreachable sink", sink_alert, timeout=15,
                     interval=0.2, alive=prom_alive)

        # For information: the dashboard's queries that return nothing (after three scrapes,
        # so that rates have two samples in their window; a ratio whose divisor is 0 drops).
        promlib.poll("three scrapes", lambda: (api(base, "/api/v1/query", query='count_over_time(up{job="gpufed"}[1m]) >= 3')
                                               or {}).get("result"), timeout=15, interval=0.2, alive=prom_alive)
        empty = []
        for pid, title, ref, expr in check_dashboard.targets(dashboard):
            data = api(base, "/api/v1/query", query=check_dashboard.concrete(expr, "1m"))
            if data is None:
                fail(f"panel {pid} ({title}) {ref}: Prometheus refused the query {check_dashboard.concrete(expr, '1m')}")
            if not data.get("result"):
                empty.append(f"panel {pid} {ref}")
        print(f"{len(check_dashboard.targets(dashboard)) - len(empty)} dashboard queries return series"
              + (f"; empty for now: {', '.join(empty)}" if empty else ""))
        print(f"prometheus live scrape: OK in {time.monotonic() - t0:.1f} s")
    finally:
        promlib.stop(prom)
        ctl.stop()


if __name__ == "__main__":
    main()
