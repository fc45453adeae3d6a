#!/usr/bin/env bash
# bench/run.sh: prints Atrium's cold-start and throughput figures next to their targets.
# Informational only: it never gates CI. See bench/README.md for what it measures and how to read it.
#
#   bench/run.sh                 # needs launcher/target/atrium.jar and cli/target/atrium-cli.jar built
#   BENCH_KEEP=1 bench/run.sh    # keep the temp dir (server logs, wrk output) instead of removing it
#
# Everything binds to 127.0.0.1. Every process it starts is stopped (SIGTERM, then waited for), every
# database it creates is dropped and its temp dir removed, also when interrupted (trap on EXIT/INT/TERM).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
SERVER_JAR="$ROOT/launcher/target/atrium.jar"
CLI_JAR="$ROOT/cli/target/atrium-cli.jar"
BARE_DIR="$BENCH_DIR/bare-jetty"
BARE_JAR="$BARE_DIR/target/bare-jetty.jar"

# Settings; the BENCH_* environment variables override them.
WRK_THREADS="${BENCH_WRK_THREADS:-2}"
WRK_CONNECTIONS="${BENCH_WRK_CONNECTIONS:-32}"
WRK_DURATION="${BENCH_WRK_DURATION:-15s}"
WRK_WARMUP="${BENCH_WRK_WARMUP:-60s}"
START_TIMEOUT_S="${BENCH_START_TIMEOUT:-120}"   # per server start
STOP_TIMEOUT_S="${BENCH_STOP_TIMEOUT:-30}"      # SIGTERM grace before SIGKILL
POLL_INTERVAL_S=0.02                            # /healthz polling period
PG_HOST="${BENCH_PG_HOST:-127.0.0.1}"
PG_PORT="${BENCH_PG_PORT:-5432}"
PG_USER="${BENCH_PG_USER:-postgres}"
KEEP="${BENCH_KEEP:-0}"
TARGET_START_MS=4000
TARGET_RATIO_PCT=60

# State the cleanup trap works from.
WORK_DIR=""
STARTED_PIDS=()
CREATED_DBS=()
LAST_PID=""     # set by start_atrium / start_bare_jetty (no subshell, so the cleanup list stays right)
ELAPSED_MS=""   # set by wait_healthy, cold_start and stop_process
SEEN_CODES=""   # set by wait_healthy: the /healthz answers before the first 200, e.g. "000x101 404x16 503x2"

