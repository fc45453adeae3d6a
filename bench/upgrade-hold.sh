#!/usr/bin/env bash
# bench/upgrade-hold.sh: hold-time distribution of bundle upgrades under load (informational, never gates CI).
# Starts Atrium on a fresh database (the PostgreSQL on 127.0.0.1:5432, else embedded), then runs
# bench/UpgradeHold.java: 8 clients read a capability's list while its bundle is updated 20 times (memories by default;
# threads and repos are the others issue 34 names).
#   bench/upgrade-hold.sh [UPDATES] [CLIENTS] [memories|threads|repos]   (BENCH_KEEP_LOG=FILE keeps the server log there)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
updates="${1:-20}"; clients="${2:-8}"; bundle="${3:-memories}"
work="$(mktemp -d)"; db=""; pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  [ -n "$db" ] && psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
[ -n "${BENCH_KEEP_LOG:-}" ] && trap 'cp "$work/server.log" "$BENCH_KEEP_LOG" 2>/dev/null; cleanup' EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
args=(run --port "$port" --data "$work/data")
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && command -v psql >/dev/null; then
  db="bench_hold_$$"
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
operator=$(cat "$work/data/operator.token")
curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d '{"content":"read during upgrades"}' \
  "http://127.0.0.1:$port/api/spaces/bench/memories" >/dev/null
java "$root/bench/UpgradeHold.java" "http://127.0.0.1:$port" "$token" "$operator" \
  "$root/bundles/$bundle/target/$bundle-0.1.0-SNAPSHOT.jar" "/api/spaces/bench/$bundle" "$updates" "$clients"
