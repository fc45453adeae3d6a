#!/usr/bin/env bash
# bench/run.sh: prints Atrium's cold-start, throughput and memory figures next to their targets, in one run, for
# this commit and for its parent (built in a temporary git worktree), beside a one-line Aries JAX-RS resource in
# the same runtime and a bare Jetty handler answering the same bytes.
# Informational only: it never gates CI. See bench/README.md for what it measures and how to read it.
#
#   bench/run.sh                     # needs launcher/target/atrium.jar and cli/target/atrium-cli.jar built
#   BENCH_BASE=<rev> bench/run.sh    # compare with another commit than HEAD^
#   BENCH_KEEP=1 bench/run.sh        # keep the temp dir (server logs, wrk output) instead of removing it
#   BENCH_METRICS=0 bench/run.sh     # leave out the metrics cost (bench/metrics.sh) at the end
#   BENCH_CLI=0 bench/run.sh         # leave out the CLI command times (bench/cli.sh) at the end
#
# Everything binds to 127.0.0.1. Every process it starts is stopped (SIGTERM, then waited for), every
# database it creates is dropped and its temp dir removed, also when interrupted (trap on EXIT/INT/TERM).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/basics.sh
. "$BENCH_DIR/lib/basics.sh"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
SERVER_JAR="$ROOT/launcher/target/atrium.jar"
CLI_JAR="$ROOT/cli/target/atrium-cli.jar"
BARE_DIR="$BENCH_DIR/bare-jetty"
BARE_JAR="$BARE_DIR/target/bare-jetty.jar"
CEILING_DIR="$BENCH_DIR/aries-ceiling"
CEILING_JAR="$CEILING_DIR/target/aries-ceiling.jar"

# Settings; the BENCH_* environment variables override them.
WRK_THREADS="${BENCH_WRK_THREADS:-2}"
WRK_CONNECTIONS="${BENCH_WRK_CONNECTIONS:-32}"
WRK_DURATION="${BENCH_WRK_DURATION:-10s}"
WRK_WARMUP="${BENCH_WRK_WARMUP:-60s}"              # before the authenticated GET on each commit (JIT warm-up)
WRK_ROUNDS="${BENCH_WRK_ROUNDS:-3}"                # measured runs of the API (and, this commit, the Aries resource) in turns
WRK_WARMUP_EXTRA="${BENCH_WRK_WARMUP_EXTRA:-10s}"  # before /healthz, the Aries resource and bare Jetty
IDLE_SETTLE_S="${BENCH_IDLE_SETTLE:-5}"            # pause after start before the idle RSS is read
BASE_REV="${BENCH_BASE:-HEAD^}"                    # the commit compared with
BASE_CACHE="${BENCH_BASE_CACHE:-$BENCH_DIR/.cache/base}"
START_TIMEOUT_S="${BENCH_START_TIMEOUT:-120}"   # per server start
STOP_TIMEOUT_S="${BENCH_STOP_TIMEOUT:-30}"      # SIGTERM grace before SIGKILL
POLL_INTERVAL_S=0.02                            # /healthz polling period
PG_HOST="${BENCH_PG_HOST:-127.0.0.1}"
PG_PORT="${BENCH_PG_PORT:-5432}"
PG_USER="${BENCH_PG_USER:-postgres}"
KEEP="${BENCH_KEEP:-0}"
TARGET_START_MS=4000
TARGET_PARENT_X=1.0        # authenticated GET, this commit / parent (issue 34: no regression)
TARGET_START_X=0.6         # fresh start with the archive, this commit / parent (issue 34, with BENCH_BASE at its start)
TARGET_CEILING_PCT=50      # authenticated GET, this commit / the one-line Aries resource
TARGET_HEALTHZ_RPS=10000
TARGET_IDLE_RSS_MB=300

# State the cleanup trap works from.
WORK_DIR=""
STARTED_PIDS=()
CREATED_DBS=()
LAST_PID=""     # set by start_atrium / start_bare_jetty (no subshell, so the cleanup list stays right)
ELAPSED_MS=""   # set by wait_healthy, cold_start and stop_process
SEEN_CODES=""   # set by wait_healthy: the /healthz answers before the first 200, e.g. "000x101 404x16 503x2"
BASE_WORKTREE=""           # the temporary git worktree the parent is built in, while it exists
SERVER_ROOT="$ROOT"        # the tree whose ./atrium and jars start_atrium and create_token use
CDS_DIR=""                 # ATRIUM_CDS_DIR for the servers started (one per commit, in the temp dir)
declare -A R=()            # results: "<commit> <figure>" -> value

