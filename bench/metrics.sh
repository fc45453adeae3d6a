#!/usr/bin/env bash
# bench/metrics.sh: what the metrics cost a user's requests. Two servers of the same build side by side, one with
# metrics (the default) and one with ATRIUM_METRICS=false, each on its own database; the same authenticated
# GET /api/spaces/<id> as bench/run.sh, with wrk, in interleaved rounds (on, off, off, on, ...) so that the machine's
# drift falls on both alike. Prints the median requests/s of each, p50/p99, and the cost (1 - on/off).
# Target (issue 41): the cost <= 3 % of API throughput. Informational only: it never gates CI.
#
#   bench/metrics.sh                         # needs launcher/target/atrium.jar + cli jar, and PostgreSQL
#   BENCH_METRICS_ROUNDS=7 BENCH_WRK_DURATION=15s bench/metrics.sh
#
# Everything binds to 127.0.0.1; every process started is stopped and the databases dropped on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

ROUNDS="${BENCH_METRICS_ROUNDS:-5}"
WRK_THREADS="${BENCH_WRK_THREADS:-2}"
WRK_CONNECTIONS="${BENCH_WRK_CONNECTIONS:-32}"
WRK_DURATION="${BENCH_WRK_DURATION:-10s}"
WRK_WARMUP="${BENCH_WRK_WARMUP:-20s}"
TARGET_COST_PCT=3
WORK_DIR=$(mktemp -d /tmp/bench-metrics.XXXXXX)

ensure_apt_package wrk wrk
psql_admin -c 'select 1' >/dev/null 2>&1 || die "needs PostgreSQL at $PG_HOST:$PG_PORT"
[ -f "$ROOT/launcher/target/atrium.jar" ] && [ -f "$ROOT/cli/target/atrium-cli.jar" ] \
  || die "build the server first: (cd $ROOT && mvn -B -q -DskipTests package)"

declare -A PORT=() URL=() TOKEN=() PID=()

# serve NAME METRICS: starts a server with ATRIUM_METRICS=METRICS on a fresh database and data directory, makes a
# user's token and finds the URL of the benchmarked request.
serve() {
  local name="$1" metrics="$2" data="$WORK_DIR/$1" port started token space
  port=$(free_port)
  create_database "bench_metrics_$name"
  started=$(now_ms)
  env ATRIUM_NO_BUILD=1 ATRIUM_METRICS="$metrics" "$ROOT/atrium" run --port "$port" --data "$data" \
    --db-url "jdbc:postgresql://$PG_HOST:$PG_PORT/$CREATED_DB?user=$PG_USER" >>"$WORK_DIR/$name.log" 2>&1 </dev/null &
  PID[$name]=$!
  STARTED_PIDS+=("${PID[$name]}")
  until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/healthz" || true)" = 200 ]; do
    is_running "${PID[$name]}" || { tail -n 30 "$WORK_DIR/$name.log" >&2; die "$name exited before /healthz 200"; }
    [ "$(( $(now_ms) - started ))" -lt "$(( START_TIMEOUT_S * 1000 ))" ] || die "$name: no /healthz 200"
    sleep 0.05
  done
  token=$(ATRIUM_NO_BUILD=1 timeout 60 "$ROOT/atrium" token create --user benchmetrics --url "http://127.0.0.1:$port" \
    --data "$data" 2>>"$WORK_DIR/token.err" </dev/null | tail -n 1)
  [ -n "$token" ] || die "no token for $name ($(cat "$WORK_DIR/token.err"))"
  space=$(curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/spaces/me" \
    | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  [ -n "$space" ] || die "$name: no workspace id"
  PORT[$name]=$port
  TOKEN[$name]=$token
  URL[$name]="http://127.0.0.1:$port/api/spaces/$space"
  log "$name (ATRIUM_METRICS=$metrics) healthy on port $port in $(( $(now_ms) - started )) ms"
}

# hit NAME DURATION OUT: wrk against NAME's request
hit() {
  timeout $(( ${2%s} + 60 )) wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"$2" --latency \
    -H "Authorization: Bearer ${TOKEN[$1]}" "${URL[$1]}" >"$3" 2>&1 || die "wrk failed: $(cat "$3")"
  grep -q 'Non-2xx' "$3" && die "$1 answered non-2xx: $(cat "$3")"
  return 0
}

serve on true
serve off false
curl -sf -o /dev/null -H "Authorization: Bearer $(cat "$WORK_DIR/on/operator.token")" "http://127.0.0.1:${PORT[on]}/metrics" \
  || die "the metrics server does not answer /metrics"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$WORK_DIR/off/operator.token")" \
  "http://127.0.0.1:${PORT[off]}/metrics")" = 404 ] || die "ATRIUM_METRICS=false still answers /metrics"

log "warm-up: $WRK_WARMUP each"
hit on "$WRK_WARMUP" "$WORK_DIR/warm-on.txt"
hit off "$WRK_WARMUP" "$WORK_DIR/warm-off.txt"

ON=""
OFF=""
for r in $(seq 1 "$ROUNDS"); do
  if [ $(( r % 2 )) = 1 ]; then order="on off"; else order="off on"; fi
  for name in $order; do
    hit "$name" "$WRK_DURATION" "$WORK_DIR/$name-$r.txt"
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$WORK_DIR/$name-$r.txt")
    p50=$(awk '$1 == "50%" {print $2}' "$WORK_DIR/$name-$r.txt")
    p99=$(awk '$1 == "99%" {print $2}' "$WORK_DIR/$name-$r.txt")
    log "round $r $name: $rps req/s, p50 $p50, p99 $p99"
    if [ "$name" = on ]; then ON+="$rps "; else OFF+="$rps "; fi
  done
done

on_median=$(echo "$ON" | median)
off_median=$(echo "$OFF" | median)
cost=$(awk -v a="$on_median" -v b="$off_median" 'BEGIN { printf "%.1f", (1 - a / b) * 100 }')
verdict=$(awk -v c="$cost" -v t="$TARGET_COST_PCT" 'BEGIN { print (c <= t) ? "meets" : "misses" }')
echo
echo "metrics cost, GET /api/spaces/<id>, $WRK_CONNECTIONS connections, $ROUNDS interleaved rounds of $WRK_DURATION:"
printf '  metrics on   median %s req/s   (rounds: %s)\n' "$on_median" "$ON"
printf '  metrics off  median %s req/s   (rounds: %s)\n' "$off_median" "$OFF"
printf '  cost %s %% of throughput: %s the target (<= %s %%)\n' "$cost" "$verdict" "$TARGET_COST_PCT"
