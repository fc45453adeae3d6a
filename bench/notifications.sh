#!/usr/bin/env bash
# bench/notifications.sh: posted notification -> SSE client latency with many subscribers of one Principal
# (informational). The same method as bench/sse-latency.sh (the run-event bench): bench/sse-subscribers.c (built here
# with gcc) holds SUBSCRIBERS connections on GET /api/notifications/sse and measures arrival minus the notification's
# created_at (PostgreSQL's clock, the same machine's); bench/notification-poster.py posts them, once every subscriber
# is connected, with POST /api/notifications/test (the Notifications service other capabilities post through),
# INTERVAL_MS (20) apart. WARMUP notifications come first and are not measured (the server's JIT compiles the
# fan-out path meanwhile). Atrium runs on a fresh database (the PostgreSQL on 127.0.0.1:5432, else embedded).
#   bench/notifications.sh [SUBSCRIBERS] [EVENTS] [WARMUP] [INTERVAL_MS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
subscribers="${1:-1000}"; events="${2:-500}"; warmup="${3:-250}"; interval="${4:-20}"
work="$(mktemp -d)"; db=""; pid=""; poster=""
cleanup() {
  [ -n "$poster" ] && kill "$poster" 2>/dev/null || true
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
  db="bench_notify_$$"
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db" >/dev/null
  args+=(--db-url "jdbc:postgresql://127.0.0.1:5432/$db?user=postgres")
fi
"$root/atrium" "${args[@]}" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
token=$(ATRIUM_NO_BUILD=1 "$root/atrium" token create --user bench --url "http://127.0.0.1:$port" --data "$work/data" | tail -n 1)
python3 "$root/bench/notification-poster.py" "$work/poster.port" "$port" "$token" "$warmup" "$events" "$interval" &
poster=$!
for _ in $(seq 1 100); do [ -s "$work/poster.port" ] && break; sleep 0.05; done
poster_port=$(cat "$work/poster.port")
server_pid=$(pgrep -P "$pid" java || echo "$pid")
SSE_PATH=/api/notifications/sse SSE_MARK='"type":"notification.test"' SSE_MEASURED='"title":"m' \
  "$work/sse-subscribers" 127.0.0.1 "$port" "$token" - "$subscribers" "$warmup" "$events" "$poster_port" "$server_pid" \
  | sed 's/append -> SSE client latency/posted notification -> SSE client latency/'
unread=$(curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/notifications/unread-count")
echo "unread after the bench: $unread"
