#!/usr/bin/env bash
# bench/deploy.sh: time from `atrium deploy` to the new version serving, as a user sees it.
#  1. Worker app: a repository with app.yml (a worker built by a workflow, a kv resource). For each of N commits the
#     workflow's artifact is built first (a dispatched run, awaited), then `atrium deploy --space S --repo R --ref main`
#     is timed from its start until the app's hostname answers with the new version (the CLI's JVM start included).
#     The floor: the same worker bundle deployed straight to a plain service (`POST /api/services/:id/deployments`,
#     a direct workerd restart), timed until it answers with the new version.
#  2. Container service: a busybox httpd image (a docker archive saved by podman) deployed with
#     `target.artifact.kind: container-image`, timed until its hostname answers 200; the floor is `podman run` of the
#     same image to its first HTTP 200 on a published port.
# Target (issue 37): worker app p50 <= floor p50 + 3 s. Informational only: it never gates CI.
#
#   bench/deploy.sh                     # needs launcher/target/atrium.jar + cli jar, podman, workerd, ~/.cache/atrium/images/busybox.tar
#   BENCH_DEPLOY_RUNS=5 bench/deploy.sh
#   BENCH_KEEP=1 bench/deploy.sh        # keep the temp dir (server log)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

RUNS="${BENCH_DEPLOY_RUNS:-10}"
USER_NAME=benchdeploy
IMAGE_TAR="${ATRIUM_RUNNER_IMAGES:-$HOME/.cache/atrium/images}/busybox.tar"
TARGET_OVER_FLOOR_MS=3000

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench
export GIT_COMMITTER_EMAIL=bench@example.com

command -v podman >/dev/null || die "podman is missing: ./atrium test installs it (apt-get install podman runc)"
[ -f "$IMAGE_TAR" ] || die "$IMAGE_TAR is missing: run ./atrium images"
WORK_DIR=$(mktemp -d /tmp/bench-deploy.XXXXXX)
trap cleanup EXIT INT TERM

p() { sort -g | awk -v q="$1" '{a[NR]=$1} END { if (NR == 0) { print 0; exit } i = int(q / 100 * NR); if (i < q / 100 * NR) i++; if (i < 1) i = 1; print a[i] }'; }

start_atrium
log "Atrium healthy in $ATRIUM_STARTED_MS ms on port $ATRIUM_PORT"
TOKEN=$(atrium_token "$USER_NAME")
API="http://127.0.0.1:$ATRIUM_PORT"
H=(-H "Authorization: Bearer $TOKEN")
J=(-H 'Content-Type: application/json')
CLI=(java -jar "$ROOT/cli/target/atrium-cli.jar")
SPACE=$(curl -sf "${H[@]}" "$API/api/spaces/me" | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
field() { grep -o "\"$1\":\"[^\"]*\"" | head -n 1 | cut -d'"' -f4; }

# serving HOST TEXT T0 [PATH]: waits until HOST answers TEXT (a substring) through Atrium's Host routing; prints ms since T0
serving() {
  until curl -s --max-time 2 -H "Host: $1" "$API${4:-/}" 2>/dev/null | grep -q "$2"; do
    [ $(( $(now_ms) - $3 )) -lt 120000 ] || die "$1 did not serve '$2' within 120 s"
    sleep 0.02
  done
  echo $(( $(now_ms) - $3 ))
}

# ------------------------------------------------------------------------------------------------ worker app

REPO=$(curl -sf "${H[@]}" "${J[@]}" --data '{"name":"bench-app"}' "$API/api/spaces/$SPACE/repos" | field id)
[ -n "$REPO" ] || die "could not create the repository"
REMOTE="$API/git/$USER_NAME/bench-app.git"
AUTH="http.extraHeader=Authorization: Basic $(printf '%s:%s' "$USER_NAME" "$TOKEN" | base64 -w0)"
WORK="$WORK_DIR/work"
git init -q -b main "$WORK"
mkdir -p "$WORK/.atrium/workflows"
cat >"$WORK/.atrium/workflows/build.yml" <<'YAML'
on: workflow_dispatch
jobs:
  build:
    runs-on: busybox
    steps:
      - uses: actions/checkout@v4
      - run: mkdir -p dist && sed "s/VERSION/$(cat VERSION)/" worker.js > dist/worker.js
      - uses: actions/upload-artifact@v4
        with:
          name: worker
          path: dist/worker.js
YAML
cat >"$WORK/worker.js" <<'JS'
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/kv") { await env.STORE.put("k", "v"); return new Response("ok"); }
    return new Response("version VERSION");
  }
};
JS
cat >"$WORK/app.yml" <<'YAML'
apiVersion: atrium.dev/v1alpha1
kind: App
metadata:
  name: bench
