#!/usr/bin/env bash
# bench/sse-latency.sh: run event -> SSE client latency with many subscribers on one run (informational).
# A real run streams a model's answer: bench/fake-model.py is an OpenAI-compatible chat-completions server on
# loopback whose deltas come with INTERVAL_MS (20) between them once told to go; each becomes a `message.delta` event that Atrium's
# dispatcher appends to the run (a PostgreSQL transaction) and fans out. bench/sse-subscribers.c (built here with
# gcc) holds SUBSCRIBERS connections on GET /api/runs/:id/sse and measures arrival minus the event's created_at.
# WARMUP deltas come first and are not measured (the server's JIT compiles the fan-out path meanwhile).
# Atrium runs on a fresh database (the PostgreSQL on 127.0.0.1:5432, else embedded).
#   bench/sse-latency.sh [SUBSCRIBERS] [EVENTS] [WARMUP] [INTERVAL_MS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
subscribers="${1:-1000}"; events="${2:-500}"; warmup="${3:-250}"; interval="${4:-20}"
work="$(mktemp -d)"; db=""; pid=""; model=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  [ -n "$model" ] && kill "$model" 2>/dev/null || true
  [ -n "$db" ] && psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

command -v gcc >/dev/null || { echo "gcc is needed to build the subscriber client" >&2; exit 1; }
gcc -O2 -o "$work/sse-subscribers" "$root/bench/sse-subscribers.c" -lpthread
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

python3 "$root/bench/fake-model.py" "$work/model.port" "$warmup" "$events" "$interval" &
model=$!
for _ in $(seq 1 100); do [ -s "$work/model.port" ] && break; sleep 0.05; done
model_port=$(cat "$work/model.port")

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
args=(run --port "$port" --data "$work/data")
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && command -v psql >/dev/null; then
  db="bench_sse_$$"
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db" >/dev/null
  args+=(--db-url "jdbc:postgresql://127.0.0.1:5432/$db?user=postgres")
fi
ATRIUM_RUNS_WORKERS=1 ATRIUM_RUNS_HEARTBEAT_MS=15000 ATRIUM_OPENAI_BASE_URL="http://127.0.0.1:$model_port/v1" \
  ATRIUM_OPENAI_API_KEY=bench "$root/atrium" "${args[@]}" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
token=$(ATRIUM_NO_BUILD=1 "$root/atrium" token create --user bench --url "http://127.0.0.1:$port" --data "$work/data" | tail -n 1)
api() { curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
id_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]]["id"])' "$1"; }
api -X PATCH -d '{"provider":"openai","model":"bench"}' "http://127.0.0.1:$port/api/spaces/bench/model" >/dev/null
thread=$(api -d '{"title":"bench"}' "http://127.0.0.1:$port/api/spaces/bench/threads" | id_of thread)
run=$(api -d '{"input":"Count, please."}' "http://127.0.0.1:$port/api/threads/$thread/runs" | id_of run)
server_pid=$(pgrep -P "$pid" java || echo "$pid")
"$work/sse-subscribers" 127.0.0.1 "$port" "$token" "$run" "$subscribers" "$warmup" "$events" "$model_port" "$server_pid"
status=$(api "http://127.0.0.1:$port/api/runs/$run" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["status"])')
echo "the run ended $status"
