"""gpufed-load --replicas N --pg: the replicated mode (issue 38), imported by gpufed-load.

What one run does:
  1. starts a PostgreSQL of its own (controller/pg/testing/pg-cluster.sh, state in the work
     folder; stopped at the end by that script, always), creates a database, makes one audit
     key (`gpufed audit keygen`) and one admin token;
  2. starts N `gpufed run --store postgres://... --replica rK` on free 127.0.0.1 ports, on the
     wall clock (a shared store forces it), each with a state folder of its own, with
     --lease-duration/--renew-deadline/--lease-retry passed through;
  3. C keep-alive clients submit through any replica (client c starts at replica c mod N),
     follow 307s to the leader (the Authorization header sent again) and keep sending there
     until it fails; a refusal for want of a leader (503) or a connection error is retried
     on the next replica with a bounded backoff (at most 90 s per submission). Every 201 is
     recorded as (tenant, name, uid). With --client-procs P (no kills or freezes) the
     clients run in P forked processes, which report their records through a pipe;
  4. with --kill-leader K: K times at seeded random points (1-6 s after the previous
     failover completed) the leader is found (/v1/status), killed (SIGKILL to the PID this
     run started) and started again at once as the same replica (same name, port, state
     folder), so that N run all the time. Measured per kill: kill -> a new leader
     (/v1/status of a live replica says leader, with a higher epoch), and kill -> the
     placement by the new leader of a probe: a workload submitted right after the kill
     through a live standby (retried every 0.1-0.2 s until a leader answers 201), polled
     (every 50 ms) on the new leader until it is Running. The probes have a sim cluster and
     a tenant of their own (rules keep the load off it and the probes on it): the load fills
     every other GPU, and the first placement of a new term must not wait for capacity. With
     --freeze-leader F, then F times: SIGSTOP the leader until another leads, SIGCONT; the
     thawed one must log "lost the lead" and say standby. With --fail-primary the database
     is a primary with a synchronous standby (controller/pg/testing/pg-ha-pair.sh: TLS,
     verify-full, the multi-host URI with target_session_attrs=read-write), and then, while
     the clients go on: SIGKILL to the primary, the standby promoted --promote-after later
     (as Patroni would), and a probe submitted right after the kill; measured from the kill:
     a leader again, the probe's 201 and its placement;
  5. at the end (kills done or the workloads submitted, then until none is Pending, at most
     300 s): reads the leader's /v1/workloads (admin) and counts lost 201s (not in the
     store, or with another uid) and duplicates (a name twice, a uid twice, two 201s for one
     name), and lists the submissions answered otherwise (`not_acked`: status, error, and
     whether the name is in the store all the same; `refused_not_stored` counts those that
     are not, and exits 1: every submission of the load is valid); estimates pass p50/p99 of the last leader's term from its /metrics histogram
     (`gpufed run --store` prints no run summary); stops every replica (SIGTERM by PID);
     verifies the one journal in the database across every leader's term (`gpufed audit
     verify --store`) and counts the workloads it has decisions for.

The load's jobs are the generator's (durationHint 30 min to 6 h) on the wall clock: none
ends on its own during a run, so the load keeps its clusters' GPUs busy and the queue long
(what every takeover has to load), and a takeover requeues the dead leader's running jobs
(sim clusters' jobs live in the leader's process).

Exit 0 when nothing was lost, duplicated or refused unstored, the journal verifies, every kill was followed by a new leader and
a placement (every freeze by a thaw into a standby); 1 otherwise; 2 when the set-up failed;
77 when there is no PostgreSQL 15 here (pg-cluster.sh says missing) and CI is not set.
"""
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import local_jobs  # bench/load/local_jobs.py: --local-jobs, a local cluster under replicas
from submitters import SUBMIT_GIVE_UP_S, Submitter, client, client_process, client_threads, collect

HERE = os.path.dirname(os.path.abspath(__file__))
PG_CLUSTER = os.path.join(HERE, "..", "..", "controller", "pg", "testing", "pg-cluster.sh")
PG_HA_PAIR = os.path.join(HERE, "..", "..", "controller", "pg", "testing", "pg-ha-pair.sh")
ADMIN = "admin-" + "%024x" % random.SystemRandom().getrandbits(96)
STOP = threading.Event()  # set when the run ends, however it ends: the clients stop


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pg_values(state_file):
    values = {}
    with open(state_file) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            if len(v) >= 2 and v[0] == v[-1] == "'":
                v = v[1:-1]  # pg-ha-pair.sh quotes its URIs for the shell
            values.setdefault(k, v)
    return values