spec:
  version: "1"
  resources:
    store:
      type: kv
  workers:
    web:
      build:
        fromWorkflow:
          path: .atrium/workflows/build.yml
          job: build
          artifact: worker
          artifactPath: worker.js
      bindings:
        STORE: store
      routes:
        - name: main
          target: web
          path: /
YAML
echo 0 >"$WORK/VERSION"
git -C "$WORK" add -A
git -C "$WORK" commit -q -m "app"
git -C "$WORK" -c "$AUTH" push -q "$REMOTE" main

# build ARTIFACT for the commit main is at: a dispatched run, awaited
build() {
  local run
  run=$(curl -sf "${H[@]}" "${J[@]}" --data '{"workflow":".atrium/workflows/build.yml","ref":"main"}' "$API/api/repos/$REPO/actions/runs" | field id)
  until curl -s "${H[@]}" "$API/api/repos/$REPO/actions/runs/$run" | grep -q '"status":"completed"'; do sleep 0.1; done
}

t0=$(now_ms)
first=$("${CLI[@]}" deploy --space "$SPACE" --repo "$REPO" --ref main --url "$API" --token "$TOKEN" 2>&1 | tail -n 1)
HOST=$(echo "$first" | grep -o '[a-z0-9-]*\.apps\.localhost' | head -n 1)
[ -n "$HOST" ] || die "the first deploy did not say where it serves: $first"
log "first deploy (workflow run included, resource created): $(serving "$HOST" "version 0" "$t0") ms; serving at $HOST"

SVC=$(curl -sf "${H[@]}" "${J[@]}" --data "{\"name\":\"bench-floor\",\"space_id\":\"$SPACE\"}" "$API/api/services" | field id)
FLOOR_HOST=$(curl -sf "${H[@]}" "$API/api/services/$SVC" | field slug).apps.localhost

: >"$WORK_DIR/t-app"; : >"$WORK_DIR/t-floor"
for i in $(seq 1 "$RUNS"); do
  echo "$i" >"$WORK/VERSION"
  git -C "$WORK" commit -q -am "version $i"
  git -C "$WORK" -c "$AUTH" push -q "$REMOTE" main
  build
  t0=$(now_ms)
  "${CLI[@]}" deploy --space "$SPACE" --repo "$REPO" --ref main --url "$API" --token "$TOKEN" >>"$WORK_DIR/deploy.out" 2>&1
  serving "$HOST" "version $i\$" "$t0" >>"$WORK_DIR/t-app"

  bundle=$(printf 'export default { async fetch() { return new Response("version %s"); } };\n' "$i" | base64 -w0)
  t0=$(now_ms)
  curl -sf -o /dev/null "${H[@]}" "${J[@]}" --data "{\"bundle\":\"$bundle\"}" "$API/api/services/$SVC/deployments"
  serving "$FLOOR_HOST" "version $i\$" "$t0" >>"$WORK_DIR/t-floor"
