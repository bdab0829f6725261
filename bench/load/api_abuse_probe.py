#!/usr/bin/env python3
"""Abuse probes against a live `gpufed run --listen`: slowloris connections,
a chunked 400 MB upload, and the server's memory. Bounded; stops by itself.

  api_abuse_probe.py --url http://127.0.0.1:PORT --token-file STATE/admin.token --pid PID \
      [--tenant alpha] [--slow 64] [--upload-mib 400]

1. Opens --slow connections that each send half a request head and then one header line
   every 8 s (slowloris), and, while they are open, times GET /healthz and an
   authenticated POST /v1/workloads (20 each): the promise is an answer within 1 s.
   Reports how many slow connections the server had closed by then.
2. Streams a chunked body of --upload-mib MiB without a token (401 expected) and with one
   (413 expected), stopping when the answer comes; reports how much was sent.
3. Reports the server's VmRSS (from /proc/PID/status) before and after.
"""
import argparse
import http.client
import select
import socket
import threading
import time
import urllib.parse


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def slowloris(host, port, count, stop, closed):
    socks = []
    for i in range(count):
        s = socket.create_connection((host, port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow-0: 1\r\n")
        socks.append(s)
    line = 1
    while not stop.wait(8.0):
        for s in socks:
            try:
                s.sendall(b"X-Slow-%d: 1\r\n" % line)
            except OSError:
                pass
        line += 1
    # Closed by the server: readable with nothing to read.
    ready, _, _ = select.select(socks, [], [], 0)
    closed.append(sum(1 for s in ready if not s.recv(1, socket.MSG_PEEK)))
    for s in socks:
        s.close()


def timed(conn, method, path, body=None, headers=None):
    start = time.time()
    conn.request(method, path, body, headers or {})
    resp = conn.getresponse()
    resp.read()
    return resp.status, (time.time() - start) * 1000.0


def upload(host, port, head, mib):
    """Chunked upload of `mib` MiB, generated as it goes; stops at the server's answer."""
    s = socket.create_connection((host, port))
    s.sendall(head)
    s.setblocking(False)
    chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
    sent, offset, answer, sending = 0, 0, b"", True
    while b"\r\n\r\n" not in answer:
        r, w, _ = select.select([s], [s] if sending else [], [], 20)
        if not r and not w:
            break
        if r:
            try:
                data = s.recv(4096)
            except BlockingIOError:
                data = None
            except OSError:
                break
            if data == b"":
                break
            answer += data or b""
        if w and sending:
            try:
                n = s.send(chunk[offset:])
                offset += n
                if offset == len(chunk):
                    offset, sent = 0, sent + 65536
                    if sent >= mib << 20:
                        s.send(b"0\r\n\r\n")
                        sending = False
            except BlockingIOError:
                pass
            except OSError:
                sending = False
    s.close()
    status = int(answer[9:12]) if answer.startswith(b"HTTP/1.1 ") else 0
    return status, sent / float(1 << 20)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--tenant", default="alpha")
    p.add_argument("--slow", type=int, default=64)
    p.add_argument("--upload-mib", type=int, default=400)
    a = p.parse_args()
    u = urllib.parse.urlparse(a.url)
    token = open(a.token_file).read().split()[0]
    auth = {"Authorization": "Bearer " + token}
    rss_before = rss_mib(a.pid)

    stop, closed = threading.Event(), []
    slow = threading.Thread(target=slowloris, args=(u.hostname, u.port, a.slow, stop, closed))
    slow.start()
    time.sleep(1.0)  # let every slow connection be accepted and send its half head
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
    health = [timed(conn, "GET", "/healthz") for _ in range(20)]
    stamp = int(time.time())
    submits = []
    for i in range(20):
        body = ("apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: probe-%d-%d}\nspec:\n"
                "  tenant: %s\n  resources: {gpus: 1}\n  durationHint: 1h\n" % (stamp, i, a.tenant))
        submits.append(timed(conn, "POST", "/v1/workloads", body, dict(auth, **{"Content-Type": "application/yaml"})))
    stop.set()
    slow.join()
    print("slowloris: %d connections; /healthz %s, max %.1f ms; submit %s, max %.1f ms; %d closed by the server"
          % (a.slow, sorted({s for s, _ in health}), max(t for _, t in health), sorted({s for s, _ in submits}),
             max(t for _, t in submits), closed[0]))

    head = (b"POST /v1/workloads HTTP/1.1\r\nHost: x\r\nContent-Type: application/yaml\r\n"
            b"Transfer-Encoding: chunked\r\n")
    status, mib = upload(u.hostname, u.port, head + b"\r\n", a.upload_mib)
    print("chunked %d MiB without a token: %d after %.1f MiB sent" % (a.upload_mib, status, mib))
    status, mib = upload(u.hostname, u.port, head + b"Authorization: Bearer " + token.encode() + b"\r\n\r\n",
                         a.upload_mib)
    print("chunked %d MiB with a token: %d after %.1f MiB sent" % (a.upload_mib, status, mib))
    print("server VmRSS: %.1f MiB before, %.1f MiB after" % (rss_before, rss_mib(a.pid)))


if __name__ == "__main__":
    main()