def get(port, path, timeout=5.0):
    """One GET with the admin token; (status, body text), or (0, "") on a connection error."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Authorization": "Bearer " + ADMIN})
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    except (OSError, http.client.HTTPException):
        return 0, ""
    finally:
        conn.close()


def status_of(port, timeout=2.0):
    code, text = get(port, "/v1/status", timeout)
    if code != 200:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return {}


def pending_and_total(port):
    code, text = get(port, "/metrics", 60.0)
    if code != 200:
        return None
    by_state = {m.group(1): int(m.group(2)) for m in re.finditer(r'^gpufed_workloads\{state="(\w+)"\} (\d+)', text, re.M)}
    return by_state.get("Pending", 0), sum(by_state.values())


def pass_quantiles(port):
    code, text = get(port, "/metrics", 60.0)
    buckets = []
    for m in re.finditer(r'^gpufed_reconcile_pass_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', text, re.M):
        buckets.append((float("inf") if m.group(1) == "+Inf" else float(m.group(1)), int(m.group(2))))
    if code != 200 or not buckets or buckets[-1][1] == 0:
        return 0.0, 0.0, 0
    total = buckets[-1][1]

    def q(x):
        rank = x * total
        lower, below = 0.0, 0
        for le, count in buckets:
            if count >= rank:
                if le == float("inf"):
                    return lower * 1000
                return round((lower + (le - lower) * (rank - below) / max(1, count - below)) * 1000, 1)
            lower, below = le, count
        return lower * 1000
    return q(0.5), q(0.99), total


class Replica:
    def __init__(self, top, name, args):
        self.name, self.top, self.args = name, top, args
        self.port = free_port()
        self.state = os.path.join(top, "state-" + name)
        self.log_path = os.path.join(top, "run-%s.log" % name)
        self.proc = None
        self.starts = 0

    def start(self):
        log = open(self.log_path, "a")
        log.write("--- gpufed-load: start %d of replica %s\n" % (self.starts + 1, self.name))
        log.flush()
        a = self.args
        cmd = [a["gpufed"], "run", "--config", a["repo"], "--state", self.state, "--store", a["store"],
               "--replica", self.name, "--advertise", "http://127.0.0.1:%d" % self.port,
               "--listen", "127.0.0.1:%d" % self.port, "--tokens", a["tokens"], "--audit-key", a["key"],
               "--lease-duration", a["lease_duration"], "--renew-deadline", a["renew_deadline"],
               "--lease-retry", a["lease_retry"]]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=a["env"], start_new_session=True)
        log.close()
        self.starts += 1

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGCONT)
            except OSError:
                pass
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()

    def log_text(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


def find_leader(replicas, bound_s, newer_than=-1, among=None):
    """Polls /v1/status of the live replicas until exactly one says it leads with an epoch
    above `newer_than`; (replica, epoch), or (None, None) after bound_s. Two leaders at one
    time are counted (never expected)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        leaders = []
        for r in (among or replicas):
            if not r.alive():
                continue
            s = status_of(r.port)
            if s.get("role") == "leader" and int(s.get("epoch", -1)) > newer_than:
                leaders.append((r, int(s.get("epoch", -1))))
        if len(leaders) == 1:
            return leaders[0]
        if len(leaders) > 1:
            find_leader.two_leaders += 1
        time.sleep(0.05)
    return None, None


find_leader.two_leaders = 0


PROBE_BODY = ("apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: %s}\nspec:\n  tenant: probe\n"
              "  type: batch\n  resources: {gpus: 1, cpu: 1, memory: 1Gi}\n  durationHint: 6h\n"
              "  data: {sensitivity: public, pii: false}\n")


