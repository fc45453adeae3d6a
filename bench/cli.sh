#!/usr/bin/env bash
# bench/cli.sh: how long a CLI command takes, as a user at a terminal sees it: `./atrium --help`, and commands that
# talk to a running server (`token create`, `features`), each run N times after one run that writes the CLI's
# class-data archive. Prints the median and the worst of each. Target (issue 41): a command under 0.5 s.
# Informational only: it never gates CI.
#
#   bench/cli.sh                  # needs launcher/target/atrium.jar + cli jar; PostgreSQL if the machine has one
#   BENCH_CLI_RUNS=20 bench/cli.sh
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

RUNS="${BENCH_CLI_RUNS:-10}"
TARGET_MS=500
WORK_DIR=$(mktemp -d /tmp/bench-cli.XXXXXX)

start_atrium
log "server healthy on port $ATRIUM_PORT in $ATRIUM_STARTED_MS ms"
url="http://127.0.0.1:$ATRIUM_PORT"

# time_ms CMD...: the wall-clock milliseconds of one run of ./atrium CMD (its output dropped; a failure stops the bench)
time_ms() {
  local started
  started=$(now_ms)
  ATRIUM_NO_BUILD=1 "$ROOT/atrium" "$@" >/dev/null 2>>"$WORK_DIR/cli.err" </dev/null || die "./atrium $* failed: $(tail -n 3 "$WORK_DIR/cli.err")"
  echo $(( $(now_ms) - started ))
}

# the first command that talks to a server writes the CLI's class-data archive (once per jar and JVM)
time_ms features --url "$url" --data "$ATRIUM_DATA" >/dev/null

report() {
  local name="$1"; shift
  local all=() i
  for i in $(seq 1 "$RUNS"); do
    all+=("$("$@" "$i")")
  done
  local med worst
  med=$(printf '%s ' "${all[@]}" | median)
  worst=$(printf '%s\n' "${all[@]}" | sort -n | tail -n 1)
  printf '%-16s median %5s ms   worst %5s ms   (%s runs; target < %s ms)\n' "$name" "$med" "$worst" "$RUNS" "$TARGET_MS"
}

help_run() { time_ms --help; }
token_run() { time_ms token create --user "benchcli$1" --url "$url" --data "$ATRIUM_DATA"; }
features_run() { time_ms features --url "$url" --data "$ATRIUM_DATA"; }

report "--help" help_run
report "token create" token_run
report "features" features_run