log() { echo "bench: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# ---------------------------------------------------------------------------------------------- setup

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

# ensure_apt_package COMMAND PACKAGE: installs PACKAGE with apt-get unless COMMAND is already there.
ensure_apt_package() {
  local cmd="$1" pkg="$2"
  command -v "$cmd" >/dev/null && return 0
  log "installing $pkg (apt-get) ..."
  export DEBIAN_FRONTEND=noninteractive
  if ! as_root apt-get install -y -qq "$pkg" >"$WORK_DIR/apt.log" 2>&1; then
    as_root apt-get update -qq >>"$WORK_DIR/apt.log" 2>&1 || true
    as_root apt-get install -y -qq "$pkg" >>"$WORK_DIR/apt.log" 2>&1 \
      || die "apt-get install $pkg failed (see $WORK_DIR/apt.log)"
  fi
  command -v "$cmd" >/dev/null || die "$pkg installed but $cmd is not on PATH"
}

check_prerequisites() {
  local c
  for c in java mvn curl timeout awk; do
    command -v "$c" >/dev/null || die "$c is required"
  done
  if [ ! -f "$SERVER_JAR" ] || [ ! -f "$CLI_JAR" ]; then
    die "build the server first: (cd $ROOT && mvn -B -q -DskipTests -pl launcher,cli -am package)"
  fi
  ensure_apt_package wrk wrk
  ensure_apt_package psql postgresql-client
}

# build_bare_jetty: packages bench/bare-jetty (standalone Maven project) when its jar is missing or stale.
build_bare_jetty() {
  if [ -f "$BARE_JAR" ] && [ -z "$(find "$BARE_DIR/pom.xml" "$BARE_DIR/src" -type f -newer "$BARE_JAR" -print -quit)" ]; then
    return 0
  fi
  log "building bench/bare-jetty (mvn package) ..."
  run_tracked timeout 600 mvn -B -q -f "$BARE_DIR/pom.xml" package >"$WORK_DIR/bare-jetty-build.log" 2>&1 \
    || { tail -n 30 "$WORK_DIR/bare-jetty-build.log" >&2; die "bare-jetty build failed"; }
}

# port_in_use PORT: true when something accepts connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: prints a port on 127.0.0.1 that nothing listens on.
free_port() {
  local _ p
  for _ in $(seq 1 100); do
    p=$(( 20000 + RANDOM % 30000 ))
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  die "no free port found"
}

# ------------------------------------------------------------------------------------------ processes

# is_running PID: alive and neither a zombie nor dead (a process that is gone has no status to read).
is_running() {
  local state
  state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null || true)
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

forget_pid() {
  local pid="$1" p kept=()
  for p in "${STARTED_PIDS[@]}"; do [ "$p" = "$pid" ] || kept+=("$p"); done
  STARTED_PIDS=("${kept[@]}")
}

# stop_process PID: SIGTERM, wait up to STOP_TIMEOUT_S, then SIGKILL; sets ELAPSED_MS to how long it took.
stop_process() {
  local pid="$1" started deadline stopped=0
  started=$(now_ms)
  deadline=$(( started + STOP_TIMEOUT_S * 1000 ))
  kill -TERM "$pid" 2>/dev/null || true
  while [ "$(now_ms)" -lt "$deadline" ]; do
    if ! is_running "$pid"; then stopped=1; break; fi
    sleep 0.1
  done
  if [ "$stopped" = 0 ]; then
    log "process $pid ignored SIGTERM for ${STOP_TIMEOUT_S}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  forget_pid "$pid"
  ELAPSED_MS=$(( $(now_ms) - started ))
}

# run_tracked COMMAND...: runs COMMAND in the background and waits for it, so that a SIGTERM/SIGINT to this
# script is handled at once (bash defers traps while a foreground command runs) and the cleanup stops it.
run_tracked() {
  local pid rc=0
  "$@" &
  pid=$!
  STARTED_PIDS+=("$pid")
  wait "$pid" || rc=$?
  forget_pid "$pid"
  return "$rc"
}

# stop_orphan_embedded_pg DATA_DIR: stops an embedded PostgreSQL left behind by a server that was killed.
stop_orphan_embedded_pg() {
  local pidfile="$1/pg/postmaster.pid" pid _
  [ -f "$pidfile" ] || return 0
  pid=$(head -n 1 "$pidfile" 2>/dev/null || true)
  [ -n "$pid" ] && is_running "$pid" || return 0
  # only if it really is the postgres serving this very data dir
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/pg" || return 0
  log "stopping leftover embedded PostgreSQL (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do is_running "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# start_atrium PORT DATA_DIR LOG [JDBC_URL]: launches `atrium run` in the background; sets LAST_PID.
start_atrium() {
  local port="$1" data="$2" logfile="$3" db_url="${4:-}"
  local args=(run --port "$port" --data "$data")
  [ -n "$db_url" ] && args+=(--db-url "$db_url")
  echo "=== $(date -u +%FT%TZ) atrium ${args[*]}" >>"$logfile"
  # `atrium run` execs java, so $! is the server's own pid.
  ATRIUM_NO_BUILD=1 "$ROOT/atrium" "${args[@]}" >>"$logfile" 2>&1 </dev/null &
  LAST_PID=$!
  STARTED_PIDS+=("$LAST_PID")
}

# wait_healthy PORT PID STARTED_MS LOG: polls /healthz every ~20 ms until 200; sets ELAPSED_MS since STARTED_MS
# and SEEN_CODES (000 = no connection yet).
wait_healthy() {
  local port="$1" pid="$2" started="$3" logfile="$4" code deadline
  local -A seen=()
  deadline=$(( started + START_TIMEOUT_S * 1000 ))
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/healthz" || true)
    code="${code:-000}"
    if [ "$code" = 200 ]; then
      ELAPSED_MS=$(( $(now_ms) - started ))
      SEEN_CODES=""
      for code in $(printf '%s\n' "${!seen[@]}" | sort); do SEEN_CODES+="${code}x${seen[$code]} "; done
      SEEN_CODES="${SEEN_CODES% }"
      return 0
    fi
    seen[$code]=$(( ${seen[$code]:-0} + 1 ))
    is_running "$pid" || { tail -n 30 "$logfile" >&2; die "server on port $port exited before /healthz answered 200"; }
    [ "$(now_ms)" -lt "$deadline" ] || { tail -n 30 "$logfile" >&2; die "no /healthz 200 on port $port within ${START_TIMEOUT_S}s (last: $code)"; }
    sleep "$POLL_INTERVAL_S"
  done
}

# cold_start PORT DATA_DIR LOG [JDBC_URL]: starts the server; sets LAST_PID and ELAPSED_MS (to first 200).
cold_start() {
  local started
  started=$(now_ms)
  start_atrium "$@"
  wait_healthy "$1" "$LAST_PID" "$started" "$3"
}

# ------------------------------------------------------------------------------------------- database

psql_admin() {
  PGCONNECT_TIMEOUT=5 timeout 60 psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -v ON_ERROR_STOP=1 -qAt "$@"
}

external_pg_available() { psql_admin -c 'select 1' >/dev/null 2>&1; }

create_database() {
  psql_admin -c "CREATE DATABASE $1" >/dev/null
  CREATED_DBS+=("$1")
}

drop_database() {
  psql_admin -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" >/dev/null 2>&1 \
    || psql_admin -c "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1 \
    || log "could not drop database $1"
}

jdbc_url() { echo "jdbc:postgresql://$PG_HOST:$PG_PORT/$1?user=$PG_USER"; }

# -------------------------------------------------------------------------------------------- cleanup

cleanup() {
  local rc=$? pid dir db
  set +e
  trap - EXIT INT TERM
  for pid in "${STARTED_PIDS[@]}"; do
    log "stopping pid $pid"
    stop_process "$pid"
  done
  if [ -n "$WORK_DIR" ]; then
    for dir in "$WORK_DIR"/embedded "$WORK_DIR"/throughput-embedded; do
      [ -d "$dir" ] && stop_orphan_embedded_pg "$dir"
    done
  fi
  for db in "${CREATED_DBS[@]}"; do drop_database "$db"; done
  if [ -n "$WORK_DIR" ] && [ -d "$WORK_DIR" ]; then
    if [ "$KEEP" = 1 ]; then log "kept $WORK_DIR (BENCH_KEEP=1)"; else rm -rf "$WORK_DIR"; fi
  fi
  exit "$rc"
}

# ----------------------------------------------------------------------------------------- throughput

# create_token PORT DATA_DIR: creates user benchuser and a personal access token; prints the token.
create_token() {
  local out="$WORK_DIR/token.out"
  ATRIUM_NO_BUILD=1 timeout 60 "$ROOT/atrium" token create --user benchuser --url "http://127.0.0.1:$1" --data "$2" \
    >"$out" 2>>"$WORK_DIR/token.err" </dev/null || { cat "$WORK_DIR/token.err" >&2; die "atrium token create failed"; }
  tail -n 1 "$out"
}

# space_id_of PORT TOKEN: prints the id of the token owner's default space (GET /api/spaces/me).
space_id_of() {
  curl -sf --max-time 10 -H "Authorization: Bearer $2" "http://127.0.0.1:$1/api/spaces/me" \
    | grep -o '"id":"[^"]*"' | head -n 1 | sed 's/"id":"\(.*\)"/\1/'
}

# fetch_body URL TOKEN FILE: saves the response body; fails unless 200 application/json.
fetch_body() {
  local headers="$3.headers" status
  curl -s --max-time 10 -D "$headers" -o "$3" -H "Authorization: Bearer $2" "$1" || die "GET $1 failed"
  status=$(head -n 1 "$headers" | awk '{print $2}')
  [ "$status" = 200 ] || die "GET $1 answered $status"
  grep -qi '^content-type: application/json' "$headers" || die "GET $1 is not application/json"
}

# start_bare_jetty PORT BODY_FILE LOG: starts the baseline and waits until it answers; sets LAST_PID.
start_bare_jetty() {
  local port="$1" deadline
  java -jar "$BARE_JAR" "$port" "$2" >>"$3" 2>&1 </dev/null &
  LAST_PID=$!
  STARTED_PIDS+=("$LAST_PID")
  deadline=$(( $(now_ms) + 30000 ))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/" || true)" = 200 ]; do
    is_running "$LAST_PID" || { cat "$3" >&2; die "bare Jetty exited"; }
    [ "$(now_ms)" -lt "$deadline" ] || die "bare Jetty did not answer within 30s"
    sleep "$POLL_INTERVAL_S"
  done
}

# run_wrk URL TOKEN OUTFILE SERVER_PID: a warm-up run (discarded), then the measured run with --latency into
# OUTFILE, and where the CPU went during it into OUTFILE.cpu.
run_wrk() {
  local url="$1" token="$2" out="$3" server_pid="$4" guard
  local common=(-t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -H "Authorization: Bearer $token")
  guard=$(( ${WRK_DURATION%s} + ${WRK_WARMUP%s} + 60 ))
  run_tracked timeout "$guard" wrk "${common[@]}" -d"$WRK_WARMUP" "$url" >"$out.warmup" 2>&1 \
    || die "wrk warm-up failed: $(cat "$out.warmup")"
  cpu_share_start "$server_pid"
  run_tracked timeout "$guard" wrk "${common[@]}" -d"$WRK_DURATION" --latency "$url" >"$out" 2>&1 \
    || die "wrk failed: $(cat "$out")"
  cpu_share_end "$server_pid" "$out.cpu"
}

# wrk_field FILE FIELD: rps | p50 | p99 | non2xx | errors, from wrk's text output.
wrk_field() {
  case "$2" in
    rps)    awk '/^Requests\/sec:/ {print $2}' "$1" ;;
    p50)    awk '$1 == "50%" {print $2}' "$1" ;;
    p99)    awk '$1 == "99%" {print $2}' "$1" ;;
    non2xx) awk '/Non-2xx or 3xx responses:/ {print $NF}' "$1" ;;
    errors) sed -n 's/^ *Socket errors: *//p' "$1" ;;
  esac
}