def add_probe_cluster(repo, kills):
    """The failover probe's own sim cluster and tenant (only with --kill-leader): rules keep
    the load's workloads off it and the probes on it, so a probe is placed in the first
    pass that sees it even when the load has filled every other GPU. A node per kill: the
    probes of earlier terms may still hold a GPU each."""
    with open(os.path.join(repo, "probe.yaml"), "w") as f:
        f.write("apiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata: {name: probe}\nspec:\n"
                "  provider: onprem\n  zone: eu\n  connector: {type: sim}\n"
                "  nodePools:\n    - {name: p, count: %d, cpu: 128, memory: 1Ti, gpu: {model: A100-80GB, count: 8, "
                "memory: 80Gi}}\n  pricing: {currency: EUR, gpuHour: {A100-80GB: \"1.00\"}}\n---\n"
                "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: probe}\nspec: {weight: 1}\n---\n"
                "apiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: probe}\nspec:\n  rules:\n"
                "    - name: probe-cluster-for-probes\n      when: {tenant: {notIn: [probe]}}\n"
                "      require: {cluster.name: {notIn: [probe]}}\n"
                "    - name: probes-on-probe-cluster\n      when: {tenant: probe}\n      require: {cluster.name: probe}\n"
                % max(2, kills // 8 + 2))


def start_probe(replicas, via, probe_name, since):
    """Submits the probe `probe_name` on a thread of its own, through replica index `via`
    (retried every 0.1-0.2 s until a leader answers 201); returns (thread, result), the
    result filled with status, acked_s (since `since`, a monotonic time) and uid."""
    probe = {}

    def submit_probe():
        s = Submitter(replicas, via, ADMIN, max_backoff=0.2)
        status, parsed, _, _ = s.post("/v1/tenants/probe/workloads", PROBE_BODY % probe_name, STOP)
        s.close()
        probe.update(status=status, acked_s=time.monotonic() - since,
                     uid=parsed.get("uid", "") if isinstance(parsed, dict) else "")
    prober = threading.Thread(target=submit_probe, daemon=True)
    prober.start()
    return prober, probe


def kill_and_measure(replicas, k, rng, lease_s, stop_when, out):
    """K kills of the leader; appends one record per kill to `out`. After each kill a probe
    workload is submitted through a live standby (retried every 0.1-0.2 s until a leader
    answers 201); the failover ends when the new leader says it is Running."""
    bound = 4 * lease_s + 60
    for n in range(k):
        if stop_when():
            break
        time.sleep(rng.uniform(1.0, 6.0))
        leader, epoch = find_leader(replicas, bound)
        if leader is None:
            out.append({"kill": n + 1, "error": "no leader before the kill"})
            return
        killed_at = time.monotonic()
        leader.proc.kill()
        leader.proc.wait()
        leader.start()  # the same replica again, a new process
        rec = {"kill": n + 1, "killed": leader.name, "epoch": epoch}
        probe_name = "probe-%03d" % (n + 1)
        via = replicas.index(next(r for r in replicas if r is not leader))
        prober, probe = start_probe(replicas, via, probe_name, killed_at)
        new, new_epoch = find_leader(replicas, bound, newer_than=epoch)
        led_at = time.monotonic()
        if new is None:
            prober.join()
            rec["error"] = "no new leader within %d s" % bound
            out.append(rec)
            return
        rec.update({"leader": new.name, "new_epoch": new_epoch, "to_leader_s": round(led_at - killed_at, 3)})
        prober.join()
        rec["probe_201_s"] = round(probe.get("acked_s", 0.0), 3)
        if probe.get("status") != 201:
            rec["error"] = "the probe was answered %s" % probe.get("status")
            out.append(rec)
            return
        probes.append((probe_name, probe.get("uid", "")))
        out.append(rec)
        place_deadline = time.monotonic() + bound
        while time.monotonic() < place_deadline:
            code, text = get(new.port, "/v1/tenants/probe/workloads/" + probe_name, 10.0)
            if code == 200 and json.loads(text).get("state") in ("Running", "Succeeded", "Finished"):
                rec["to_placement_s"] = round(time.monotonic() - killed_at, 3)
                break
            time.sleep(0.05)
        else:
            rec["error"] = "the new leader did not run the probe within %d s" % bound
            return


probes = []


def freeze_and_measure(replicas, f, rng, lease_s, out):
    bound = 4 * lease_s + 60
    for n in range(f):
        time.sleep(rng.uniform(1.0, 4.0))
        leader, epoch = find_leader(replicas, bound)
        if leader is None:
            out.append({"freeze": n + 1, "error": "no leader before the freeze"})
            return
        lost_before = leader.log_text().count("lost the lead")
        frozen_at = time.monotonic()
        leader.signal(signal.SIGSTOP)
        others = [r for r in replicas if r is not leader]
        new, new_epoch = find_leader(replicas, bound, newer_than=epoch, among=others)
        rec = {"freeze": n + 1, "frozen": leader.name}
        if new is None:
            leader.signal(signal.SIGCONT)
            rec["error"] = "nobody took over from the frozen leader within %d s" % bound
            out.append(rec)
            return
        rec.update({"leader": new.name, "to_leader_s": round(time.monotonic() - frozen_at, 3)})
        leader.signal(signal.SIGCONT)
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            if (leader.log_text().count("lost the lead") > lost_before and
                    status_of(leader.port).get("role") == "standby"):
                rec["thawed_standby"] = True
                break
            time.sleep(0.1)
        else:
            rec["error"] = "the thawed leader did not say it lost the lead and turn standby"
        out.append(rec)
        if "error" in rec:
            return


def fail_primary_and_measure(replicas, pg_state, promote_after_s, lease_s, out):
    """The database's own failover while the clients go on: SIGKILL to the primary
    (pg-ha-pair.sh kill-primary), the standby promoted promote_after_s later (as Patroni
    would once its leader key expired), and a probe submitted right after the kill through
    any replica (retried until a leader answers 201). Measured from the kill: the probe's
    201 and its placement (Running, read through any live replica: standbys read the
    database). Appends one record to `out`."""
    bound = 4 * lease_s + 60 + promote_after_s
    leader, epoch = find_leader(replicas, 4 * lease_s + 60)
    rec = {"db_failover": 1}
    out.append(rec)
    if leader is None:
        rec["error"] = "no leader before the primary failed"
        return
    rec.update({"leader_before": leader.name, "epoch_before": epoch})
    failed_at = time.monotonic()
    killed = subprocess.run(["bash", PG_HA_PAIR, "kill-primary", pg_state], capture_output=True, text=True)
    if killed.returncode != 0:
        rec["error"] = "kill-primary: " + killed.stderr.strip()[-300:]
        return
    probe_name = "probe-db"
    prober, probe = start_probe(replicas, 0, probe_name, failed_at)
    time.sleep(max(0.0, promote_after_s - (time.monotonic() - failed_at)))
    promoted = subprocess.run(["bash", PG_HA_PAIR, "promote-standby", pg_state], capture_output=True, text=True)
    rec["promoted_s"] = round(time.monotonic() - failed_at, 3)
    if promoted.returncode != 0:
        rec["error"] = "promote-standby: " + promoted.stderr.strip()[-300:]
        prober.join()
        return
    new, new_epoch = find_leader(replicas, bound)
    rec.update({"leader_after": new.name if new else None, "epoch_after": new_epoch,
                "to_leader_s": round(time.monotonic() - failed_at, 3)})
    prober.join()
    rec["probe_201_s"] = round(probe.get("acked_s", 0.0), 3)
    if probe.get("status") != 201:
        rec["error"] = "the probe was answered %s" % probe.get("status")
        return
    probes.append((probe_name, probe.get("uid", "")))
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        for r in replicas:
            if not r.alive():
                continue
            code, text = get(r.port, "/v1/tenants/probe/workloads/" + probe_name, 5.0)
            if code == 200 and json.loads(text).get("state") in ("Running", "Succeeded", "Finished"):
                rec["to_placement_s"] = round(time.monotonic() - failed_at, 3)
                return
        time.sleep(0.1)
    rec["error"] = "no leader ran the probe within %d s of the promotion" % bound


def seconds_of(text):
    m = re.fullmatch(r"([\d.]+)(ms|s|m)?", text.strip())
    if not m:
        return 15.0
    return float(m.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[m.group(2)]


def admin_psql(pg, db, sql):
    """`sql` as the cluster's superuser, on its Unix socket (trusted there only)."""
    return subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-A", "-F", "|",
                           "-h", pg["socket_dir"], "-p", pg["port"], "-d", db, "-c", sql],
                          capture_output=True, text=True)


def write_pg_statements(pg, db, path):
    """The run's statements by total execution time (pg_stat_statements, nested ones too):
    calls, total and mean ms, rows, and the statement's first 200 characters."""
    got = admin_psql(pg, db, "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, "
                             "round((total_exec_time / calls)::numeric, 3) AS mean_ms, rows, "
                             "regexp_replace(left(query, 200), '\\s+', ' ', 'g') AS statement "
                             "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
                             "WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 60")
    # How each table was read: a table scanned whole (seq_tup_read) where a key should
    # have found its rows is a plan the database chose for a smaller table.
    scans = admin_psql(pg, db, "SELECT relname, seq_scan, seq_tup_read, idx_scan, n_live_tup, n_dead_tup "
                               "FROM pg_stat_user_tables ORDER BY seq_tup_read DESC")
    with open(path, "w") as f:
        f.write(got.stdout if got.returncode == 0 else "pg_stat_statements: %s\n" % got.stderr.strip())
        f.write("\n" + (scans.stdout if scans.returncode == 0 else "pg_stat_user_tables: %s\n" % scans.stderr.strip()))


def run(a, write_repo, workload_body, percentile):
    top = a.keep or tempfile.mkdtemp(prefix="gpufed-load-ha-")
    os.makedirs(top, exist_ok=True)
    pg_state = os.path.join(top, "pg.state")
    replicas = []
    pg_script = PG_HA_PAIR if a.fail_primary else PG_CLUSTER
    try:
        pg_env = dict(os.environ)
        if a.pg_statements:
            # Where the database's time goes, per statement (written at the end, below).
            pg_env["GPUFED_PG_CONF"] = (pg_env.get("GPUFED_PG_CONF", "") +
                                        "\nshared_preload_libraries = 'pg_stat_statements'"
                                        "\npg_stat_statements.track = all")
        start = subprocess.run(["bash", pg_script, "start", pg_state], capture_output=True, text=True, env=pg_env)
        if start.returncode != 0:
            print("gpufed-load: %s start failed: %s" % (os.path.basename(pg_script), start.stderr.strip()[-500:]),
                  file=sys.stderr)
            return 2
        pg = pg_values(pg_state)
        if pg.get("missing"):
            print("SKIP: no PostgreSQL 15 (%s)" % pg["missing"])
            return 77
        env = dict(os.environ, PGPASSFILE=pg["passfile"])
        if a.fail_primary:
            # The pair's database `gpufed`, through the URI a production replica is given: both
            # nodes over TLS (verify-full), target_session_attrs=read-write.
            db, store = "gpufed", pg["uri"]
        else:
            db = "load"
            store = "postgresql://gpufed@/%s?host=%s&port=%s" % (db, pg["socket_dir"], pg["port"])
            made = subprocess.run(["psql", "-X", "-q", "host=%s port=%s dbname=postgres user=gpufed" %
                                   (pg["socket_dir"], pg["port"]), "-c", "CREATE DATABASE %s" % db],
                                  env=env, capture_output=True, text=True)
            if made.returncode != 0:
                print("gpufed-load: CREATE DATABASE: %s" % made.stderr.strip(), file=sys.stderr)
                return 2
        if a.pg_statements and admin_psql(pg, db, "CREATE EXTENSION pg_stat_statements").returncode != 0:
            print("gpufed-load: pg_stat_statements is not available", file=sys.stderr)
            return 2
        repo = os.path.join(top, "repo")
        write_repo(repo, a.clusters, a.lua, a.seed)
        if a.kill_leader or a.fail_primary:
            add_probe_cluster(repo, a.kill_leader + (1 if a.fail_primary else 0))
        if a.local_jobs:
            local_jobs.add_local_cluster(repo, top, 4)
        key_dir = os.path.join(top, "key")
        shutil.rmtree(key_dir, ignore_errors=True)
        keygen = subprocess.run([a.gpufed, "audit", "keygen", "--out", key_dir], capture_output=True, text=True)
        if keygen.returncode != 0:
            print("gpufed-load: audit keygen: %s" % keygen.stderr.strip(), file=sys.stderr)
            return 2
        tokens = os.path.join(top, "tokens")
        with open(os.open(tokens, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write("%s admin ops\n" % ADMIN)
        common = {"gpufed": a.gpufed, "repo": repo, "tokens": tokens, "key": os.path.join(key_dir, "signing.key"),
                  "store": store, "pg_state": pg_state,
                  "lease_duration": a.lease_duration, "renew_deadline": a.renew_deadline,
                  "lease_retry": a.lease_retry, "env": env}
        for i in range(a.replicas):
            r = Replica(top, "r%d" % i, common)
            shutil.rmtree(r.state, ignore_errors=True)
            replicas.append(r)
        for r in replicas:
            r.start()
        return drive(a, top, replicas, workload_body, percentile)
    finally:
        # Whatever happened: the clients stop, and the replicas this run started and its
        # PostgreSQL do not outlive it.
        STOP.set()
        for r in replicas:
            r.kill()
        if os.path.exists(pg_state):
            if a.pg_statements:
                write_pg_statements(pg_values(pg_state), "load", a.pg_statements)
            subprocess.run(["bash", pg_script, "stop", pg_state], capture_output=True, text=True)
        if not a.keep:
            shutil.rmtree(top, ignore_errors=True)


def drive(a, top, replicas, workload_body, percentile):
    lease_s = seconds_of(a.lease_duration)
    deadline = time.monotonic() + a.timeout
    leader, first_epoch = find_leader(replicas, 4 * lease_s + 60)
    if leader is None:
        print("gpufed-load: no replica leads (see %s/run-*.log)" % top, file=sys.stderr)
        for r in replicas:
            print("--- %s\n%s" % (r.name, r.log_text()[-1500:]), file=sys.stderr)
        return 2

    killing = a.kill_leader > 0 or a.freeze_leader > 0 or a.fail_primary
    rate = a.rate if a.rate > 0 else (20.0 if killing else 0.0)
    stop = STOP
    results, lock = [], threading.Lock()
    start = time.perf_counter()
    threads = []
    procs = a.client_procs if (a.client_procs > 1 and not killing) else 1
    if procs == 1:
        threads += client_threads(replicas, ADMIN, range(a.clients), a, workload_body, rate, stop, results, lock)
    else:
        # Each process's clients report through a pipe when they are done: one process's
        # threads share one interpreter lock. Every fork first, then the collectors.
        forked = [client_process(replicas, ADMIN, [c for c in range(a.clients) if c % procs == p], a, workload_body, rate)
                  for p in range(procs)]
        for pid, reader in forked:
            t = threading.Thread(target=collect, args=(pid, reader, results, lock), daemon=True)
            t.start()
            threads.append(t)
    if a.local_jobs:
        # One client of its own, about 2 a second: the lab's 4 GPUs stay busy across the kills.
        t = threading.Thread(target=client, args=(replicas, ADMIN, 0, range(a.local_jobs), a.seed * 1000 + 999,
                                                  local_jobs.body(top), 2.0, stop, results, lock), daemon=True)
        t.start()
        threads.append(t)
    kills, freezes, db_failovers = [], [], []
    if killing:
        rng = random.Random(a.seed * 7919 + 1)
        kill_and_measure(replicas, a.kill_leader, rng, lease_s, lambda: time.monotonic() > deadline, kills)
        if all("error" not in k for k in kills):
            freeze_and_measure(replicas, a.freeze_leader, rng, lease_s, freezes)
        if a.fail_primary and all("error" not in k for k in kills + freezes):
            time.sleep(rng.uniform(1.0, 4.0))
            fail_primary_and_measure(replicas, replicas[0].args["pg_state"], seconds_of(a.promote_after), lease_s,
                                     db_failovers)
            time.sleep(2.0)  # the clients go on a little on the promoted primary
        stop.set()  # the clients stop with the kills (or at --workloads, whichever is first)
    # Bounded: a client gives up a submission after SUBMIT_GIVE_UP_S and stops at `stop`.
    while any(t.is_alive() for t in threads):
        if time.monotonic() > deadline:
            stop.set()
        for t in threads:
            t.join(timeout=0.5)
    submit_seconds = time.perf_counter() - start
    acked = [(t, n, uid) for (t, n, s, uid, _, _, _, _) in results if s == 201]

    leader, last_epoch = find_leader(replicas, 4 * lease_s + 60)
    if leader is None:
        print("gpufed-load: no replica leads at the end", file=sys.stderr)
        return 1
    # Until none is Pending (each accepted workload placed or queued at least once).
    settle = min(deadline, time.monotonic() + 300)
    while time.monotonic() < settle:
        pt = pending_and_total(leader.port)
        if pt is not None and pt[1] >= len(acked) and pt[0] == 0:
            break
        time.sleep(0.2)
    decide_seconds = time.perf_counter() - start

    code, text = get(leader.port, "/v1/workloads", 120.0)
    items = json.loads(text)["items"] if code == 200 else []
    # The lab's jobs run for seconds: until each has ended (bounded), so none is cut short.
    while a.local_jobs and local_jobs.unfinished(items) and time.monotonic() < settle:
        time.sleep(0.5)
        code, text = get(leader.port, "/v1/workloads", 120.0)
        items = json.loads(text)["items"] if code == 200 else items
    by_name = {}
    for it in items:
        by_name.setdefault((it["tenant"], it["name"]), []).append(it)
    uids = [it["uid"] for it in items]
    dup_rows = sum(len(v) - 1 for v in by_name.values() if len(v) > 1)
    dup_uids = len(uids) - len(set(uids))
    acked_names = [(t, n) for (t, n, _) in acked]
    dup_acks = len(acked_names) - len(set(acked_names))
    lost = 0
    for (t, n, uid) in acked:
        rows = by_name.get((t, n), [])
        if not any(r["uid"] == uid for r in rows):
            lost += 1
    duplicates = dup_rows + dup_uids + dup_acks
    states, failed_reasons = {}, {}
    for it in items:
        states[it["state"]] = states.get(it["state"], 0) + 1
        if it["state"] == "Failed":
            # By kind: names of clusters, workloads and attempts left out.
            reason = re.sub(r"cluster \S+ no longer reports \S+", "cluster C no longer reports W.aN",
                            (it.get("reason") or ""))[:160]
            failed_reasons[reason] = failed_reasons.get(reason, 0) + 1
    # Submissions answered otherwise than 201 (at most 20 shown): a 409 after a retry is a
    # submission whose first try committed while its answer was lost (a kill, a database
    # failover), so it is in the store although no 201 was seen.
    not_acked = [{"tenant": t, "name": n, "status": s, "error": why, "in_store": (t, n) in by_name}
                 for (t, n, s, why, _, _, _, _) in results if s != 201]
    # Refused and not stored: the client was told no (or gave up) about a submission the
    # federation should have taken (a deposed leader's 409 was one). Fails the run.
    refused = sum(1 for x in not_acked if not x["in_store"])
    not_acked = not_acked[:20]
    # The probes are 201s too.
    probes_lost = sum(1 for (n, uid) in probes
                      if not any(r["uid"] == uid for r in by_name.get(("probe", n), [])))
    lost += probes_lost

    # The passes of the last leader's term: `gpufed run --store` prints no run summary, so
    # p50/p99 are estimated from its /metrics histogram (linear within a bucket, as
    # Prometheus's histogram_quantile does).
    pass_p50, pass_p99, passes = pass_quantiles(leader.port)
    if a.leader_metrics:
        with open(a.leader_metrics, "w") as f:
            f.write(get(leader.port, "/metrics", 60.0)[1])
    # Stop: standbys first, the leader last.
    for r in [r for r in replicas if r is not leader] + [leader]:
        r.signal(signal.SIGCONT)
        r.signal(signal.SIGTERM)
        try:
            r.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            r.kill()

    # The journal: one table across every leader's term; it must verify end to end, and
    # every decided workload is counted from it.
    decided = set()
    key_pub = os.path.join(top, "key", "signing.pub")
    store, env = replicas[0].args["store"], replicas[0].args["env"]
    v = subprocess.run([a.gpufed, "audit", "verify", "--store", store, "--key", key_pub],
                       capture_output=True, text=True, env=env)
    m = re.search(r"OK: (\d+) records", v.stdout)
    journal = ("%s records, verified" % m.group(1)) if v.returncode == 0 and m else \
        ("FAILED: " + (v.stdout + v.stderr).strip()[-200:])
    q = subprocess.run([a.gpufed, "audit", "query", "--store", store, "--kind", "decision", "-o", "jsonl"],
                       capture_output=True, text=True, env=env)
    for line in q.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        decided.add((rec.get("tenant", ""), rec.get("workload", "")))

    latencies = [d for (_, _, s, _, d, _, _, _) in results if s == 201]
    # The rate between the 10th and the 90th percentile of the 201s' completion times: the
    # steady state, without the first second's start-up (connections, the leader's first
    # passes) and the last clients' tail. submits_per_s is over the whole run.
    acked_at = sorted(done for (_, _, s, _, _, _, _, done) in results if s == 201)
    steady = None
    if len(acked_at) >= 100:
        lo, hi = acked_at[len(acked_at) // 10], acked_at[(len(acked_at) * 9) // 10]
        if hi > lo:
            steady = round(((len(acked_at) * 9) // 10 - len(acked_at) // 10) / (hi - lo), 1)
    finals = {}
    for (_, _, s, _, _, _, _, _) in results:
        finals[str(s)] = finals.get(str(s), 0) + 1
    to_leader = [k["to_leader_s"] for k in kills if "to_leader_s" in k]
    to_place = [k["to_placement_s"] for k in kills if "to_placement_s" in k]
    med = lambda v: round(percentile(v, 0.5), 2) if v else None
    out = {
        "mode": "replicas", "replicas": a.replicas, "store": "postgresql (pg-ha-pair.sh: a primary and a synchronous standby, TLS)" if a.fail_primary
        else "postgresql (pg-cluster.sh, %s)" % (
            "fsync and synchronous_commit on" if os.environ.get("GPUFED_PG_DURABLE") == "1" else "fsync off"),
        "leases": "%s/%s/%s" % (a.lease_duration, a.renew_deadline, a.lease_retry),
        "clusters": a.clusters, "workloads": a.workloads, "clients": a.clients, "lua": a.lua,
        "rate": rate, "submitted": len(results), "accepted": len(acked),
        "final_statuses": finals,
        "submits_per_s": round(len(acked) / submit_seconds, 1) if submit_seconds > 0 else 0.0,
        "submits_per_s_p10_p90": steady,
        "submit_p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
        "submit_p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "submit_max_ms": round(max(latencies) * 1000, 2) if latencies else 0.0,
        "redirected": sum(1 for x in results if x[5] > 0), "retried": sum(1 for x in results if x[6] > 0),
        "decisions_per_s": round(len(acked) / decide_seconds, 1) if (decide_seconds > 0 and not killing) else None,
        "passes": passes, "pass_p50_ms": pass_p50, "pass_p99_ms": pass_p99,
        "in_store": len(items), "states": states, "failed_reasons": failed_reasons,
        "lost": lost, "duplicates": duplicates, "refused_not_stored": refused, "not_acked": not_acked,
        "kills": len(kills), "failover_leader_p50_s": med(to_leader),
        "failover_leader_max_s": max(to_leader) if to_leader else None,
        "failover_placement_p50_s": med(to_place),
        "failover_placement_max_s": max(to_place) if to_place else None,
        "freezes": len(freezes), "db_failovers": db_failovers,
        "leader_changes": last_epoch - first_epoch, "two_leaders_seen": find_leader.two_leaders,
        "journal": journal, "journal_decided_workloads": len(decided),
    }
    local = local_jobs.check(top, items) if a.local_jobs else {}
    out.update(local)
    errors = [k["error"] for k in kills + freezes + db_failovers if "error" in k]
    if errors:
        out["errors"] = errors
    if a.output == "json":
        print(json.dumps(out))
        if killing:
            print(json.dumps({"kill_records": kills, "freeze_records": freezes}), file=sys.stderr)
    else:
        for k, v in out.items():
            print("%-26s %s" % (k, v))
        for k in kills + freezes:
            print("  %s" % json.dumps(k))
    bad = (lost or duplicates or refused or errors or len(kills) < a.kill_leader or len(freezes) < a.freeze_leader
           or (a.fail_primary and not db_failovers)
           or local.get("local_duplicate_starts") or local.get("local_duplicate_ledger_keys")
           or (a.local_jobs and local_jobs.unfinished(items))
           or find_leader.two_leaders or not journal.endswith("verified"))
    return 1 if bad else 0
