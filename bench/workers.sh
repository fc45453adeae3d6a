#!/usr/bin/env bash
# bench/workers.sh: a hello-world worker through Atrium's Host routing (the kernel's relay since issue 34: each request
# read and routed on the selector threads, below the servlet stack) beside the same worker hit directly on workerd's
# own port, in one run (informational; issue 34's targets: >= 80% of direct throughput at 16 connections, p50 added <= 0.15 ms on one).
# Starts Atrium (fresh database: the PostgreSQL on 127.0.0.1:5432, else embedded) with the workerd provider, deploys
# the worker through the API, finds its workerd port (the process listening there answers the worker's text), then runs
# wrk (apt) against both with the same connections and duration. Each path is warmed up first (WARMUP seconds, default
# 10, then three 2 s runs: the JIT needs that long under load, and new connections at the start of a run otherwise
# recompile the hot path inside the measured run). Then ROUNDS (default 3) rounds each measure both paths, in turn
# direct first and Atrium first, so a neighbour's load on a shared machine falls on both; the summary gives the median
# of the rounds' ratios and of the p99 added under that load. Then two runs on one connection per path give the
# latency the proxy adds without queueing (at saturation p99 is mostly time spent waiting for a core). Beside each
# figure: the CPU time per request of Atrium's JVM, workerd and wrk (from /proc), which stays comparable when the
# machine is shared and the rates are not (docs/decisions.md, issue 20 proxy).
#   bench/workers.sh [CONNECTIONS] [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
connections="${1:-16}"; seconds="${2:-10}"
WORK_DIR="$(mktemp -d)"; db=""; pid=""
# shellcheck source=lib/basics.sh
. "$root/bench/lib/basics.sh"
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  [ -n "$db" ] && psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK_DIR"
}
trap cleanup EXIT INT TERM
ensure_apt_package wrk wrk

port=$(free_port)
args=(run --port "$port" --data "$WORK_DIR/data")
if port_in_use 5432 && command -v psql >/dev/null; then
  db="bench_workers_$$"
  psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db" >/dev/null
  args+=(--db-url "jdbc:postgresql://127.0.0.1:5432/$db?user=postgres")
fi
"$root/atrium" "${args[@]}" >"$WORK_DIR/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 900); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$WORK_DIR/server.log" >&2; exit 1; }
  sleep 0.1
done
# (a first run after a change builds the server inside `atrium run`, which can outlast the loop)
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { tail -n 30 "$WORK_DIR/server.log" >&2; echo "bench: no /healthz 200 within 90 s" >&2; exit 1; }
export ATRIUM_URL="http://127.0.0.1:$port" ATRIUM_NO_BUILD=1
ATRIUM_TOKEN=$("$root/atrium" token create --user bench --data "$WORK_DIR/data" | tail -n 1)
export ATRIUM_TOKEN
marker="hello from bench $$"
printf 'export default { fetch() { return new Response("%s") } }\n' "$marker" >"$WORK_DIR/hello.js"
"$root/atrium" service deploy --space bench --name hello "$WORK_DIR/hello.js" >"$WORK_DIR/deploy.out" \
  || { cat "$WORK_DIR/deploy.out" "$WORK_DIR/server.log" >&2; die "the deployment failed"; }
