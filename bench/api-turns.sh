#!/usr/bin/env bash
# bench/api-turns.sh: issue 34's API target, authenticated GET /api/spaces/<id> of this commit against a base commit
# (default b5eca81, the issue's starting commit), with both servers up at once and measured in turns: base, this, base,
# this, ... A shared two-core machine drifts by 20 % from one minute to the next, and bench/run.sh measures the two
# commits minutes apart; here each round's ratio compares two runs taken seconds apart. Prints each round's requests/s,
# the server JVM's CPU per request, and the median ratio against the target (>= 1.0x). Informational only.
#
#   bench/api-turns.sh [ROUNDS=6]                 # needs this checkout built and the base in bench/.cache/base
#   BENCH_BASE=<rev> bench/api-turns.sh           # another base; `BENCH_BASE=<rev> bench/run.sh` builds and caches it
#   BENCH_WARMUPS=4 BENCH_WRK_DURATION=10s        # the defaults: 4 warm-up runs of 15 s per server, 10 s per round
#
# Each server runs on a fresh database of the machine's PostgreSQL and a fresh data directory; every process and
# database is gone at exit (lib/common.sh's trap).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
ROUNDS="${1:-6}"
BASE_REV="${BENCH_BASE:-b5eca81}"
WARMUPS="${BENCH_WARMUPS:-4}"
DURATION="${BENCH_WRK_DURATION:-10s}"
WRK=(-t2 -c32)
WORK_DIR="$(mktemp -d /tmp/atrium-api-turns.XXXXXX)"
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"
# shellcheck source=lib/jvm.sh
. "$BENCH_DIR/lib/jvm.sh"

command -v wrk >/dev/null || die "wrk is missing (apt-get install wrk)"
psql_admin -c 'select 1' >/dev/null 2>&1 || die "no PostgreSQL at $PG_HOST:$PG_PORT"
BASE_SHA=$(git -C "$ROOT" rev-parse --verify --quiet "$BASE_REV^{commit}") || die "BENCH_BASE=$BASE_REV is not a commit"
BASE_ROOT="$BENCH_DIR/.cache/base/$BASE_SHA"
[ -f "$BASE_ROOT/bench-complete" ] || die "no build of ${BASE_SHA:0:10} cached: run BENCH_BASE=$BASE_REV bench/run.sh once"
[ -f "$ROOT/launcher/target/atrium.jar" ] || die "build this checkout first (mvn -B -q -DskipTests install)"

declare -A PORT PID URL TOKEN
# serve NAME ROOT: starts ROOT's server on a fresh database, makes a token and finds its space
serve() {
  local name="$1" root="$2" data="$WORK_DIR/$1" started space
  PORT[$name]=$(free_port)
  create_database "bench_turns_$name"
  started=$(now_ms)
  env ATRIUM_NO_BUILD=1 ATRIUM_CDS=off "$root/atrium" run --port "${PORT[$name]}" --data "$data" \
    --db-url "jdbc:postgresql://$PG_HOST:$PG_PORT/$CREATED_DB?user=$PG_USER" >"$WORK_DIR/$name.log" 2>&1 </dev/null &
  PID[$name]=$!
  STARTED_PIDS+=("${PID[$name]}")
  while healthz_code "${PORT[$name]}"; set_now_ms; [ "$HEALTHZ_CODE" != 200 ]; do
    is_running "${PID[$name]}" || { tail -n 30 "$WORK_DIR/$name.log" >&2; die "$name exited before /healthz 200"; }
    [ $(( NOW_MS - started )) -lt $(( START_TIMEOUT_S * 1000 )) ] || die "$name: no /healthz 200"
    nap 0.05
  done
  TOKEN[$name]=$(ATRIUM_NO_BUILD=1 timeout 60 "$root/atrium" token create --user benchuser \
    --url "http://127.0.0.1:${PORT[$name]}" --data "$data" 2>>"$WORK_DIR/token.err" </dev/null | tail -n 1)
  [ -n "${TOKEN[$name]}" ] || die "$name: no token ($(cat "$WORK_DIR/token.err"))"
  space=$(space_id_of "${PORT[$name]}" "${TOKEN[$name]}")
  [ -n "$space" ] || die "$name: GET /api/spaces/me gave no space id"
  URL[$name]="http://127.0.0.1:${PORT[$name]}/api/spaces/$space"
  log "$name (${3}): serving ${URL[$name]}"
}

jiffies() { process_jiffies "$(server_jvm_pid "${PID[$1]}")"; }

# measure NAME SECONDS OUT: one wrk run; prints "requests/s cpu-us-per-request" into OUT
measure() {
  local before after requests
  before=$(jiffies "$1")
  timeout 120 wrk "${WRK[@]}" -d"$2" -H "Authorization: Bearer ${TOKEN[$1]}" "${URL[$1]}" >"$3.wrk" 2>&1 || die "wrk: $(cat "$3.wrk")"
  after=$(jiffies "$1")
  grep -q "Non-2xx" "$3.wrk" && die "$1 answered errors: $(cat "$3.wrk")"
  requests=$(awk '/requests in/ { print $1 }' "$3.wrk")
  awk -v r="$(awk '/^Requests\/sec:/ { print $2 }' "$3.wrk")" -v j=$(( after - before )) -v n="$requests" \
    -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f %.0f\n", r, j * 1e6 / hz / n }' >"$3"
}

serve base "$BASE_ROOT" "${BASE_SHA:0:10}"
serve this "$ROOT" "$(git -C "$ROOT" rev-parse --short HEAD)"
log "warming up: $WARMUPS runs of 15 s per server, in turns ..."
for i in $(seq 1 "$WARMUPS"); do
  for name in base this; do measure "$name" 15s "$WORK_DIR/warm-$name-$i"; done
done

ratios=()
cpu_ratios=()
echo
echo "GET /api/spaces/<id>, wrk ${WRK[*]} -d$DURATION, both servers up, in turns ($(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  %-6s %14s %14s %8s   %s\n' round "this req/s" "base req/s" ratio "server CPU per request, this / base"
for i in $(seq 1 "$ROUNDS"); do
  for name in base this; do measure "$name" "$DURATION" "$WORK_DIR/round-$name-$i"; done
  read -r this_rps this_us <"$WORK_DIR/round-this-$i"
  read -r base_rps base_us <"$WORK_DIR/round-base-$i"
  ratio=$(awk -v a="$this_rps" -v b="$base_rps" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  cpu_ratios+=("$(awk -v a="$this_us" -v b="$base_us" 'BEGIN { printf "%.3f", a / b }')")
  printf '  %-6s %14s %14s %7sx   %s / %s us\n' "$i" "$this_rps" "$base_rps" "$ratio" "$this_us" "$base_us"
done
median_ratio=$(echo "${ratios[*]}" | median)
verdict=$(awk -v m="$median_ratio" 'BEGIN { print (m >= 1.0 ? "met" : "MISSED") }')
echo "  median ratio this / base (${BASE_SHA:0:10}): ${median_ratio}x   target >= 1.0x: $verdict"
echo "  median server CPU per request, this / base: $(echo "${cpu_ratios[*]}" | median)x   (no target)"
