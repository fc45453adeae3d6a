#!/usr/bin/env python3
"""bench/fake-model.py: an OpenAI-compatible chat-completions server for bench/sse-latency.sh, on loopback.

A request to POST /v1/chat/completions gets a streaming answer (SSE `data:` chunks, then `data: [DONE]`) whose
deltas wait until GET /go, then come with INTERVAL_MS between them: WARMUP deltas "w<i> " and EVENTS deltas "m<i> ".
Each delta becomes one `message.delta` run event in Atrium, as a real model's tokens do.
    fake-model.py PORT_FILE WARMUP EVENTS [INTERVAL_MS]
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, warmup, events = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
interval = (int(sys.argv[4]) if len(sys.argv) > 4 else 20) / 1000.0
go = threading.Event()


def chunk(delta, finish=None):
    body = {"id": "bench", "object": "chat.completion.chunk", "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return ("data: " + json.dumps(body) + "\n\n").encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/go":
            go.set()
        self.send_response(200 if self.path == "/go" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/chat/completions":
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(chunk({"role": "assistant", "content": ""}))
        self.wfile.flush()
        go.wait(600)
        for prefix, n in (("w", warmup), ("m", events)):
            for i in range(n):
                # a pause after each delta, never a catch-up burst: this process shares the cores with the server
                # and falls behind when they are busy, and a burst of its own making is not a model's behaviour
                time.sleep(interval)
                self.wfile.write(chunk({"content": "%s%d " % (prefix, i)}))
                self.wfile.flush()
        self.wfile.write(chunk({}, "stop"))
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