# cpu_jiffies: prints "TOTAL IDLE IRQ" clock ticks summed over all CPUs since boot (/proc/stat); IRQ is the
# hard+soft interrupt time, where the kernel does most of the loopback TCP work, charged to no process.
cpu_jiffies() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $5 + $6, $7 + $8; exit }' /proc/stat; }

# process_jiffies PID: user+system clock ticks of all threads of PID (0 once it is gone).
process_jiffies() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0; }

# save_times / children_cpu_ms: user+system CPU ms of this shell's finished children, from `times`. It must run
# in this very shell (in a $(...) subshell it would count from zero), hence the file in between.
save_times() { times >"$WORK_DIR/times"; }
children_cpu_ms() {
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print int((u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000) }' \
    "$WORK_DIR/times"
}

# cpu_share_start SERVER_PID / cpu_share_end SERVER_PID OUTFILE: where the CPU went between the two calls,
# in % of one CPU (100% x CPUs = all of them): "busy server wrk irq other", wrk being the child run meanwhile.
cpu_share_start() {
  read -r CPU_T0 CPU_I0 CPU_Q0 < <(cpu_jiffies)
  CPU_S0=$(process_jiffies "$1")
  save_times
  CPU_C0=$(children_cpu_ms)
}
cpu_share_end() {
  local t1 i1 q1 s1 c1
  read -r t1 i1 q1 < <(cpu_jiffies)
  s1=$(process_jiffies "$1")
  save_times
  c1=$(children_cpu_ms)
  awk -v dt=$(( t1 - CPU_T0 )) -v di=$(( i1 - CPU_I0 )) -v dq=$(( q1 - CPU_Q0 )) -v ds=$(( s1 - CPU_S0 )) \
      -v dc=$(( c1 - CPU_C0 )) \
      -v n="$(nproc)" -v hz="$(getconf CLK_TCK)" 'BEGIN {
    if (dt <= 0) { print "? ? ? ? ?"; exit }
    wall = dt / n                                  # ticks of one CPU
    busy = 100 * (dt - di) / wall; server = 100 * ds / wall; wrk = 100 * (dc * hz / 1000) / wall
    irq = 100 * dq / wall
    other = busy - server - wrk - irq; if (other < 0) other = 0
    printf "%.0f %.0f %.0f %.0f %.0f\n", busy, server, wrk, irq, other }' >"$2"
}

