"""Helpers shared by the tests in tests/prometheus: the documented metric families, the
metric names a PromQL expression reads, a parser for the Prometheus text exposition, and
a `gpufed run` started for a test (and stopped by its PID).

Standard library only (python3 from Debian); promtool and prometheus come from Debian's
`prometheus` package (GPUFED_TEST_DEPS=1 scripts/install-deps.sh installs it)."""
import base64
import ctypes
import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def require_promtool():
    """The path of promtool, or exit with SKIP (the only reason these tests skip). Under
    CI=true or GPUFED_REQUIRE_ALL=1 a missing promtool fails instead, like the project's
    other dependency skips (scripts/test.sh), so a required test never reads as green."""
    path = shutil.which("promtool")
    if path is None:
        why = ("promtool not found: it comes with Debian's `prometheus` package, which "
               "`GPUFED_TEST_DEPS=1 scripts/install-deps.sh` installs")
        if os.environ.get("CI") == "true" or os.environ.get("GPUFED_REQUIRE_ALL") == "1":
            print(f"prometheus: FAILED: {why} (CI=true or GPUFED_REQUIRE_ALL=1: dependencies are required)")
            sys.exit(1)
        print(f"prometheus: SKIPPED: {why}")
        sys.exit(SKIP)
    return path


# ---- the families docs/metrics.md documents -------------------------------------------

def documented_families(source_dir):
    """{name: type} from the family tables of docs/metrics.md: rows whose first cell is a
    `gpufed_...` name and whose second is counter, gauge or histogram."""
    families = {}
    row = re.compile(r"^\|\s*`(gpufed_[a-z0-9_]+)`\s*\|\s*(counter|gauge|histogram)\s*\|")
    with open(os.path.join(source_dir, "docs", "metrics.md"), encoding="utf-8") as f:
        for line in f:
            m = row.match(line)
            if m:
                if m.group(1) in families:
                    fail(f"docs/metrics.md documents {m.group(1)} twice")
                families[m.group(1)] = m.group(2)
    if not families:
        fail("docs/metrics.md has no family table rows (| `gpufed_name` | type | ...)")
    return families


def family_of(metric, families):
    """The family a series name belongs to (histogram series carry a suffix), or None."""
    if metric in families:
        return metric
    for suffix in HISTOGRAM_SUFFIXES:
        if metric.endswith(suffix):
            base = metric[: -len(suffix)]
            if families.get(base) == "histogram":
                return base
    return None


# ---- metric names in PromQL ---------------------------------------------------------

_PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
    "and", "or", "unless", "inf", "nan", "atan2", "start", "end",
}


def promql_metrics(expr):
    """The metric names an expression reads: identifiers that are not functions,
    aggregations, keywords, label names (in braces or grouping clauses) or durations.
    Also `{__name__="x"}` selectors."""
    names = set(re.findall(r'__name__\s*=\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"', expr))
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)  # strings
    e = re.sub(r"\{[^}]*\}", " ", e)                                          # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)                                         # ranges, subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\boffset\s+-?[0-9a-z]+", " ", e)
    for m in re.finditer(r"(?<![\w:.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in _PROMQL_WORDS or word.startswith("$"):
            continue
        names.add(word)
    return names


# ---- the text exposition format -----------------------------------------------------

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')


def parse_labels(text):
    labels, pos = [], 0
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if not m:
            raise ValueError(f"bad labels: {{{text}}}")
        labels.append((m.group(1), m.group(2)))
        pos = m.end()
    return labels


def parse_exposition(text):
    """{'help': {family: text}, 'type': {family: type}, 'order': [family...],
    'samples': [(name, labels as a sorted tuple, value, line number, family or None)]}.
    A sample's family is the last TYPE'd family it belongs to (its name, or the name with
    a histogram suffix); raises ValueError on lines it cannot read."""
    out = {"help": {}, "type": {}, "order": [], "samples": [], "problems": []}
    current = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                rest = parts[3] if len(parts) > 3 else ""
                key = parts[1].lower()
                if name in out[key]:
                    out["problems"].append(f"line {n}: second # {parts[1]} for {name}")
                out[key][name] = rest
                if name not in out["order"]:
                    out["order"].append(name)
                current = name
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise ValueError(f"line {n}: cannot read sample: {line}")
        name, labels, value = m.group(1), parse_labels(m.group(3) or ""), m.group(4)
        family = None
        if current is not None:
            if name == current:
                family = current
            elif out["type"].get(current) == "histogram" and name in (current + s for s in HISTOGRAM_SUFFIXES):
                family = current
        out["samples"].append((name, tuple(sorted(labels)), float(value), n, family))
    return out


# ---- processes ----------------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    # PR_SET_PDEATHSIG: a child started here gets SIGTERM if the test itself is killed
    # (ctest's timeout), so nothing it started outlives it.
    _libc.prctl(1, signal.SIGTERM)


def spawn(args, log_path, cwd=None):
    """Starts args with stdout and stderr in log_path; the child dies with this process."""
    log = open(log_path, "wb")
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=cwd,
                            preexec_fn=_die_with_parent)


