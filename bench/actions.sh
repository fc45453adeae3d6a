#!/usr/bin/env bash
# bench/actions.sh: Actions job start latency as a user sees it, and a burst of jobs under the default caps.
#  1. Start latency: 20 pushes of a repository whose workflow has one job of one step (`echo first-line`), each timed
#     from just before `git push` to the step's first line arriving on the run's event stream (SSE). The floor is
#     `podman run --rm` of the same busybox image running the same echo, with the same podman settings (runc, no
#     network), timed to its first line of output: what a container start costs on this machine alone.
#  2. Burst: 20 one-step runs dispatched at once by one user; the time until all ended, with the server's default
#     caps (8 jobs per server, 4 per Principal), and each job's wait in the queue.
# Target (issue 36): start latency p50 <= floor p50 + 1 s. Informational only: it never gates CI.
#
#   bench/actions.sh                     # needs launcher/target/atrium.jar + cli jar, podman, ~/.cache/atrium/images/busybox.tar
#   BENCH_ACTIONS_RUNS=5 bench/actions.sh
#   BENCH_KEEP=1 bench/actions.sh        # keep the temp dir (server log)
#
# Everything binds to 127.0.0.1; every process started is stopped and the database dropped on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

RUNS="${BENCH_ACTIONS_RUNS:-20}"
BURST="${BENCH_ACTIONS_BURST:-20}"
USER_NAME=benchactions
IMAGE_TAR="${ATRIUM_RUNNER_IMAGES:-$HOME/.cache/atrium/images}/busybox.tar"
TARGET_OVER_FLOOR_MS=1000

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench
export GIT_COMMITTER_EMAIL=bench@example.com

command -v podman >/dev/null || die "podman is missing: ./atrium test installs it (apt-get install podman runc)"
[ -f "$IMAGE_TAR" ] || die "$IMAGE_TAR is missing: run ./atrium images"
WORK_DIR=$(mktemp -d /tmp/bench-actions.XXXXXX)

p() { sort -g | awk -v q="$1" '{a[NR]=$1} END { if (NR == 0) { print 0; exit } i = int(q / 100 * NR); if (i < q / 100 * NR) i++; if (i < 1) i = 1; print a[i] }'; }

# ------------------------------------------------------------------------------------------------ the floor

PODMAN_DIR="$WORK_DIR/podman"
mkdir -p "$PODMAN_DIR"
cat >"$PODMAN_DIR/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
RUNROOT=$(mktemp -d /run/bench-actions.XXXXXX)
fpodman() {
  CONTAINERS_CONF="$PODMAN_DIR/containers.conf" podman --root "$PODMAN_DIR/storage" --runroot "$RUNROOT" "$@"
}
floor_cleanup() { fpodman rm -a -f >/dev/null 2>&1 || true; rm -rf "$RUNROOT"; }
trap 'floor_cleanup; cleanup' EXIT INT TERM
fpodman import -q "$IMAGE_TAR" localhost/bench-busybox:1 >/dev/null
fpodman run --rm --network none localhost/bench-busybox:1 true # warm-up
: >"$WORK_DIR/t-floor"
for _ in $(seq 1 "$RUNS"); do
  t0=$(now_ms)
  fpodman run --rm --init --network none --user 1000:1000 localhost/bench-busybox:1 sh -c 'echo first-line; sleep 0.2' \
    | { read -r _; echo $(( $(now_ms) - t0 )) >>"$WORK_DIR/t-floor"; cat >/dev/null; }
done
floor_cleanup
log "floor: podman run to first line, p50 $(p 50 <"$WORK_DIR/t-floor") ms"

# ---------------------------------------------------------------------------------------------- Atrium

