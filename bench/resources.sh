#!/usr/bin/env bash
# bench/resources.sh: resource providers' throughput, in one run. kv: get and put operations/s through the provider
# API in-process (KvFacet, no HTTP; bench/KvThroughput.java) on PostgreSQL and on Redis, beside redis-benchmark's GET
# and SET against the same Redis at the same concurrency, and the same operations over HTTP
# (GET/PUT /api/resources/:id/kv/entries/:key, wrk) on each backend. Then the queue and vectorize parts
# (bench/resources-queue.sh, bench/resources-vectorize.sh) when they exist. Prints the figures beside the target
# (in-process Redis get >= 50% of redis-benchmark's GET). Informational only: it never gates CI. See bench/README.md.
#
#   bench/resources.sh                          # needs the built server (mvn -B -q -DskipTests package); installs wrk with apt-get if missing
#   BENCH_KV_CONCURRENCY=32 BENCH_KV_SECONDS=10 bench/resources.sh
#   BENCH_REDIS=redis://127.0.0.1:6379/0        # the Redis to use (the default)
#
# Everything binds to 127.0.0.1. Every process it starts is stopped, the databases it creates are dropped and its temp
# dir removed, also when interrupted; the Redis keys it writes (prefix atrium-bench:kv: and the server's resources) are
# deleted with their resources.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
CONCURRENCY="${BENCH_KV_CONCURRENCY:-16}"
SECONDS_EACH="${BENCH_KV_SECONDS:-8}"
VALUE_BYTES="${BENCH_KV_VALUE_BYTES:-64}"
KEYS=1000
REDIS_URL="${BENCH_REDIS:-redis://127.0.0.1:6379/0}"
USER_NAME="${BENCH_RESOURCES_USER:-benchresources}"
TARGET_REDIS=0.50

# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench-resources.XXXXXX")"
for c in curl java awk redis-benchmark; do command -v "$c" >/dev/null || die "$c is required"; done
ensure_apt_package wrk wrk
command -v psql >/dev/null || ensure_apt_package psql postgresql-client
redis_hostport=${REDIS_URL#redis://}; redis_hostport=${redis_hostport%%/*}
REDIS_HOST=${redis_hostport%%:*}; REDIS_PORT=${redis_hostport##*:}

log "building the classpath of the kv providers (mvn, offline when it can) ..."
(cd "$ROOT" && mvn -B -q -o -DskipTests package dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/classpath.txt \
  -pl bundles/resource.kv,bundles/resource.kv.redis -am >"$WORK_DIR/mvn.log" 2>&1 \
  || mvn -B -q -DskipTests package dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/classpath.txt \
  -pl bundles/resource.kv,bundles/resource.kv.redis -am >>"$WORK_DIR/mvn.log" 2>&1) || die "mvn failed (see $WORK_DIR/mvn.log)"
CP="$ROOT/bundles/resource.kv/target/classes:$ROOT/bundles/resource.kv.redis/target/classes"
CP+=":$(cat "$ROOT/bundles/resource.kv/target/classpath.txt"):$(cat "$ROOT/bundles/resource.kv.redis/target/classpath.txt")"

# ------------------------------------------------------------------------------------------ in-process

create_database bench_kv
db=$CREATED_DB
log "in-process: $CONCURRENCY threads, ${SECONDS_EACH} s each of put and get, ${VALUE_BYTES}-byte values over $KEYS keys ..."
java -cp "$CP" "$BENCH_DIR/KvThroughput.java" "$REDIS_URL" "jdbc:postgresql://$PG_HOST:$PG_PORT/$db?user=$PG_USER" \
  "$CONCURRENCY" "$SECONDS_EACH" "$VALUE_BYTES" "$KEYS" >"$WORK_DIR/inprocess.out" 2>"$WORK_DIR/inprocess.err" \
  || { cat "$WORK_DIR/inprocess.err" >&2; die "the in-process kv bench failed"; }
read -r _ _ _ in_redis_put _ in_redis_get < <(grep '^inprocess redis ' "$WORK_DIR/inprocess.out")
read -r _ _ _ in_pg_put _ in_pg_get < <(grep '^inprocess postgres ' "$WORK_DIR/inprocess.out")

log "redis-benchmark: -c $CONCURRENCY, SET and GET of ${VALUE_BYTES}-byte values ..."
redis-benchmark -h "$REDIS_HOST" -p "$REDIS_PORT" -c "$CONCURRENCY" -n 400000 -r "$KEYS" -t set,get -d "$VALUE_BYTES" -q \
  >"$WORK_DIR/redis-benchmark.out" 2>&1 || die "redis-benchmark failed: $(tail -n 3 "$WORK_DIR/redis-benchmark.out")"
rb_set=$(tr '\r' '\n' <"$WORK_DIR/redis-benchmark.out" | awk '/^SET: [0-9.]+ requests per second/ {printf "%.0f", $2}')
rb_get=$(tr '\r' '\n' <"$WORK_DIR/redis-benchmark.out" | awk '/^GET: [0-9.]+ requests per second/ {printf "%.0f", $2}')

# ------------------------------------------------------------------------------------------------ HTTP

start_atrium ATRIUM_KV_REDIS_URL="$REDIS_URL"
TOKEN=$(atrium_token "$USER_NAME")
AUTH="Authorization: Bearer $TOKEN"
API="http://127.0.0.1:$ATRIUM_PORT/api/resources"
log "Atrium on http://127.0.0.1:$ATRIUM_PORT (healthy after $ATRIUM_STARTED_MS ms)"
value=$(head -c "$VALUE_BYTES" /dev/zero | tr '\0' 'v')
cat >"$WORK_DIR/put.lua" <<LUA
wrk.method = "PUT"
wrk.body = "$value"
wrk.headers["Content-Type"] = "application/octet-stream"
LUA
http_rate() { # http_rate URL [wrk args]: requests/s, refusing any non-2xx answer
  local url="$1" out
  shift
  out=$(wrk -t2 -c"$CONCURRENCY" -d"${SECONDS_EACH}s" -H "$AUTH" "$@" "$url" 2>&1) || die "wrk failed: $out"
  if echo "$out" | grep -q 'Non-2xx'; then die "wrk saw failed requests on $url: $(echo "$out" | grep Non-2xx)"; fi
  echo "$out" | awk '/^Requests\/sec:/ {printf "%.0f", $2}'
}
declare -A http_put http_get
for backend in postgres redis; do
  id=$(curl -sf -H "$AUTH" -H 'Content-Type: application/json' -d "{\"name\":\"bench-$backend\",\"type\":\"kv\",\"backend\":\"$backend\"}" "$API" \
    | grep -o '"id":"res_[^"]*"' | head -n 1 | sed 's/"id":"\(.*\)"/\1/')
  [ -n "$id" ] || die "POST $API made no $backend kv resource"
  curl -sf -o /dev/null -X PUT -H "$AUTH" -H 'Content-Type: application/octet-stream' --data-binary "$value" "$API/$id/kv/entries/hot" \
    || die "PUT of the first entry on $backend failed"
  http_rate "$API/$id/kv/entries/hot" >/dev/null   # warm-up, not counted
  http_put[$backend]=$(http_rate "$API/$id/kv/entries/hot" -s "$WORK_DIR/put.lua")
  http_get[$backend]=$(http_rate "$API/$id/kv/entries/hot")
  curl -sf -o /dev/null -X DELETE -H "$AUTH" "$API/$id" || log "could not delete the $backend resource"
  log "HTTP $backend: put ${http_put[$backend]}/s, get ${http_get[$backend]}/s"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN {print (r >= t) ? "meets" : "MISSES"}'; }
r_get=$(ratio "$in_redis_get" "$rb_get")
echo
echo "resources bench (kv): $CONCURRENCY concurrent callers, ${VALUE_BYTES}-byte values, $KEYS keys, ${SECONDS_EACH} s a figure," \
  "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-48s %10s %10s\n' "operations/s" "put/SET" "get/GET" \
  "redis-benchmark, same Redis" "$rb_set" "$rb_get" \
  "in-process KvFacet, Redis" "$in_redis_put" "$in_redis_get" \
  "in-process KvFacet, PostgreSQL" "$in_pg_put" "$in_pg_get" \
  "HTTP /api/resources/:id/kv/entries, Redis" "${http_put[redis]}" "${http_get[redis]}" \
  "HTTP /api/resources/:id/kv/entries, PostgreSQL" "${http_put[postgres]}" "${http_get[postgres]}"
echo "  in-process Redis get / redis-benchmark GET: $r_get (target >= $TARGET_REDIS: $(verdict "$r_get" "$TARGET_REDIS"))"

for part in resources-queue.sh resources-vectorize.sh; do
  if [ -x "$BENCH_DIR/$part" ]; then
    echo
    "$BENCH_DIR/$part"
  fi
done
