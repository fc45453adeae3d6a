#!/usr/bin/env bash
# bench/sse-latency.sh: run event append -> SSE client latency with many subscribers on one run (informational).
# Starts Atrium on a fresh database (the PostgreSQL on 127.0.0.1:5432, else embedded) with ATRIUM_RUNS_WORKERS=0,
# so the benchmark's run stays queued (open) while events are appended to it, then runs bench/sse-subscribers.c
# (compiled here with gcc): SUBSCRIBERS connections on GET /api/runs/:id/sse, EVENTS appended one every 20 ms.
#   bench/sse-latency.sh [SUBSCRIBERS] [EVENTS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
subscribers="${1:-1000}"; events="${2:-300}"
work="$(mktemp -d)"; db=""; pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  [ -n "$db" ] && psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

command -v gcc >/dev/null || { echo "gcc is needed to build the subscriber client" >&2; exit 1; }
gcc -O2 -o "$work/sse-subscribers" "$root/bench/sse-subscribers.c" -lpthread
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
args=(run --port "$port" --data "$work/data")
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && command -v psql >/dev/null; then
  db="bench_sse_$$"
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db" >/dev/null
  args+=(--db-url "jdbc:postgresql://127.0.0.1:5432/$db?user=postgres")
fi
ATRIUM_RUNS_WORKERS=0 ATRIUM_RUNS_HEARTBEAT_MS=15000 "$root/atrium" "${args[@]}" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
token=$(ATRIUM_NO_BUILD=1 "$root/atrium" token create --user bench --url "http://127.0.0.1:$port" --data "$work/data" | tail -n 1)
api() { curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
id_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]]["id"])' "$1"; }
thread=$(api -d '{"title":"bench"}' "http://127.0.0.1:$port/api/spaces/bench/threads" | id_of thread)
run=$(api -d '{}' "http://127.0.0.1:$port/api/threads/$thread/runs" | id_of run)
server_pid=$(pgrep -P "$pid" java || echo "$pid")
"$work/sse-subscribers" 127.0.0.1 "$port" "$token" "$run" "$subscribers" "$events" "$server_pid"