# ----------------------------------------------------------------------------------------------- report

# verdict VALUE OP TARGET: "met" or "MISSED".
verdict() {
  awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN { ok = (op == "<=") ? (v <= t) : (v >= t); print ok ? "met" : "MISSED" }'
}

# summarize_log LOG NAME: counts warnings/errors in a server log and shows the distinct messages.
summarize_log() {
  local logfile="$1" name="$2" errors warnings
  [ -f "$logfile" ] || return 0
  errors=$(grep -cE 'SEVERE|ERROR|Exception' "$logfile" || true)
  warnings=$(grep -cE 'WARN' "$logfile" || true)
  printf '  %-26s %4s error/exception lines, %4s warning lines\n' "$name" "$errors" "$warnings"
  # the message line after java.util.logging's two-line format, or the line itself for slf4j-simple
  grep -E -A1 'SEVERE|ERROR|WARN|Exception' "$logfile" | grep -vE '^--$|^[A-Z][a-z]{2} [0-9]+, [0-9]{4} |^[[:space:]]+(at |\.\.\. )' \
    | sed -E 's/^[0-9-]+ [0-9:.]+ //; s/https?:\/\/127\.0\.0\.1:[0-9]+/http:\/\/127.0.0.1:PORT/g; s/_[A-Za-z0-9]{20,}/_ID/g' \
    | cut -c1-160 | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/      /' || true
}