def stop(proc, timeout=10):
    """SIGTERM to proc (by its PID, only a process we started), SIGKILL after timeout."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def tail(path, lines=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def poll(what, check, timeout, interval=0.1, alive=None):
    """Calls check() until it returns a truthy value (returned) or timeout seconds pass
    (then fails naming `what`). alive(), if given, fails early when it returns False."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if alive is not None and not alive():
            fail(f"gave up waiting for {what}: the process ended")
        if time.monotonic() > deadline:
            fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, token=None, timeout=5):
    """(status, body text) of a GET; status 0 when the connection failed."""
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError):
        return 0, ""


class Controller:
    """`gpufed run` on a copy of examples/quickstart with one AuditSink and one AuditWitness
    added (so the gpufed_audit_sink_* and gpufed_audit_witness_* families are exported too), on 127.0.0.1 with a port the kernel
    picks, in accelerated virtual time. The sink's endpoint is a port held bound but never
    listening: connecting is refused, so the sink stays disconnected and lagging, which is
    enough for its families to have samples.

    tokens: lines for `--tokens` (None: the controller generates <state>/admin.token)."""

    def __init__(self, gpufed, source_dir, work_dir, tokens=None, speed=600):
        self.work_dir = work_dir
        self.repo = os.path.join(work_dir, "repo")
        self.state = os.path.join(work_dir, "state")
        self.log = os.path.join(work_dir, "gpufed-run.log")
        shutil.rmtree(work_dir, ignore_errors=True)
        os.makedirs(work_dir)
        shutil.copytree(os.path.join(source_dir, "examples", "quickstart"), self.repo)
        self._hold = socket.socket()
        self._hold.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        ca = os.path.join(work_dir, "sink-ca.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-subj", "/CN=gpufed-test-ca", "-days", "1",
                        "-keyout", os.path.join(work_dir, "sink-ca.key"), "-out", ca],
                       check=True, capture_output=True)
        with open(os.path.join(self.repo, "zz-test-audit-sink.yaml"), "w") as f:
            f.write(f"""apiVersion: gpufed/v1alpha1
kind: AuditSink
metadata:
  name: archive-https
spec:
  type: https
  endpoint: https://127.0.0.1:{self._hold.getsockname()[1]}/audit
  tls: {{caFile: {ca}}}
  lagLimit: {{records: 1}}
""")
        # And one AuditWitness behind the same refusing port, so the gpufed_audit_witness_*
        # families exist too (its key is random: nothing ever answers).
        name = "witness-1.test"
        pub = os.urandom(32)
        key_id = hashlib.sha256(name.encode() + b"\n\x04" + pub).hexdigest()[:8]
        vkey = f"{name}+{key_id}+{base64.b64encode(bytes([4]) + pub).decode()}"
        with open(os.path.join(self.repo, "zz-test-audit-witness.yaml"), "w") as f:
            f.write(f"""apiVersion: gpufed/v1alpha1
kind: AuditWitness
metadata:
  name: witness-1
spec:
  url: https://127.0.0.1:{self._hold.getsockname()[1]}
  vkey: {vkey}
  tls: {{caFile: {ca}}}
""")
        args = [gpufed, "run", "--config", self.repo, "--state", self.state, "--listen", "127.0.0.1:0",
                "--speed", str(speed), "--drain-timeout", "1s"]
        if tokens is not None:
            path = os.path.join(work_dir, "tokens")
            with open(path, "w") as f:
                f.write("".join(f"{t} {who}\n" for t, who in tokens))
            os.chmod(path, 0o600)
            args += ["--tokens", path]
        self.proc = spawn(args, self.log)
        match = poll("gpufed run to print its API address",
                     lambda: re.search(r"gpufed run: API on (http://127\.0\.0\.1:(\d+))", tail(self.log, 200)),
                     timeout=20, alive=lambda: self.proc.poll() is None)
        self.url, self.port = match.group(1), int(match.group(2))

    def admin_token(self):
        with open(os.path.join(self.state, "admin.token")) as f:
            return f.read().strip()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        stop(self.proc)
        self._hold.close()


def new_token():
    return secrets.token_hex(24)
