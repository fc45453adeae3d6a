#!/usr/bin/env bash
# bench/federation.sh: ActivityPub federation (Model A, feature store-inventory) in one run against a real Atrium.
#  1. signed inbox: BENCH_FED_CLIENTS concurrent clients POST draft-cavage signed Follows (rsa-sha256, (request-target)
#     host date digest) from BENCH_FED_INBOX_ACTORS distinct remote actors to /ap/repos/:owner/:repo/inbox; accepted
#     (202/200) activities/s over a fixed window; any other answer is an error, printed and counted.
#  2. outbox fan-out: BENCH_FED_FOLLOWERS (1,000) remote actors follow a second repository; then BENCH_FED_PUSHES (5)
#     real `git push`es over HTTP each produce a Push activity that Atrium's delivery queue sends to every follower;
#     deliveries/s (first to last delivery of one Push) and p50/p99 from the push command's end to each delivery.
# The remote actors, their keys and inboxes are served by a sink in bench/FederationLoad.java (JDK only, no Atrium
# code), which also is the load client, and checks the signature of Atrium's deliveries against the repository's key
# document. Informational only: it never gates CI. See bench/README.md.
#
#   bench/federation.sh                           # needs the built server (mvn -B -q -DskipTests package), git, java, curl
#   BENCH_FED_SECONDS=3 BENCH_FED_FOLLOWERS=100 BENCH_FED_PUSHES=2 bench/federation.sh   # a quick check
#
# Everything binds to 127.0.0.1. Every process it starts is stopped, the database it creates dropped and its temp dir
# removed (BENCH_KEEP=1 keeps it), also when interrupted.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
CLIENTS="${BENCH_FED_CLIENTS:-16}"
WARMUP_S="${BENCH_FED_WARMUP:-5}"
SECONDS_COUNTED="${BENCH_FED_SECONDS:-15}"
INBOX_ACTORS="${BENCH_FED_INBOX_ACTORS:-1000}"
FOLLOWERS="${BENCH_FED_FOLLOWERS:-1000}"
PUSHES="${BENCH_FED_PUSHES:-5}"
VERIFY_EVERY="${BENCH_FED_VERIFY_EVERY:-1}"
USER_NAME="${BENCH_FED_USER:-benchfed}"

# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench-federation.XXXXXX")"
for c in curl java git awk; do command -v "$c" >/dev/null || die "$c is required"; done
command -v psql >/dev/null || ensure_apt_package psql postgresql-client

SENDERS="${BENCH_FED_SENDERS:-}"                 # the delivery queue's senders (Atrium's default, 4, when unset)
if [ -n "$SENDERS" ]; then
  mkdir -p "$WORK_DIR/atrium/deploy"
  echo "senders=I\"$SENDERS\"" >"$WORK_DIR/atrium/deploy/dev.atrium.store.ap.deliveries.config"
fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
psi() { awk '/^some/ {sub("avg60=", "", $3); print $3 "%"}' /proc/pressure/cpu 2>/dev/null || echo "?"; }
psi_before=$(psi)
START_ATRIUM_PORT=$(free_port)
BASE="http://127.0.0.1:$START_ATRIUM_PORT"
start_atrium ATRIUM_EGRESS_ALLOW_LOOPBACK=true ATRIUM_PUBLIC_URL="$BASE" \
  ATRIUM_FEDERATION_PUBLIC_GETS_PER_MINUTE=6000000 ATRIUM_FEDERATION_PUBLIC_GETS_BURST=1000000
log "Atrium on $BASE (healthy after $ATRIUM_STARTED_MS ms)"
# `atrium run` execs java once it has a class-data archive; the first start of a jar runs java as its child
SERVER_PID=$ATRIUM_PID
[ "$(cat "/proc/$ATRIUM_PID/comm" 2>/dev/null)" = java ] || SERVER_PID=$(pgrep -P "$ATRIUM_PID" java | head -n 1 || echo "$ATRIUM_PID")

TOKEN=$(atrium_token "$USER_NAME")
AUTH="Authorization: Bearer $TOKEN"
me=$(curl -sf --max-time 10 -H "$AUTH" "$BASE/api/spaces/me") || die "GET /api/spaces/me failed"
SPACE=$(echo "$me" | grep -o '"id":"[^"]*"' | head -n 1 | sed 's/"id":"\(.*\)"/\1/')
OWNER=$(echo "$me" | grep -o '"slug":"[^"]*"' | head -n 1 | sed 's/"slug":"\(.*\)"/\1/')
[ -n "$SPACE" ] && [ -n "$OWNER" ] || die "GET /api/spaces/me gave no space id or slug: $me"
for name in fed-inbox fed-fanout; do
  status=$(curl -s --max-time 30 -o "$WORK_DIR/repo.json" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    -d "{\"name\":\"$name\",\"visibility\":\"public\"}" "$BASE/api/spaces/$SPACE/repos" || true)
  [ "$status" = 201 ] || die "POST /api/spaces/$SPACE/repos answered ${status:-nothing}: $(head -c 300 "$WORK_DIR/repo.json")"
  status=$(curl -s -o "$WORK_DIR/actor.json" -w '%{http_code}' -H 'Accept: application/activity+json' "$BASE/ap/repos/$OWNER/$name" || true)
  [ "$status" = 200 ] || die "GET /ap/repos/$OWNER/$name answered $status (is the feature store-inventory enabled?): $(head -c 300 "$WORK_DIR/actor.json")"