# print_cpu_share LABEL CPU_FILE OTHER_LABEL: one line from a cpu_share_end file.
print_cpu_share() {
  local busy server wrk irq other
  read -r busy server wrk irq other <"$2"
  printf '    %-16s busy %4s%%: server %4s%%, wrk %4s%%, kernel irq %3s%%, %s %s%%\n' \
    "$1" "$busy" "$server" "$wrk" "$irq" "$3" "$other"
}

print_report() {
  local fresh="$1" warm="$2" external="$3" stop_ms="$4" tp_label="$5" atrium_out="$6" bare_out="$7" body_bytes="$8"
  local fresh_seen="$9" warm_seen="${10}" external_seen="${11}"
  local a_rps b_rps ratio
  a_rps=$(wrk_field "$atrium_out" rps)
  b_rps=$(wrk_field "$bare_out" rps)
  ratio=$(awk -v a="$a_rps" -v b="$b_rps" 'BEGIN { printf "%.1f", (b > 0) ? 100 * a / b : 0 }')

  echo
  echo "==================================== Atrium benchmark ===================================="
  echo "$(date -u +%FT%TZ), $(nproc) CPUs shared by wrk, the servers and whatever else runs on this machine"
  echo "load average (1/5/15 min) before the benchmark started: $LOAD_AT_START"
  echo
  echo "Cold start: launch of 'atrium run' to the first GET /healthz 200 (polled every ~20 ms)"
  printf '  %-44s %8s ms   target <= %d ms: %s\n' "embedded PostgreSQL, fresh data dir (initdb)" "$fresh" \
    "$TARGET_START_MS" "$(verdict "$fresh" '<=' "$TARGET_START_MS")"
  printf '  %-44s %8s ms   target <= %d ms: %s\n' "embedded PostgreSQL, same data dir again" "$warm" \
    "$TARGET_START_MS" "$(verdict "$warm" '<=' "$TARGET_START_MS")"
  if [ -n "$external" ]; then
    printf '  %-44s %8s ms   (no target)\n' "external PostgreSQL, fresh database" "$external"
  else
    printf '  %-44s %8s\n' "external PostgreSQL, fresh database" "skipped (no PostgreSQL at $PG_HOST:$PG_PORT)"
  fi
  printf '  %-44s %8s ms   (SIGTERM to exit, embedded, informational)\n' "stop" "$stop_ms"
  echo "  /healthz answers before the first 200 (code x count; 000 = no connection yet):"
  echo "    embedded fresh: ${fresh_seen:-none}; embedded again: ${warm_seen:-none}; external: ${external_seen:-n/a}"
  echo
  echo "Throughput: wrk -t$WRK_THREADS -c$WRK_CONNECTIONS -d$WRK_DURATION --latency after a $WRK_WARMUP warm-up,"
  echo "  GET /api/spaces/<id> with a Bearer token; bare Jetty answers the same $body_bytes body bytes"
  printf '  %-30s %12s %10s %10s   %s\n' "" "requests/s" "p50" "p99" "non-2xx / socket errors"
  printf '  %-30s %12s %10s %10s   %s / %s\n' "Atrium ($tp_label)" "$a_rps" \
    "$(wrk_field "$atrium_out" p50)" "$(wrk_field "$atrium_out" p99)" \
    "$(wrk_field "$atrium_out" non2xx | grep . || echo 0)" "$(wrk_field "$atrium_out" errors | grep . || echo none)"
  printf '  %-30s %12s %10s %10s   %s / %s\n' "bare Jetty 12.0.32 handler" "$b_rps" \
    "$(wrk_field "$bare_out" p50)" "$(wrk_field "$bare_out" p99)" \
    "$(wrk_field "$bare_out" non2xx | grep . || echo 0)" "$(wrk_field "$bare_out" errors | grep . || echo none)"
  printf '  %-30s %11s%%   target >= %d%%: %s\n' "Atrium / bare Jetty" "$ratio" \
    "$TARGET_RATIO_PCT" "$(verdict "$ratio" '>=' "$TARGET_RATIO_PCT")"
  echo "  CPU during each measured run, in % of one CPU ($(( $(nproc) * 100 ))% = all $(nproc)):"
  print_cpu_share "Atrium run" "$atrium_out.cpu" "rest (PostgreSQL, other processes)"
  print_cpu_share "bare Jetty run" "$bare_out.cpu" "rest (other processes)"
  echo
  echo "Server logs (stdout+stderr of each process):"
  summarize_log "$WORK_DIR/embedded.log" "atrium, embedded PG"
  summarize_log "$WORK_DIR/external.log" "atrium, external PG"
  summarize_log "$WORK_DIR/throughput-embedded.log" "atrium, throughput server"
  summarize_log "$WORK_DIR/bare-jetty.log" "bare Jetty"
  echo "=========================================================================================="
}