host="hello.apps.localhost"
[ "$(curl -s -H "Host: $host" "http://127.0.0.1:$port/")" = "$marker" ] || die "the worker does not answer through Atrium"
direct=""
for p in $(ss -ltnH 2>/dev/null | awk '{print $4}' | sed -n 's/^127\.0\.0\.1://p'); do
  [ "$p" = "$port" ] && continue
  if [ "$(curl -s -m 1 "http://127.0.0.1:$p/" 2>/dev/null)" = "$marker" ]; then direct=$p; break; fi
done
[ -n "$direct" ] || die "workerd's own port of the worker was not found"

jvm=$(pgrep -f -- "-Dorg.osgi.service.http.port=$port" | head -n 1 || true)
workerd=$(ss -ltnpH "sport = :$direct" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
ticks() { [ -n "$1" ] && awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /[0-9]s$/ && v !~ /ms$/) n *= 1000; printf "%.2f", n }'; }
warm() { # URL [HOST]
  local h=()
  [ -n "${2:-}" ] && h=(-H "Host: $2")
  wrk -t2 -c"$connections" -d"${WARMUP:-10}s" "${h[@]}" "$1" >/dev/null
  for _ in 1 2 3; do wrk -t2 -c"$connections" -d2s "${h[@]}" "$1" >/dev/null; done
}
measure() { # NAME URL [HOST]: prints the figures and records "NAME RATE P99MS" in $WORK_DIR/figures
  local name="$1" url="$2" h=() j0 w0 j1 w1 hz
  [ -n "${3:-}" ] && h=(-H "Host: $3")
  j0=$(ticks "$jvm"); w0=$(ticks "$workerd")
  TIMEFORMAT='%U %S'
  { time wrk -t2 -c"$connections" -d"${seconds}s" --latency "${h[@]}" "$url" >"$WORK_DIR/$name.txt"; } 2>"$WORK_DIR/$name.time"
  j1=$(ticks "$jvm"); w1=$(ticks "$workerd"); hz=$(getconf CLK_TCK)
  awk -v n="$name" -v j=$((j1 - j0)) -v w=$((w1 - w0)) -v hz="$hz" -v t="$(cat "$WORK_DIR/$name.time")" '
    /requests in/ {q=$1} /Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx|Socket errors/ {e=e" "$0}
    END {split(t, k, " "); printf "%-8s %10s req/s   p50 %8s   p99 %8s   CPU us/request: atrium %d, workerd %d, wrk %d%s\n",
      n, r, p50, p99, j * 1e6 / hz / q, w * 1e6 / hz / q, (k[1] + k[2]) * 1e6 / q, e}' "$WORK_DIR/$name.txt"
  echo "$name $(awk '/Requests\/sec/ {print $2}' "$WORK_DIR/$name.txt") $(to_ms "$(awk '/^ +99%/ {print $2}' "$WORK_DIR/$name.txt")")" >>"$WORK_DIR/figures"
}
rounds="${ROUNDS:-3}"
log "hello worker, $connections connections, ${seconds}s each, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
warm "http://127.0.0.1:$direct/"
warm "http://127.0.0.1:$port/" "$host"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then
    measure direct "http://127.0.0.1:$direct/"; measure atrium "http://127.0.0.1:$port/" "$host"
  else
    measure atrium "http://127.0.0.1:$port/" "$host"; measure direct "http://127.0.0.1:$direct/"
  fi
done
# rounds pair up in file order: each round wrote one direct and one atrium line
awk '$1 == "direct" {d[++nd] = $2; dp[nd] = $3} $1 == "atrium" {a[++na] = $2; ap[na] = $3}
  function median(v, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  END { for (i = 1; i <= nd; i++) { ratio[i] = 100 * a[i] / d[i]; added[i] = ap[i] - dp[i]; rs = rs sprintf(" %.1f%%", ratio[i]) }
    printf "summary: Atrium/direct by round%s; median %.1f%% (target >= 80%%); p99 added, median of the rounds %.2f ms (target <= 2 ms)\n",
      rs, median(ratio, nd), median(added, nd) }' "$WORK_DIR/figures"
# the latency the proxy adds, apart from queueing: one connection, one request at a time, on each path in turn
latency() { # NAME URL [HOST]
  local h=()
  [ -n "${3:-}" ] && h=(-H "Host: $3")
  wrk -t1 -c1 -d"${seconds}s" --latency "${h[@]}" "$2" >"$WORK_DIR/$1.lat"
  awk -v n="$1" '/Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {printf "%-8s %10s req/s   p50 %8s   p99 %8s   (one connection)\n", n, r, p50, p99}' "$WORK_DIR/$1.lat"
  echo "$1 $(to_ms "$(awk '/^ +50%/ {print $2}' "$WORK_DIR/$1.lat")") $(to_ms "$(awk '/^ +99%/ {print $2}' "$WORK_DIR/$1.lat")")" >>"$WORK_DIR/latency"
}
latency direct "http://127.0.0.1:$direct/"
latency atrium "http://127.0.0.1:$port/" "$host"
latency direct "http://127.0.0.1:$direct/"
latency atrium "http://127.0.0.1:$port/" "$host"
awk '$1 == "direct" {d50[++nd] = $2; d99[nd] = $3} $1 == "atrium" {a50[++na] = $2; a99[na] = $3}
  END { for (i = 1; i <= nd; i++) { s = s sprintf(" p50 +%.2f ms, p99 +%.2f ms;", a50[i] - d50[i], a99[i] - d99[i]) }
    printf "one connection: added by Atrium per run:%s (target: p50 added <= 0.15 ms)\n", s }' "$WORK_DIR/latency"
# What a splicing proxy could reach here (issue 34): bench/SpliceRelay.java, a JVM relay on one selector thread that
# copies bytes between each client connection and one of its own to workerd, parsing nothing, measured beside direct.
relay_port=$(free_port)
java "$root/bench/SpliceRelay.java" "$relay_port" "$direct" >"$WORK_DIR/relay.log" 2>&1 &
relay=$!
for _ in $(seq 1 100); do [ "$(curl -s -m 1 "http://127.0.0.1:$relay_port/" 2>/dev/null)" = "$marker" ] && break; sleep 0.1; done
jvm=$relay
warm "http://127.0.0.1:$relay_port/"
measure direct "http://127.0.0.1:$direct/"; measure splice "http://127.0.0.1:$relay_port/"
kill "$relay" 2>/dev/null || true
tail -n 2 "$WORK_DIR/figures" | awk '$1 == "direct" {d = $2} $1 == "splice" {s = $2}
  END { printf "splice ceiling: a zero-parse relay reaches %.1f%% of direct (Atrium'"'"'s relay, which reads and routes every request: the summary above)\n", 100 * s / d }'
