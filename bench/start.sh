#!/usr/bin/env bash
# bench/start.sh: fresh starts of the server, in interleaved rounds, each variant's median time to the first
# GET /healthz 200, and where the JVM's CPU went by that moment (per thread, from /proc). A start on a shared two-core
# machine varies by a second or more from one minute to the next, so variants are compared in turns, never in blocks.
#
#   bench/start.sh [ROUNDS=5] [VARIANT ...]
#
# A variant is NAME=ROOT[:ENV=VALUE,...]: a built checkout (its ./atrium and launcher/target/atrium.jar) and the
# environment of its starts. Without variants it compares this checkout started from an expanded copy of its jar
# (the default) with the same jar started from the jar itself:
#
#   bench/start.sh 5 base=/path/to/other/checkout this=.
#   bench/start.sh 5 jar=.:ATRIUM_EXPANDED=off expanded=.
#   bench/start.sh 3 c1=.:ATRIUM_JAVA_EXTRA_OPTS=-XX:TieredStopAtLevel=1 full=.
#   bench/start.sh 5 platform=.:BENCH_FEATURES_OFF=all all=.
#
# BENCH_FEATURES_OFF in a variant's environment is the bench's own: `all` (every feature of the variant's features/
# directory) or names joined with `+`, written as disabled into each start's features.json before the start, so the
# features' bundles never start (what the platform alone costs).
#
# Every start gets a fresh data directory on the embedded database; each variant's first start (not counted) makes
# its class-data archive (in a directory of its own under the temp dir) and its expanded jar. Informational only.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/basics.sh
. "$BENCH_DIR/lib/basics.sh"
# shellcheck source=lib/jvm.sh
. "$BENCH_DIR/lib/jvm.sh"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
ROUNDS="${1:-5}"
shift || true
VARIANTS=("$@")
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=("jar=$ROOT:ATRIUM_EXPANDED=off" "expanded=$ROOT")
START_TIMEOUT_S="${BENCH_START_TIMEOUT:-180}"

