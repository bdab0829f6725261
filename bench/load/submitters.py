"""The load's submitters (gpufed-load --replicas N --pg, ha_load.py): clients that POST
workloads over HTTP/1.1 keep-alive to any replica, follow a standby's 307 to the leader,
and retry a 503 or a lost connection on the next replica with a bounded backoff; each
records (tenant, name, status, uid, seconds, redirects, retries) per submission, for
ha_load.py's count of what was lost or acknowledged twice. In threads, or in forked
processes (--client-procs) whose records come back through a pipe.
"""
import json
import os
import random
import socket
import threading
import time
import urllib.parse

SUBMIT_GIVE_UP_S = 90.0


class KeepAlive:
    """One HTTP/1.1 keep-alive connection to 127.0.0.1:port, written and read by hand.
    http.client parses each answer's headers with the email package: at 16 clients the
    load tool took 23 % of this 2-core machine's CPU from the replicas it measures, 15 %
    with this (bench/README.md, session 54). Raises OSError or ValueError on any failure
    (the caller drops the connection and retries elsewhere)."""

    def __init__(self, port, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise OSError("connection closed")
        self.buf += chunk

    def _take_line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def request(self, path, body, headers):
        """(status, headers with lower-case names, body, closing) of one POST."""
        head = "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n" % (path, len(body))
        head += "".join("%s: %s\r\n" % kv for kv in headers.items()) + "\r\n"
        self.sock.sendall(head.encode() + body.encode())
        status_line = self._take_line().split(b" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1."):
            raise OSError("not an HTTP answer")
        status = int(status_line[1])
        answer = {}
        while True:
            line = self._take_line()
            if not line:
                break
            name, _, value = line.partition(b":")
            answer[name.strip().lower().decode("latin-1")] = value.strip().decode("latin-1")
        if answer.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self._take_line().split(b";")[0], 16)
                if size == 0:
                    while self._take_line():
                        pass
                    break
                data += self._take(size)
                self._take(2)
        else:
            data = self._take(int(answer.get("content-length", "0")))
        return status, answer, data, answer.get("connection", "").lower() == "close"

    def close(self):
        self.sock.close()


class Submitter:
    """One client: a keep-alive connection per replica it talks to; follows 307s."""

    def __init__(self, replicas, home, token, max_backoff=1.0):
        self.token = token
        self.max_backoff = max_backoff
        self.replicas = replicas
        self.ports = [r.port for r in replicas]
        self.home = home
        self.target = self.ports[home]  # where it sends next: the leader it was sent to, once known
        self.conns = {}

    def conn(self, port):
        c = self.conns.get(port)
        if c is None:
            c = self.conns[port] = KeepAlive(port, timeout=30)
        return c

    def drop(self, port):
        c = self.conns.pop(port, None)
        if c is not None:
            c.close()

    def post(self, path, body, stop):
        """(status, parsed body or None, redirects, retries): retries 503 and connection
        errors on the next replica with a bounded backoff; gives up after SUBMIT_GIVE_UP_S."""
        give_up = time.monotonic() + SUBMIT_GIVE_UP_S
        redirects = retries = 0
        backoff = 0.05
        target, target_path = self.target, path
        while True:
            try:
                c = self.conn(target)
                status, answer, data, closing = c.request(
                    target_path, body, {"Authorization": "Bearer " + self.token, "Content-Type": "application/yaml"})
                if closing:
                    self.drop(target)
            except (OSError, ValueError):
                self.drop(target)
                status, data, answer = 0, b"", {}
            if status == 307 and redirects < 8:
                loc = urllib.parse.urlsplit(answer.get("location", ""))
                if loc.hostname == "127.0.0.1" and loc.port:
                    redirects += 1
                    target = loc.port
                    target_path = loc.path + ("?" + loc.query if loc.query else "")
                    continue
            if status in (0, 307, 502, 503, 504):
                retries += 1
                if time.monotonic() > give_up or stop.is_set():
                    return status, None, redirects, retries
                # The next replica; a standby there sends it on to the leader.
                i = self.ports.index(target) if target in self.ports else self.home
                target, target_path = self.ports[(i + 1) % len(self.ports)], path
                time.sleep(backoff)
                backoff = min(self.max_backoff, backoff * 2)
                continue
            self.target = target  # the one that answered: the leader, until it fails
            try:
                parsed = json.loads(data)
            except ValueError:
                parsed = None
            return status, parsed, redirects, retries

    def close(self):
        for port in list(self.conns):
            self.drop(port)


def client_threads(replicas, token, clients, a, workload_body, rate, stop, results, lock):
    threads = []
    for c in clients:
        t = threading.Thread(target=client, args=(replicas, token, c % len(replicas), range(c, a.workloads, a.clients),
                                                  a.seed * 1000 + c, workload_body, rate / a.clients, stop,
                                                  results, lock), daemon=True)
        t.start()
        threads.append(t)
    return threads


def client_process(replicas, token, clients, a, workload_body, rate):
    """--client-procs: forks a process for `clients` (from the main thread, before any
    client thread exists: a fork beside running threads could inherit a lock one of them
    held); returns (pid, reader) whose records come back whole when all are done."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        mine, my_lock = [], threading.Lock()
        for t in client_threads(replicas, token, clients, a, workload_body, rate, threading.Event(), mine, my_lock):
            t.join()
        with os.fdopen(writer, "w") as w:
            json.dump(mine, w)
        os._exit(0)
    os.close(writer)
    return pid, reader


def collect(pid, reader, results, lock):
    """The records of a client_process (bounded like any client: SUBMIT_GIVE_UP_S)."""
    with os.fdopen(reader) as r:
        got = [tuple(x) for x in json.load(r)]
    os.waitpid(pid, 0)
    with lock:
        results.extend(got)


def client(replicas, token, home, indices, seed, workload_body, rate, stop, results, lock):
    rng = random.Random(seed)
    s = Submitter(replicas, home, token)
    mine = []
    next_at = time.monotonic()
    for i in indices:
        if stop.is_set():
            break
        if rate > 0:
            now = time.monotonic()
            if next_at > now:
                time.sleep(next_at - now)
            next_at = max(next_at, now) + 1.0 / rate
        tenant, name, body = workload_body(i, rng)
        start = time.perf_counter()
        status, parsed, redirects, retries = s.post("/v1/tenants/%s/workloads" % tenant, body, stop)
        # The uid of a 201; of any other answer, its error message (the record's 4th field).
        uid = parsed.get("uid", "") if isinstance(parsed, dict) else ""
        if status != 201 and isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            uid = str(parsed["error"].get("message", ""))[:300]
        done = time.perf_counter()
        mine.append((tenant, name, status, uid, done - start, redirects, retries, done))
    s.close()
    with lock:
        results.extend(mine)