done

# a working copy whose every push makes one commit; git isolated from the machine's configuration, token by HTTP Basic
export HOME="$WORK_DIR/home" GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"
git config --global http.extraHeader "Authorization: Basic $(printf '%s:%s' "$USER_NAME" "$TOKEN" | base64 -w0)"
WC="$WORK_DIR/wc"
git init -q -b main "$WC"
echo "federation bench" >"$WC/README"
git -C "$WC" add README && git -C "$WC" commit -qm "first"
for name in fed-inbox fed-fanout; do
  git -C "$WC" push -q "$BASE/git/$OWNER/$name.git" main 2>>"$WORK_DIR/git.log" || die "the first push to $name failed: $(tail -n 5 "$WORK_DIR/git.log")"
done
cat >"$WORK_DIR/push.sh" <<SH
#!/usr/bin/env bash
set -e
cd "$WC"
echo "push \$1 \$(date +%s%N)" >>README
git commit -qam "bench push \$1"
git push -q "$BASE/git/$OWNER/fed-fanout.git" main
SH
chmod +x "$WORK_DIR/push.sh"

log "load: ${SENDERS:-4 (default)} delivery senders, $CLIENTS clients, ${WARMUP_S}+${SECONDS_COUNTED} s inbox, $FOLLOWERS followers, $PUSHES pushes ..."
rc=0
java -Xmx512m "$BENCH_DIR/FederationLoad.java" "$BASE" "$BASE/ap/repos/$OWNER/fed-inbox" "$BASE/ap/repos/$OWNER/fed-fanout" \
  "$CLIENTS" "$WARMUP_S" "$SECONDS_COUNTED" "$INBOX_ACTORS" "$FOLLOWERS" "$PUSHES" "$WORK_DIR/push.sh" "$SERVER_PID" "$VERIFY_EVERY" \
  >"$WORK_DIR/load.out" 2>"$WORK_DIR/load.err" || rc=$?
[ -s "$WORK_DIR/load.out" ] || { cat "$WORK_DIR/load.err" >&2; die "FederationLoad.java failed (exit $rc)"; }

queue_states="?"
if [ "${#CREATED_DBS[@]}" -gt 0 ]; then
  table=$(psql_admin -d "${CREATED_DBS[0]}" -c "SELECT quote_ident(schemaname) || '.ap_deliveries' FROM pg_tables
    WHERE tablename = 'ap_deliveries' LIMIT 1" 2>>"$WORK_DIR/psql.err" || true)
  [ -z "$table" ] || queue_states=$(psql_admin -d "${CREATED_DBS[0]}" -c "SELECT string_agg(state || ' ' || n, ', ' ORDER BY state)
    FROM (SELECT state, count(*) AS n FROM $table GROUP BY state) s" 2>>"$WORK_DIR/psql.err" || echo "?")
  # the last push's rows (its Push and Update to every follower): how long queueing them took beside sending them
  [ -z "$table" ] || last_push=$(psql_admin -d "${CREATED_DBS[0]}" -F ' ' -c "WITH l AS (SELECT created_at, finished_at FROM $table
    ORDER BY created_at DESC LIMIT $(( 2 * FOLLOWERS ))) SELECT count(*), round(extract(epoch FROM max(created_at) - min(created_at)) * 1000),
    round(extract(epoch FROM max(finished_at) - min(finished_at)) * 1000), round(extract(epoch FROM max(finished_at) - min(created_at)) * 1000)
    FROM l" 2>>"$WORK_DIR/psql.err" || true)
fi
echo
echo "federation bench (Model A): Atrium $(git -C "$ROOT" rev-parse --short HEAD) on $BASE, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')),"
echo "  load average before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg); CPU pressure (PSI some avg60: time some task waited"
echo "  for a CPU) before $psi_before, after $(psi); the load client, the sink, Atrium and PostgreSQL share the CPUs"
echo "  delivery queue senders: ${SENDERS:-4 (the default)}"
cat "$WORK_DIR/load.out"
echo "Atrium's delivery queue (ap_deliveries) after the run, by state: $queue_states"
if [ -n "${last_push:-}" ]; then
  read -r lp_n lp_queued lp_sent lp_all <<<"$last_push"
  echo "  the last push's $lp_n rows: queued (INSERTed by the fan-out thread) over $lp_queued ms, delivered over $lp_sent ms," \
    "first queued to last delivered $lp_all ms"
fi
if [ "$rc" != 0 ]; then
  echo "SOME CHECKS FAILED (see the lines above; load client log: $(grep -c . "$WORK_DIR/load.err") lines)"
  tail -n 20 "$WORK_DIR/load.err" >&2
  exit "$rc"
fi