# ------------------------------------------------------------------------------------------------ main

main() {
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
  WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench.XXXXXX")"
  LOAD_AT_START="$(load_average)"
  check_prerequisites
  build_bare_jetty

  local port fresh_ms warm_ms external_ms="" stop_ms db tp_port tp_data tp_label
  local fresh_seen warm_seen external_seen=""
  local token space_id url body bare_port atrium_pid

  # 1. Embedded PostgreSQL: fresh data dir (initdb), then the same data dir again.
  port=$(free_port)
  log "cold start, embedded PostgreSQL, fresh data dir ..."
  cold_start "$port" "$WORK_DIR/embedded" "$WORK_DIR/embedded.log"
  fresh_ms=$ELAPSED_MS
  fresh_seen=$SEEN_CODES
  stop_process "$LAST_PID"
  stop_ms=$ELAPSED_MS
  log "  $fresh_ms ms (stopped in $stop_ms ms)"
  log "cold start, embedded PostgreSQL, same data dir ..."
  cold_start "$port" "$WORK_DIR/embedded" "$WORK_DIR/embedded.log"
  warm_ms=$ELAPSED_MS
  warm_seen=$SEEN_CODES
  stop_process "$LAST_PID"
  stop_ms=$ELAPSED_MS
  log "  $warm_ms ms (stopped in $stop_ms ms)"

  # 2. External PostgreSQL, fresh database; this server then serves the throughput run.
  tp_port=$(free_port)
  if external_pg_available; then
    db="bench_$(date +%s)_$$"
    create_database "$db"
    log "cold start, external PostgreSQL, fresh database $db ..."
    tp_data="$WORK_DIR/external"
    cold_start "$tp_port" "$tp_data" "$WORK_DIR/external.log" "$(jdbc_url "$db")"
    external_ms=$ELAPSED_MS
    external_seen=$SEEN_CODES
    log "  $external_ms ms"
    tp_label="external PG"
  else
    log "no PostgreSQL at $PG_HOST:$PG_PORT: external cold start skipped, throughput on embedded PostgreSQL"
    tp_data="$WORK_DIR/throughput-embedded"
    cold_start "$tp_port" "$tp_data" "$WORK_DIR/throughput-embedded.log"
    tp_label="embedded PG"
  fi

  # 3. Throughput: Atrium, then the bare Jetty baseline answering the very same body bytes.
  atrium_pid=$LAST_PID
  token=$(create_token "$tp_port" "$tp_data")
  space_id=$(space_id_of "$tp_port" "$token")
  [ -n "$space_id" ] || die "GET /api/spaces/me gave no space id"
  url="http://127.0.0.1:$tp_port/api/spaces/$space_id"
  body="$WORK_DIR/body.json"
  fetch_body "$url" "$token" "$body"
  log "benchmarked request: GET /api/spaces/$space_id ($(wc -c <"$body") bytes)"

  log "wrk against Atrium ($WRK_WARMUP warm-up + $WRK_DURATION) ..."
  run_wrk "$url" "$token" "$WORK_DIR/wrk-atrium.txt" "$atrium_pid"

  bare_port=$(free_port)
  start_bare_jetty "$bare_port" "$body" "$WORK_DIR/bare-jetty.log"
  curl -s --max-time 5 "http://127.0.0.1:$bare_port/api/spaces/$space_id" | cmp -s - "$body" \
    || die "bare Jetty does not answer the same body bytes"
  log "wrk against bare Jetty ($WRK_WARMUP warm-up + $WRK_DURATION) ..."
  run_wrk "http://127.0.0.1:$bare_port/api/spaces/$space_id" "$token" "$WORK_DIR/wrk-bare.txt" "$LAST_PID"

  print_report "$fresh_ms" "$warm_ms" "$external_ms" "$stop_ms" "$tp_label" \
    "$WORK_DIR/wrk-atrium.txt" "$WORK_DIR/wrk-bare.txt" "$(wc -c <"$body")" \
    "$fresh_seen" "$warm_seen" "$external_seen"
}

main "$@"