WORK_DIR="$(mktemp -d /tmp/atrium-start.XXXXXX)"
SERVER_PID=""
cleanup() {
  [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK_DIR"
}
trap cleanup EXIT INT TERM

# thread_cpu PID: "milliseconds name" per thread group (pool threads' numbers dropped; the kernel truncates names to 15
# characters, so C2's is "C2 CompilerThre"), the process total last
thread_cpu() {
  local tck t stat fields
  tck=$(getconf CLK_TCK)
  for t in /proc/"$1"/task/*; do
    stat=$(cat "$t/stat" 2>/dev/null) || continue
    read -r -a fields <<<"${stat##*) }"
    echo "$(( (fields[11] + fields[12]) * 1000 / tck )) $(cat "$t/comm" 2>/dev/null)"
  done | awk '{ ms = $1; $1 = ""; sub(/^ /, ""); sub(/-?[0-9]+$/, ""); sub(/^qtp[0-9]+$/, "Jetty (qtp)");
      if ($0 == "java") $0 = "main"; cpu[$0] += ms; total += ms }
    END { for (k in cpu) printf "%d %s\n", cpu[k], k; printf "%d TOTAL\n", total }'
}

# start NAME ROOT ENV...: one fresh start; appends "ms" to $WORK_DIR/NAME.times and the threads' CPU to NAME.cpu
start() {
  local name="$1" root="$2" data port started code=000 e off="" envs=()
  shift 2
  for e in "$@"; do
    case "$e" in
      BENCH_FEATURES_OFF=*) off="${e#*=}" ;;
      *) envs+=("$e") ;;
    esac
  done
  data="$WORK_DIR/data-$name"; rm -rf "$data"; mkdir -p "$data"
  [ -z "$off" ] || features_off "$root" "$off" >"$data/features.json"
  port=$(free_port)
  set_now_ms; started=$NOW_MS
  env ATRIUM_NO_BUILD=1 ATRIUM_CDS_DIR="$WORK_DIR/cds-$name" "${envs[@]}" \
    "$root/atrium" run --port "$port" --data "$data" >"$WORK_DIR/$name.log" 2>&1 &
  SERVER_PID=$!
  while :; do
    healthz_code "$port"
    [ "$HEALTHZ_CODE" = 200 ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "$name: the server exited; its log: $(tail -5 "$WORK_DIR/$name.log")"
    set_now_ms
    [ $(( NOW_MS - started )) -lt $(( START_TIMEOUT_S * 1000 )) ] || die "$name: no /healthz 200 in ${START_TIMEOUT_S} s"
    nap 0.02
  done
  set_now_ms
  echo $(( NOW_MS - started )) >>"$WORK_DIR/$name.times"
  thread_cpu "$(server_jvm_pid "$SERVER_PID")" >>"$WORK_DIR/$name.cpu"
  kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# features_off ROOT LIST: a features.json that disables LIST (`all`, or names joined with `+`)
features_off() {
  local names
  if [ "$2" = all ]; then
    names=$(find "$1/features" -maxdepth 1 -name '*.json' -printf '%f\n' | sed 's/\.json$//' | sort)
  else
    names=$(tr '+' '\n' <<<"$2")
  fi
  printf '{"disabled": [%s]}\n' "$(sed 's/.*/"&"/' <<<"$names" | paste -sd, -)"
}

# run VARIANT: start with the variant's root and environment
run_variant() {
  local spec="$1" name rest root envs=()
  name="${spec%%=*}"; rest="${spec#*=}"
  root="${rest%%:*}"
  if [ "$rest" != "$root" ]; then IFS=',' read -r -a envs <<<"${rest#*:}"; fi
  root="$(cd "$root" && pwd)"
  [ -f "$root/launcher/target/atrium.jar" ] || die "$name: build $root first (mvn -B -q -DskipTests -pl launcher,cli -am package)"
  start "$name" "$root" "${envs[@]}"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

log "$ROUNDS rounds of fresh starts on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)): ${VARIANTS[*]}"
for v in "${VARIANTS[@]}"; do
  log "${v%%=*}: first start (makes the archive, not counted) ..."
  run_variant "$v"
  rm -f "$WORK_DIR/${v%%=*}.times" "$WORK_DIR/${v%%=*}.cpu"
done
for r in $(seq 1 "$ROUNDS"); do
  for v in "${VARIANTS[@]}"; do
    run_variant "$v"
    log "round $r, ${v%%=*}: $(tail -1 "$WORK_DIR/${v%%=*}.times") ms"
  done
done

echo "Fresh starts to the first /healthz 200 ($ROUNDS interleaved rounds, $(date -u +%FT%TZ), load average at the end $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  %-12s %8s %8s %8s   %s\n' variant median min max "JVM CPU at that moment, median per thread (ms)"
for v in "${VARIANTS[@]}"; do
  name="${v%%=*}"
  times="$WORK_DIR/$name.times"
  cpu=$(awk '{ n = $1; $1 = ""; sub(/^ /, ""); print $0 "\t" n }' "$WORK_DIR/$name.cpu" | sort -t$'\t' -k1,1 \
    | awk -F'\t' '{ v[$1] = v[$1] " " $2 } END { for (k in v) print k "\t" v[k] }' \
    | while IFS=$'\t' read -r thread values; do
        echo "$(tr ' ' '\n' <<<"$values" | grep -v '^$' | median) $thread"
      done | sort -rn | awk '$1 >= 200 { printf "%s%s %d", sep, $2 ($3 ? " " $3 : "") ($4 ? " " $4 : ""), $1; sep = ", " }')
  printf '  %-12s %8s %8s %8s   %s\n' "$name" "$(median <"$times")" "$(sort -n "$times" | head -1)" \
    "$(sort -n "$times" | tail -1)" "$cpu"
done
