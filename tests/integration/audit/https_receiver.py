#!/usr/bin/env python3
"""A minimal HTTPS receiver for the `https` AuditSink in the shell tests: mutual TLS
(client certificates signed by the test CA are required), 127.0.0.1 only, appends every
POSTed body (JSON lines) to OUT and answers 204. Writes its port to PORTFILE once it
listens; runs until the test ends it by PID.
Usage: https_receiver.py PORTFILE OUT CA CERT KEY"""
import http.server
import os
import ssl
import sys

port_file, out_path, ca, cert, key = sys.argv[1:6]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the sink reuses its TLS connection

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        if length > 64 * 1024 * 1024:
            self.send_error(413)
            return
        body = self.rfile.read(length)
        with open(out_path, "ab") as out:
            out.write(body if body.endswith(b"\n") or not body else body + b"\n")
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
context.load_verify_locations(ca)
context.verify_mode = ssl.CERT_REQUIRED
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