load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# ---------------------------------------------------------------------------------------------- setup



check_prerequisites() {
  local c
  for c in java mvn git curl timeout awk; do
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

# build_ceiling: packages bench/aries-ceiling (standalone Maven project, a bundle) when missing or stale; from
# scratch, so that no component description of a removed class lingers in target/.
build_ceiling() {
  if [ -f "$CEILING_JAR" ] && [ -z "$(find "$CEILING_DIR/pom.xml" "$CEILING_DIR/src" -type f -newer "$CEILING_JAR" -print -quit)" ]; then
    return 0
  fi
  log "building bench/aries-ceiling (mvn package) ..."
  rm -rf "$CEILING_DIR/target"
  run_tracked timeout 600 mvn -B -q -f "$CEILING_DIR/pom.xml" package >"$WORK_DIR/aries-ceiling-build.log" 2>&1 \
    || { tail -n 30 "$WORK_DIR/aries-ceiling-build.log" >&2; die "aries-ceiling build failed"; }
}

# warn_if_stale: the jars are what is measured as "this commit"; say so when sources changed after they were built.
warn_if_stale() {
  local newer
  newer=$(find "$ROOT/pom.xml" "$ROOT/bnd.bnd" "$ROOT/cnf" "$ROOT/bundles" "$ROOT/launcher" "$ROOT/cli" \
    -type f -newer "$SERVER_JAR" -not -path '*/target/*' -print -quit 2>/dev/null || true)
  [ -z "$newer" ] || log "WARNING: $newer is newer than launcher/target/atrium.jar: rebuild, or the figures are not this commit's"
  [ -z "$(git -C "$ROOT" status --porcelain -- bundles launcher cli pom.xml cnf bnd.bnd 2>/dev/null)" ] \
    || log "WARNING: uncommitted changes to the server's sources: 'this commit' is the working tree"
}

# prepare_base: builds the parent commit (BENCH_BASE, default HEAD^) in a temporary git worktree with
# `mvn package` (never install) and keeps ./atrium and the two jars in BASE_CACHE/<sha>/, the layout ./atrium
# expects; later runs reuse them. Sets BASE_SHA and BASE_ROOT.
prepare_base() {
  local src stage
  BASE_SHA=$(git -C "$ROOT" rev-parse --verify --quiet "$BASE_REV^{commit}") || die "BENCH_BASE=$BASE_REV is not a commit"
  BASE_ROOT="$BASE_CACHE/$BASE_SHA"
  if [ -f "$BASE_ROOT/bench-complete" ]; then
    log "parent $BASE_REV = ${BASE_SHA:0:10}: using the build cached in $BASE_ROOT"
    return 0
  fi
  src="$WORK_DIR/base-src"
  log "parent $BASE_REV = ${BASE_SHA:0:10}: building in a temporary git worktree (mvn package, about a minute) ..."
  git -C "$ROOT" worktree add --detach --quiet "$src" "$BASE_SHA" >>"$WORK_DIR/base-build.log" 2>&1 \
    || { cat "$WORK_DIR/base-build.log" >&2; die "git worktree add of $BASE_SHA failed"; }
  BASE_WORKTREE="$src"
  run_tracked timeout 1800 mvn -B -q -DskipTests -f "$src/pom.xml" -pl launcher,cli -am package >>"$WORK_DIR/base-build.log" 2>&1 \
    || { tail -n 30 "$WORK_DIR/base-build.log" >&2; die "building the parent ${BASE_SHA:0:10} failed"; }
  stage="$BASE_CACHE/.tmp-$BASE_SHA-$$"
  mkdir -p "$stage/launcher/target" "$stage/cli/target"
  cp "$src/atrium" "$stage/"
  cp "$src/launcher/target/atrium.jar" "$stage/launcher/target/"
  cp "$src/cli/target/atrium-cli.jar" "$stage/cli/target/"
  touch "$stage/bench-complete"
  rm -rf "$BASE_ROOT"
  mv "$stage" "$BASE_ROOT"
  remove_base_worktree
}

remove_base_worktree() {
  [ -n "$BASE_WORKTREE" ] || return 0
  git -C "$ROOT" worktree remove --force "$BASE_WORKTREE" >/dev/null 2>&1 || rm -rf "$BASE_WORKTREE"
  git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
  BASE_WORKTREE=""
}


# free_port: prints a port on 127.0.0.1 that nothing listens on.

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
  # `atrium run` execs java once a CDS archive exists; before that it waits for java (see server_jvm_pid)
  ATRIUM_NO_BUILD=1 ATRIUM_CDS_DIR="$CDS_DIR" "$SERVER_ROOT/atrium" "${args[@]}" >>"$logfile" 2>&1 </dev/null &
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
    # no process is started per poll (basics.sh says why)
    healthz_code "$port"
    code=$HEALTHZ_CODE
    set_now_ms
    if [ "$code" = 200 ]; then
      ELAPSED_MS=$(( NOW_MS - started ))
      SEEN_CODES=""
      for code in $(printf '%s\n' "${!seen[@]}" | sort); do SEEN_CODES+="${code}x${seen[$code]} "; done
      SEEN_CODES="${SEEN_CODES% }"
      return 0
    fi
    seen[$code]=$(( ${seen[$code]:-0} + 1 ))
    is_running "$pid" || { tail -n 30 "$logfile" >&2; die "server on port $port exited before /healthz answered 200"; }
    [ "$NOW_MS" -lt "$deadline" ] || { tail -n 30 "$logfile" >&2; die "no /healthz 200 on port $port within ${START_TIMEOUT_S}s (last: $code)"; }
    nap "$POLL_INTERVAL_S"
  done
}

