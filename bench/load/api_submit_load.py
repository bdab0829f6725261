#!/usr/bin/env python3
"""Bounded API load for `gpufed run --listen`: N concurrent clients POST workloads for a
fixed time and report accepted submissions per second and latency percentiles. Stops by
itself. Optionally starts a TCP listener on 127.0.0.1 that accepts and never answers (a
hanging cluster endpoint for a connector to time out on).

  api_submit_load.py --url http://127.0.0.1:PORT --token-file STATE/admin.token \
      --tenant lab --clients 8 --seconds 20
  api_submit_load.py --hang-port-file FILE --seconds 60     # only the hanging endpoint
"""
import argparse
import http.client
import socket
import threading
import time
import urllib.parse


def hang(port_file, seconds):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    with open(port_file, "w") as f:
        f.write(str(server.getsockname()[1]))
    held = []
    server.settimeout(0.5)
    end = time.time() + seconds
    while time.time() < end:
        try:
            conn, _ = server.accept()
            held.append(conn)  # never read, never answered
        except socket.timeout:
            pass
    for c in held:
        c.close()


def client(url, token, tenant, end, index, results, lock):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    n = 0
    while time.time() < end:
        body = ("apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: load-%d-%d}\nspec:\n"
                "  tenant: %s\n  resources: {gpus: 1}\n  durationHint: 1h\n  run: {command: [\"true\"]}\n"
                % (index, n, tenant))
        start = time.time()
        conn.request("POST", "/v1/workloads", body, {"Authorization": "Bearer " + token,
                                                     "Content-Type": "application/yaml"})
        resp = conn.getresponse()
        resp.read()
        with lock:
            results.append((resp.status, time.time() - start))
        n += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url")
    p.add_argument("--token-file")
    p.add_argument("--tenant", default="lab")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--hang-port-file")
    a = p.parse_args()
    if a.hang_port_file:
        hang(a.hang_port_file, a.seconds)
        return
    token = open(a.token_file).read().strip()
    results, lock = [], threading.Lock()
    end = time.time() + a.seconds
    threads = [threading.Thread(target=client, args=(a.url, token, a.tenant, end, i, results, lock))
               for i in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = sorted(lat for status, lat in results if status == 201)
    other = len(results) - len(ok)
    pct = lambda q: ok[min(len(ok) - 1, int(q * len(ok)))] * 1000 if ok else float("nan")
    print("clients %d, %.0f s: %d accepted (%.1f/s), %d other answers; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms"
          % (a.clients, a.seconds, len(ok), len(ok) / a.seconds, other, pct(0.5), pct(0.99), max(ok) * 1000 if ok else 0))


if __name__ == "__main__":
    main()
