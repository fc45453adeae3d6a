#!/usr/bin/env bash
# Starts the server N times while K busy loops load the machine and prints how each start ended: healthy (seconds to
# /healthz 200), exited (status and the reason it logged), or never ready (the worst case for a supervisor: up, 503 for
# ever). Issue 32, finding 15. Uses the embedded database unless ATRIUM_DB_URL names one.
#   bench/start-under-load.sh [STARTS=5] [HOGS=8] [LIMIT_SECONDS=180]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
starts="${1:-5}"; hogs="${2:-8}"; limit="${3:-180}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
work="$(mktemp -d /tmp/atrium-start-bench.XXXXXX)"
hog_pids=()
cleanup() {
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pkill -f "atrium.data=$work/" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
[ -f "$root/launcher/target/atrium.jar" ] || (cd "$root" && mvn -B -q -DskipTests -pl launcher,cli -am package)
for _ in $(seq 1 "$hogs"); do (while :; do :; done) & hog_pids+=($!); done
echo "start-under-load: $starts starts, $hogs busy loops on $(nproc) cores, ${limit} s limit each"
healthy=0; exited=0; stuck=0
for i in $(seq 1 "$starts"); do
  data="$work/run$i"; mkdir -p "$data"
  started=$(date +%s.%N)
  ATRIUM_NO_BUILD=1 "$root/atrium" run --port "$port" --data "$data" >"$data.log" 2>&1 &
  pid=$!
  outcome=""
  while [ -z "$outcome" ]; do
    now=$(date +%s.%N)
    if curl -sf -o /dev/null "http://127.0.0.1:$port/healthz"; then
      outcome="healthy after $(printf '%.1f' "$(echo "$now - $started" | bc)") s"; healthy=$((healthy + 1))
    elif ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" && status=0 || status=$?
      outcome="exited with $status: $(grep -m1 'cannot start' "$data.log" | cut -c1-200)"; exited=$((exited + 1))
    elif [ "$(echo "$now - $started > $limit" | bc)" = 1 ]; then
      outcome="never ready in ${limit} s: $(curl -s "http://127.0.0.1:$port/healthz" | cut -c1-200)"; stuck=$((stuck + 1))
    else
      sleep 0.5
    fi
  done
  # the path of issue 32's finding 15: the whiteboard started before the database, and a bundle started again
  held=$(grep -c 'starts without the database' "$data.log" || true)
  again=$(grep -c 'starting it again' "$data.log" || true)
  echo "start $i: $outcome (whiteboard before the database: $held, bundles started again: $again)"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
echo "start-under-load: $healthy healthy, $exited exited with a reason, $stuck never ready"