# server_jvm_pid, rss_mb, peak_rss_mb, process_jiffies
source "$BENCH_DIR/lib/jvm.sh"

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
    for dir in "$WORK_DIR"/*/; do
      [ -d "$dir/pg" ] && stop_orphan_embedded_pg "${dir%/}"
    done
  fi
  for db in "${CREATED_DBS[@]}"; do drop_database "$db"; done
  remove_base_worktree
  if [ -n "$WORK_DIR" ] && [ -d "$WORK_DIR" ]; then
    if [ "$KEEP" = 1 ]; then log "kept $WORK_DIR (BENCH_KEEP=1)"; else rm -rf "$WORK_DIR"; fi
  fi
  exit "$rc"
}

# ----------------------------------------------------------------------------------------- throughput

# create_token PORT DATA_DIR: creates user benchuser and a personal access token; prints the token.
create_token() {
  local out="$WORK_DIR/token.out"
  ATRIUM_NO_BUILD=1 timeout 60 "$SERVER_ROOT/atrium" token create --user benchuser --url "http://127.0.0.1:$1" --data "$2" \
    >"$out" 2>>"$WORK_DIR/token.err" </dev/null || { cat "$WORK_DIR/token.err" >&2; die "atrium token create failed"; }
  tail -n 1 "$out"
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

# run_wrk URL TOKEN OUTFILE SERVER_PID WARMUP: a warm-up run (discarded), then the measured run with --latency into
# OUTFILE, and where the CPU went during it into OUTFILE.cpu. An empty TOKEN sends no Authorization header.
run_wrk() {
  local url="$1" token="$2" out="$3" server_pid="$4" warmup="$5" guard
  local common=(-t"$WRK_THREADS" -c"$WRK_CONNECTIONS")
  [ -n "$token" ] && common+=(-H "Authorization: Bearer $token")
  guard=$(( ${WRK_DURATION%s} + ${warmup%s} + 60 ))
  if [ "${warmup%s}" -gt 0 ]; then
    run_tracked timeout "$guard" wrk "${common[@]}" -d"$warmup" "$url" >"$out.warmup" 2>&1 \
      || die "wrk warm-up failed: $(cat "$out.warmup")"
  fi
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

# verdict VALUE OP TARGET: "met" or "MISSED" ("n/a" without a value).
verdict() {
  awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
    if (v == "" || v == "-") { print "n/a"; exit }
    ok = (op == "<=") ? (v + 0 <= t + 0) : (v + 0 >= t + 0); print ok ? "met" : "MISSED" }'
}

# summarize_log LOG NAME: counts warnings/errors in a server log and shows the distinct messages.
summarize_log() {
  local logfile="$1" name="$2" errors warnings
  [ -f "$logfile" ] || return 0
  errors=$(grep -cE 'SEVERE|ERROR|Exception' "$logfile" || true)
  warnings=$(grep -cE 'WARN' "$logfile" || true)
  printf '  %-34s %4s error/exception lines, %4s warning lines\n' "$name" "$errors" "$warnings"
  # the message line after java.util.logging's two-line format, or the line itself for slf4j-simple
  grep -E -A1 'SEVERE|ERROR|WARN|Exception' "$logfile" | grep -vE '^--$|^[A-Z][a-z]{2} [0-9]+, [0-9]{4} |^[[:space:]]+(at |\.\.\. )' \
    | sed -E 's/^[0-9-]+ [0-9:.]+ //; s/https?:\/\/127\.0\.0\.1:[0-9]+/http:\/\/127.0.0.1:PORT/g; s/_[A-Za-z0-9]{20,}/_ID/g' \
    | cut -c1-160 | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/      /' || true
}

# print_cpu_share LABEL CPU_FILE: one line from a cpu_share_end file.
print_cpu_share() {
  local busy server wrk irq other
  [ -f "$2" ] || return 0
  read -r busy server wrk irq other <"$2"
  printf '    %-34s busy %4s%%: server %4s%%, wrk %4s%%, kernel irq %3s%%, rest %3s%%\n' \
    "$1" "$busy" "$server" "$wrk" "$irq" "$other"
}

# wrk_row LABEL FILE: one throughput line (or "not measured").
wrk_row() {
  if [ ! -f "$2" ]; then printf '  %-44s %12s\n' "$1" "not measured"; return 0; fi
  printf '  %-44s %12s %9s %9s   %s / %s\n' "$1" "$(wrk_field "$2" rps)" "$(wrk_field "$2" p50)" "$(wrk_field "$2" p99)" \
    "$(wrk_field "$2" non2xx | grep . || echo 0)" "$(wrk_field "$2" errors | grep . || echo none)"
}

rps_of() { [ -f "$1" ] && wrk_field "$1" rps || echo ""; }
# median_round PREFIX: copies the round (PREFIX-N.txt, with its .cpu) of median requests/s to PREFIX.txt.
median_round() {
  local f median
  median=$(for f in "$1"-[0-9]*.txt; do echo "$(rps_of "$f") $f"; done | sort -g | awk '{ f[NR] = $2 } END { print f[int((NR + 1) / 2)] }')
  [ -n "$median" ] || return 0
  cp "$median" "$1.txt"
  cp "$median.cpu" "$1.txt.cpu" 2>/dev/null || true
}
quotient() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (a == "" || b == "" || b <= 0) print "-"; else printf f, a / b }'; }
# start_row LABEL KEY [TARGET]: one cold-start line for both commits; the target's verdict is this commit's.
start_row() {
  local this="${R[this $2]:--}" parent="${R[parent $2]:--}"
  printf '  %-50s %9s %9s' "$1" "$this" "$parent"
  if [ -n "${3:-}" ]; then printf '   target <= %d ms: %s\n' "$3" "$(verdict "$this" '<=' "$3")"; else echo "   (no target)"; fi
}

print_report() {
  local body_bytes="$1"
  local this_api parent_api ceiling_api bare_api this_hz
  this_api=$(rps_of "$WORK_DIR/this-wrk-api.txt"); parent_api=$(rps_of "$WORK_DIR/parent-wrk-api.txt")
  ceiling_api=$(rps_of "$WORK_DIR/this-wrk-ceiling.txt"); bare_api=$(rps_of "$WORK_DIR/wrk-bare.txt")
  this_hz=$(rps_of "$WORK_DIR/this-wrk-healthz.txt")
  local x_parent pct_ceiling pct_bare
  x_parent=$(quotient "$this_api" "$parent_api" "%.2f")
  pct_ceiling=${R[this pct_ceiling]:-$(quotient "$this_api" "$ceiling_api" "%.3f" | awk '{ print ($1 == "-") ? "-" : sprintf("%.1f", 100 * $1) }')}
  pct_bare=$(quotient "$this_api" "$bare_api" "%.3f" | awk '{ print ($1 == "-") ? "-" : sprintf("%.1f", 100 * $1) }')

  echo
  echo "==================================== Atrium benchmark ===================================="
  echo "$(date -u +%FT%TZ), $(nproc) CPUs shared by wrk, the servers and whatever else runs on this machine"
  echo "load average (1/5/15 min) before the benchmark started: $LOAD_AT_START; at the end: $(load_average)"
  echo "this commit: $(git -C "$ROOT" log -1 --format='%h %s' HEAD | cut -c1-100)"
  echo "             (launcher/target/atrium.jar of $(date -u -r "$SERVER_JAR" +%FT%TZ))"
  echo "parent:      $(git -C "$ROOT" log -1 --format='%h %s' "$BASE_SHA" | cut -c1-100)"
  echo "             (BENCH_BASE=$BASE_REV, built in a temporary git worktree, kept in $BASE_ROOT)"
  git -C "$ROOT" diff --quiet "$BASE_SHA" HEAD -- bundles launcher cli pom.xml cnf bnd.bnd atrium 2>/dev/null \
    && echo "  NOTE: the two commits have the same server sources; set BENCH_BASE to the commit to compare with"
  if [ -n "${ATRIUM_JAVA_OPTS+set}" ]; then
    echo "JVM options: ATRIUM_JAVA_OPTS=$ATRIUM_JAVA_OPTS (both commits)"
  else
    echo "JVM options: each commit's own 'atrium run' defaults"
  fi
  echo
  echo "Cold start: launch of 'atrium run' to the first GET /healthz 200 (polled every ~20 ms), embedded PostgreSQL"
  printf '  %-50s %9s %9s\n' "" "this, ms" "parent, ms"
  start_row "fresh data dir, no CDS archive (writes it at stop)" prime
  start_row "fresh data dir, with that archive" fresh "$TARGET_START_MS"
  start_row "same data dir again, with the archive" again "$TARGET_START_MS"
  if [ -n "${R[this external]:-}" ]; then
    start_row "external PostgreSQL, fresh database" external
  fi
  printf '  %-50s %9s %9s   target <= %sx: %s\n' "fresh start with the archive, this / parent" \
    "$(quotient "${R[this fresh]:-}" "${R[parent fresh]:-}" "%.2f")x" "" "$TARGET_START_X" \
    "$(verdict "$(quotient "${R[this fresh]:-}" "${R[parent fresh]:-}" "%.2f")" '<=' "$TARGET_START_X")"
  start_row "stop of the second server (SIGTERM to exit)" stop
  echo "  The first start of a jar has no class-data archive yet: 'atrium run' writes it when that server stops"
  echo "  (hence the first row, whose stop also writes it), and every later start maps it."
  echo "  AppCDS archive: this commit: ${R[this cds]:-?}; parent: ${R[parent cds]:-?}"
  echo "  /healthz answers before the first 200 (code x count; 000 = no connection yet):"
  echo "    this: ${R[this seen]:-none}; parent: ${R[parent seen]:-none}"
  echo
  echo "Throughput: wrk -t$WRK_THREADS -c$WRK_CONNECTIONS -d$WRK_DURATION --latency on the ${R[this db]:-?} server," \
    "after a warm-up of $WRK_WARMUP (API)"
  echo "  or $WRK_WARMUP_EXTRA (the others); the Aries resource and bare Jetty answer the same $body_bytes body bytes."
  echo "  The API and the Aries resource: the median of $WRK_ROUNDS rounds taken in turns (API, resource, API, ...)"
  printf '  %-44s %12s %9s %9s   %s\n' "" "requests/s" "p50" "p99" "non-2xx / socket errors"
  wrk_row "GET /api/spaces/<id> (Bearer PAT), this" "$WORK_DIR/this-wrk-api.txt"
  wrk_row "GET /api/spaces/<id> (Bearer PAT), parent" "$WORK_DIR/parent-wrk-api.txt"
  wrk_row "one-line Aries JAX-RS resource, same runtime" "$WORK_DIR/this-wrk-ceiling.txt"
  wrk_row "bare Jetty 12.0.32 handler" "$WORK_DIR/wrk-bare.txt"
  wrk_row "GET /healthz, this" "$WORK_DIR/this-wrk-healthz.txt"
  wrk_row "GET /healthz, parent" "$WORK_DIR/parent-wrk-healthz.txt"
  echo
  printf '  %-44s %12s   target >= %sx: %s\n' "API this / parent" "${x_parent}x" "$TARGET_PARENT_X" \
    "$(verdict "$x_parent" '>=' "$TARGET_PARENT_X")"
  printf '  %-44s %11s%%   target >= %d%%: %s\n' "API this / one-line Aries resource" "$pct_ceiling" "$TARGET_CEILING_PCT" \
    "$(verdict "$pct_ceiling" '>=' "$TARGET_CEILING_PCT")"
  echo "    (median of the rounds' ratios; each round: ${R[this ceiling_rounds]:-not measured})"
  printf '  %-44s %12s   target >= %d: %s\n' "/healthz requests/s, this" "${this_hz:--}" "$TARGET_HEALTHZ_RPS" \
    "$(verdict "$this_hz" '>=' "$TARGET_HEALTHZ_RPS")"
  printf '  %-44s %11s%%   (no target: the 60%% one was withdrawn, issue 15)\n' "API this / bare Jetty" "$pct_bare"
  echo "  CPU during each measured run, in % of one CPU ($(( $(nproc) * 100 ))% = all $(nproc)); rest = PostgreSQL, other processes:"
  print_cpu_share "API, this" "$WORK_DIR/this-wrk-api.txt.cpu"
  print_cpu_share "API, parent" "$WORK_DIR/parent-wrk-api.txt.cpu"
  print_cpu_share "Aries resource" "$WORK_DIR/this-wrk-ceiling.txt.cpu"
  print_cpu_share "bare Jetty" "$WORK_DIR/wrk-bare.txt.cpu"
  print_cpu_share "/healthz, this" "$WORK_DIR/this-wrk-healthz.txt.cpu"
  print_cpu_share "/healthz, parent" "$WORK_DIR/parent-wrk-healthz.txt.cpu"
  echo
  echo "Memory: RSS of the throughput server's JVM (ps -o rss; ${R[this db]:-?}, so PostgreSQL is not in it)"
  printf '  %-50s %9s %9s\n' "" "this, MB" "parent, MB"
  printf '  %-50s %9s %9s   target <= %d MB: %s\n' "idle, ${IDLE_SETTLE_S} s after the first /healthz 200" \
    "${R[this rss_idle]:--}" "${R[parent rss_idle]:--}" "$TARGET_IDLE_RSS_MB" "$(verdict "${R[this rss_idle]:-}" '<=' "$TARGET_IDLE_RSS_MB")"
  printf '  %-50s %9s %9s   (no target)\n' "after the API load ($WRK_WARMUP + $WRK_DURATION)" \
    "${R[this rss_api]:--}" "${R[parent rss_api]:--}"
  printf '  %-50s %9s %9s   (no target)\n' "after every load (+ /healthz, Aries resource)" \
    "${R[this rss_end]:--}" "${R[parent rss_end]:--}"
  echo "  (RSS after five clones of the big repository: bench/git.sh)"
  echo
  echo "Server logs (stdout+stderr of each process):"
  local c f
  for c in this parent; do
    for f in "$WORK_DIR/$c"-*.log; do
      [ -f "$f" ] && summarize_log "$f" "$(basename "$f" .log)"
    done
  done
  summarize_log "$WORK_DIR/bare-jetty.log" "bare Jetty"
  echo "=========================================================================================="
}

# ------------------------------------------------------------------------------------------------ main

# bench_commit NAME ROOT: every figure of one commit (NAME this|parent), its ./atrium and jars under ROOT.
# Results go to R["NAME <figure>"], wrk output to $WORK_DIR/NAME-wrk-*.txt, logs to $WORK_DIR/NAME-*.log.
bench_commit() {
  local name="$1" port db tp_port tp_data tp_log token space_id url body pid archive
  SERVER_ROOT="$2"
  CDS_DIR="$WORK_DIR/cds-$name"
  port=$(free_port)

  # 1. Embedded PostgreSQL: a first start without a CDS archive (it writes one when it stops), then a fresh data
  #    dir with that archive, then the same data dir again.
  log "[$name] cold start, fresh data dir, no CDS archive yet ..."
  cold_start "$port" "$WORK_DIR/$name-prime" "$WORK_DIR/$name-prime.log"
  R[$name prime]=$ELAPSED_MS
  stop_process "$LAST_PID"
  log "  ${R[$name prime]} ms to /healthz 200; stopped (archive written) in $ELAPSED_MS ms"
  archive=$(ls "$CDS_DIR"/*.jsa 2>/dev/null | head -n 1 || true)
  if [ -n "$archive" ]; then
    R[$name cds]="written by the first start ($(( $(stat -c %s "$archive") / 1048576 )) MB)"
  else
    R[$name cds]="none written (its 'atrium run' writes none, or ATRIUM_CDS=off)"
  fi
  log "[$name] cold start, fresh data dir, with the archive ..."
  cold_start "$port" "$WORK_DIR/$name-embedded" "$WORK_DIR/$name-embedded.log"
  R[$name fresh]=$ELAPSED_MS
  R[$name seen]=$SEEN_CODES
  stop_process "$LAST_PID"
  log "  ${R[$name fresh]} ms (stopped in $ELAPSED_MS ms)"
  log "[$name] cold start, same data dir again ..."
  cold_start "$port" "$WORK_DIR/$name-embedded" "$WORK_DIR/$name-embedded.log"
  R[$name again]=$ELAPSED_MS
  stop_process "$LAST_PID"
  R[$name stop]=$ELAPSED_MS
  log "  ${R[$name again]} ms (stopped in $ELAPSED_MS ms)"

  # 2. The throughput server: external PostgreSQL on a fresh database when there is one, else embedded.
  tp_port=$(free_port)
  tp_data="$WORK_DIR/$name-throughput"
  tp_log="$WORK_DIR/$name-throughput.log"
  if external_pg_available; then
    db="bench_${name}_$(date +%s)_$$"
    create_database "$db"
    log "[$name] cold start, external PostgreSQL, fresh database $db ..."
    cold_start "$tp_port" "$tp_data" "$tp_log" "$(jdbc_url "$db")"
    R[$name external]=$ELAPSED_MS
    R[$name db]="external PostgreSQL"
    log "  $ELAPSED_MS ms"
  else
    log "[$name] no PostgreSQL at $PG_HOST:$PG_PORT: the throughput server embeds one"
    cold_start "$tp_port" "$tp_data" "$tp_log"
    R[$name db]="embedded PostgreSQL"
  fi
  pid=$LAST_PID
  token=$(create_token "$tp_port" "$tp_data")
  space_id=$(space_id_of "$tp_port" "$token")
  [ -n "$space_id" ] || die "GET /api/spaces/me gave no space id"
  url="http://127.0.0.1:$tp_port/api/spaces/$space_id"
  body="$WORK_DIR/$name-body.json"
  fetch_body "$url" "$token" "$body"
  log "[$name] benchmarked request: GET /api/spaces/$space_id ($(wc -c <"$body") bytes)"
  sleep "$IDLE_SETTLE_S"
  R[$name rss_idle]=$(rss_mb "$pid")

  # 3. The API, and for this commit the one-line Aries resource (deployed into the running server, same bytes), in
  #    turns after one warm-up each: measured one after the other, the first would still share the CPUs with C2 for
  #    its first minute and the second would not (issue 34 read 23 % that way, and 52 % in turns).
  local ceiling="" i warm ratios=()
  if [ "$name" = this ]; then
    deploy_ceiling "$tp_port" "$tp_data" "$body" "$pid" "$tp_log"
    ceiling="http://127.0.0.1:$tp_port/bench/ceiling"
  fi
  for i in $(seq 1 "$WRK_ROUNDS"); do
    warm=0s; [ "$i" = 1 ] && warm=$WRK_WARMUP
    log "[$name] round $i/$WRK_ROUNDS: wrk GET /api/spaces/<id> ($warm warm-up + $WRK_DURATION) ..."
    run_wrk "$url" "$token" "$WORK_DIR/$name-wrk-api-$i.txt" "$pid" "$warm"
    [ "$i" = 1 ] && R[$name rss_api]=$(rss_mb "$pid")
    if [ -n "$ceiling" ]; then
      warm=0s; [ "$i" = 1 ] && warm=$WRK_WARMUP_EXTRA
      log "[$name] round $i/$WRK_ROUNDS: wrk GET /bench/ceiling ($warm warm-up + $WRK_DURATION) ..."
      run_wrk "$ceiling" "" "$WORK_DIR/$name-wrk-ceiling-$i.txt" "$pid" "$warm"
      ratios+=("$(quotient "$(rps_of "$WORK_DIR/$name-wrk-api-$i.txt")" \
        "$(rps_of "$WORK_DIR/$name-wrk-ceiling-$i.txt")" "%.4f")")
    fi
  done
  median_round "$WORK_DIR/$name-wrk-api"
  if [ -n "$ceiling" ]; then
    median_round "$WORK_DIR/$name-wrk-ceiling"
    R[$name ceiling_rounds]="${ratios[*]}"
    R[$name pct_ceiling]=$(printf '%s\n' "${ratios[@]}" | grep -v '^-$' | sort -g \
      | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", 100 * v[int((NR + 1) / 2)]; else print "-" }')
  fi
  log "[$name] wrk GET /healthz ($WRK_WARMUP_EXTRA warm-up + $WRK_DURATION) ..."
  run_wrk "http://127.0.0.1:$tp_port/healthz" "" "$WORK_DIR/$name-wrk-healthz.txt" "$pid" "$WRK_WARMUP_EXTRA"
  R[$name rss_end]=$(rss_mb "$pid")
  stop_process "$pid"
}

# deploy_ceiling PORT DATA_DIR BODY PID LOG: writes the body where the bundle reads it, drops the bundle into
# <data>/deploy (fileinstall), waits until /bench/ceiling answers those bytes and /healthz is 200 again.
deploy_ceiling() {
  local port="$1" data="$2" body="$3" pid="$4" logfile="$5" deadline headers="$WORK_DIR/ceiling.headers"
  cp "$body" "$data/bench-ceiling.json"
  cp "$CEILING_JAR" "$data/deploy/"
  deadline=$(( $(now_ms) + 60000 ))
  until curl -s --max-time 5 -D "$headers" "http://127.0.0.1:$port/bench/ceiling" 2>/dev/null | cmp -s - "$body" \
      && [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/healthz")" = 200 ]; do
    is_running "$pid" || die "the server exited after the Aries resource was deployed"
    [ "$(now_ms)" -lt "$deadline" ] || { tail -n 20 "$logfile" >&2; die "/bench/ceiling did not answer the body within 60 s"; }
    sleep 0.2
  done
  grep -qi '^content-type: application/json' "$headers" || die "/bench/ceiling is not application/json"
  log "the one-line Aries resource answers GET /bench/ceiling ($(wc -c <"$body") bytes)"
}

main() {
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
  WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench.XXXXXX")"
  LOAD_AT_START="$(load_average)"
  check_prerequisites
  warn_if_stale
  build_bare_jetty
  build_ceiling
  prepare_base

  local body bare_port
  bench_commit this "$ROOT"
  bench_commit parent "$BASE_ROOT"

  # bare Jetty answering this commit's very body bytes
  body="$WORK_DIR/this-body.json"
  bare_port=$(free_port)
  start_bare_jetty "$bare_port" "$body" "$WORK_DIR/bare-jetty.log"
  curl -s --max-time 5 "http://127.0.0.1:$bare_port/api/spaces/x" | cmp -s - "$body" \
    || die "bare Jetty does not answer the same body bytes"
  log "wrk against bare Jetty ($WRK_WARMUP_EXTRA warm-up + $WRK_DURATION) ..."
  run_wrk "http://127.0.0.1:$bare_port/api/spaces/x" "" "$WORK_DIR/wrk-bare.txt" "$LAST_PID" "$WRK_WARMUP_EXTRA"
  stop_process "$LAST_PID"

  print_report "$(wc -c <"$body")"

  # what the metrics cost the same request: this build with and without them, side by side (bench/metrics.sh)
  if [ "${BENCH_METRICS:-1}" != 0 ]; then
    "$BENCH_DIR/metrics.sh"
  fi
  # how long a CLI command takes against a server (bench/cli.sh)
  if [ "${BENCH_CLI:-1}" != 0 ]; then
    "$BENCH_DIR/cli.sh"
  fi
}

main "$@"