start_atrium
log "Atrium healthy in $ATRIUM_STARTED_MS ms on port $ATRIUM_PORT"
TOKEN=$(atrium_token "$USER_NAME")
API="http://127.0.0.1:$ATRIUM_PORT"
H=(-H "Authorization: Bearer $TOKEN")
SPACE=$(curl -sf "${H[@]}" "$API/api/spaces/me" | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
REPO=$(curl -sf "${H[@]}" -H 'Content-Type: application/json' --data '{"name":"bench-actions"}' \
  "$API/api/spaces/$SPACE/repos" | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
[ -n "$REPO" ] || die "could not create the repository"
REMOTE="$API/git/$USER_NAME/bench-actions.git"
AUTH="http.extraHeader=Authorization: Basic $(printf '%s:%s' "$USER_NAME" "$TOKEN" | base64 -w0)"

WORK="$WORK_DIR/work"
git init -q -b main "$WORK"
mkdir -p "$WORK/.github/workflows"
cat >"$WORK/.github/workflows/ci.yml" <<'YAML'
on:
  push:
  workflow_dispatch:
jobs:
  one:
    runs-on: busybox
    steps:
      - run: echo first-line
YAML
git -C "$WORK" add -A
git -C "$WORK" commit -q -m "workflow"

runs_total() { curl -s "${H[@]}" "$API/api/repos/$REPO/actions/runs?limit=1" | grep -o '"total":[0-9]*' | cut -d: -f2; }
newest_run() { curl -s "${H[@]}" "$API/api/repos/$REPO/actions/runs?limit=1" | grep -o '"id":"run_[^"]*"' | head -n 1 | cut -d'"' -f4; }

# first_line T0 RUN: waits on the run's event stream for the step's first line; prints ms since T0
first_line() {
  curl -sN --max-time 60 "${H[@]}" -H 'Accept: text/event-stream' "$API/api/repos/$REPO/actions/runs/$2/ws" \
    | grep -m 1 -q 'first-line'
  echo $(( $(now_ms) - $1 ))
}

: >"$WORK_DIR/t-start"
for i in $(seq 0 "$RUNS"); do
  before=$(runs_total)
  git -C "$WORK" commit -q --allow-empty -m "run $i"
  t0=$(now_ms)
  git -C "$WORK" -c "$AUTH" push -q "$REMOTE" main 2>>"$WORK_DIR/push.err"
  until [ "$(runs_total)" -gt "$before" ]; do
    [ $(( $(now_ms) - t0 )) -lt 30000 ] || die "no run within 30 s of a push"
    sleep 0.01
  done
  t=$(first_line "$t0" "$(newest_run)")
  if [ "$i" -gt 0 ]; then echo "$t" >>"$WORK_DIR/t-start"; else log "first run (image import, podman service start): $t ms"; fi
done

# ---------------------------------------------------------------------------------------------- the burst

before=$(runs_total)
t0=$(now_ms)
dispatched=()
for _ in $(seq 1 "$BURST"); do
  curl -s -o /dev/null "${H[@]}" -H 'Content-Type: application/json' --data '{"workflow":"ci.yml"}' \
    "$API/api/repos/$REPO/actions/runs" &
  dispatched+=($!)
done
wait "${dispatched[@]}" # not a bare wait: the server is a child of this shell too
until [ "$(curl -s "${H[@]}" "$API/api/repos/$REPO/actions/runs?status=completed&event=workflow_dispatch&limit=1" \
  | grep -o '"total":[0-9]*' | cut -d: -f2)" -ge "$BURST" ]; do
  [ $(( $(now_ms) - t0 )) -lt 300000 ] || die "the burst did not end within 300 s"
  sleep 0.05
done
burst_ms=$(( $(now_ms) - t0 ))
curl -s "${H[@]}" "$API/api/repos/$REPO/actions/runs?event=workflow_dispatch&limit=100" >"$WORK_DIR/burst.json"
python3 - "$WORK_DIR/burst.json" >"$WORK_DIR/t-wait" <<'PY'
import json, sys, datetime
runs = json.load(open(sys.argv[1]))["workflow_runs"]
def t(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
for r in runs:
    print(int((t(r["run_started_at"]) - t(r["created_at"])).total_seconds() * 1000))
PY
failed=$(grep -o '"conclusion":"[a-z_]*"' "$WORK_DIR/burst.json" | grep -vc success || true)

# ---------------------------------------------------------------------------------------------- report

echo
echo "==== bench/actions.sh: $RUNS pushes, burst of $BURST, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) ===="
printf '  %-58s p50 %6d ms   p99 %6d ms\n' "floor: podman run --rm (busybox, echo) to first line" \
  "$(p 50 <"$WORK_DIR/t-floor")" "$(p 99 <"$WORK_DIR/t-floor")"
printf '  %-58s p50 %6d ms   p99 %6d ms\n' "Atrium: git push to the step's first line on the stream" \
  "$(p 50 <"$WORK_DIR/t-start")" "$(p 99 <"$WORK_DIR/t-start")"
over=$(( $(p 50 <"$WORK_DIR/t-start") - $(p 50 <"$WORK_DIR/t-floor") ))
echo "  p50 over the floor: $over ms (target <= $TARGET_OVER_FLOOR_MS ms: $([ "$over" -le "$TARGET_OVER_FLOOR_MS" ] && echo met || echo 'NOT met'))"
echo "  burst: $BURST one-step runs dispatched at once ended in $burst_ms ms (caps: 8 per server, 4 per Principal);" \
  "queue wait p50 $(p 50 <"$WORK_DIR/t-wait") ms, p99 $(p 99 <"$WORK_DIR/t-wait") ms; not successful: $failed"