done
app50=$(p 50 <"$WORK_DIR/t-app"); app99=$(p 99 <"$WORK_DIR/t-app")
floor50=$(p 50 <"$WORK_DIR/t-floor"); floor99=$(p 99 <"$WORK_DIR/t-floor")
log "worker app: atrium deploy to new version serving p50 $app50 ms, p99 $app99 ms ($RUNS runs)"
log "floor: direct service deployment (workerd restart) to serving p50 $floor50 ms, p99 $floor99 ms"
over=$(( app50 - floor50 ))
if [ "$over" -le "$TARGET_OVER_FLOOR_MS" ]; then
  log "target met: $over ms over the floor at p50 (target <= $TARGET_OVER_FLOOR_MS ms)"
else
  log "target missed: $over ms over the floor at p50 (target <= $TARGET_OVER_FLOOR_MS ms)"
fi

# ------------------------------------------------------------------------------------------------ container service

PODMAN_DIR="$WORK_DIR/podman"
mkdir -p "$PODMAN_DIR"
printf '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' >"$PODMAN_DIR/containers.conf"
RUNROOT=$(mktemp -d /run/bench-deploy.XXXXXX)
fpodman() { CONTAINERS_CONF="$PODMAN_DIR/containers.conf" podman --root "$PODMAN_DIR/storage" --runroot "$RUNROOT" "$@"; }
trap 'fpodman rm -a -f >/dev/null 2>&1 || true; rm -rf "$RUNROOT"; cleanup' EXIT INT TERM
# image I serves container-I: a busybox httpd, saved as a docker archive
image() {
  fpodman import -q --change "CMD [\"sh\",\"-c\",\"mkdir -p /tmp/www && echo container-$1 > /tmp/www/index.html && exec httpd -f -p \${PORT:-8080} -h /tmp/www\"]" \
    "$IMAGE_TAR" "localhost/bench-httpd:$1" >/dev/null
  fpodman save -q --format docker-archive -o "$WORK_DIR/httpd-$1.tar" "localhost/bench-httpd:$1"
}
: >"$WORK_DIR/t-ctr-floor"
for i in $(seq 1 "$RUNS"); do
  port=$(free_port)
  image "$i"
  t0=$(now_ms)
  fpodman run -d --rm --init -e PORT=8080 -p "127.0.0.1:$port:8080" "localhost/bench-httpd:$i" >/dev/null
  until curl -sf --max-time 1 "http://127.0.0.1:$port/" 2>/dev/null | grep -q "container-$i"; do sleep 0.02; done
  echo $(( $(now_ms) - t0 )) >>"$WORK_DIR/t-ctr-floor"
  fpodman rm -a -f >/dev/null 2>&1 || true
done
CSVC=$(curl -sf "${H[@]}" "${J[@]}" --data "{\"name\":\"bench-container\",\"space_id\":\"$SPACE\"}" "$API/api/services" | field id)
CHOST=$(curl -sf "${H[@]}" "$API/api/services/$CSVC" | field slug).apps.localhost
: >"$WORK_DIR/t-ctr"
for i in $(seq 1 "$RUNS"); do
  t0=$(now_ms)
  code=$(curl -s -o "$WORK_DIR/ctr-deploy.json" -w '%{http_code}' "${H[@]}" -H 'Content-Type: application/x-tar' \
    --data-binary @"$WORK_DIR/httpd-$i.tar" "$API/api/services/$CSVC/deployments?kind=container-image&provider=podman")
  [ "$code" = 201 ] || die "the container deployment answered $code: $(head -c 300 "$WORK_DIR/ctr-deploy.json")"
  serving "$CHOST" "container-$i" "$t0" >>"$WORK_DIR/t-ctr"
done
log "container service: deployment to serving p50 $(p 50 <"$WORK_DIR/t-ctr") ms, p99 $(p 99 <"$WORK_DIR/t-ctr") ms ($RUNS runs)"
log "floor: podman run to first HTTP 200 p50 $(p 50 <"$WORK_DIR/t-ctr-floor") ms, p99 $(p 99 <"$WORK_DIR/t-ctr-floor") ms"
