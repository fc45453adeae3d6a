#!/usr/bin/env python3
"""bench/notification-poster.py: the posting side of bench/notifications.sh, on loopback.

Waits for GET /go on its own port (bench/sse-subscribers.c sends it once every subscriber is connected), then posts
WARMUP notifications titled "w<i>" and EVENTS titled "m<i>" to Atrium with POST /api/notifications/test (the same
Notifications service other capabilities post through), INTERVAL_MS apart, on one keep-alive connection.
    notification-poster.py PORT_FILE ATRIUM_PORT TOKEN WARMUP EVENTS [INTERVAL_MS]
"""
import http.client
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, atrium_port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
warmup, events = int(sys.argv[4]), int(sys.argv[5])
interval = (int(sys.argv[6]) if len(sys.argv) > 6 else 20) / 1000.0
go = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/go":
            go.set()
        self.send_response(200 if self.path == "/go" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def post_all():
    go.wait()
    conn = http.client.HTTPConnection("127.0.0.1", atrium_port)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    titles = ["w%d" % i for i in range(warmup)] + ["m%d" % i for i in range(events)]
    next_at = time.monotonic()
    for title in titles:
        conn.request("POST", "/api/notifications/test", json.dumps({"title": title}), headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 201:
            sys.stderr.write("posting failed: %d %s\n" % (r.status, body[:200]))
            sys.exit(1)
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
threading.Thread(target=post_all, daemon=True).start()
server.serve_forever()
