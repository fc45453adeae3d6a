#!/usr/bin/env bash
# bench/oauth.sh: client-credentials tokens/s and token introspections/s of Atrium's OAuth server, and of
# Keycloak (org.keycloak:keycloak-quarkus-dist from Maven Central, start-dev) in the same run, on this machine.
# Informational only: it never gates CI. Target: Atrium >= 3x Keycloak on both. See bench/README.md.
#
#   bench/oauth.sh                # needs launcher/target/atrium.jar and cli/target/atrium-cli.jar built
#
# Everything binds to 127.0.0.1; every process it starts is stopped and its database dropped on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
KC_VERSION="${BENCH_KC_VERSION:-26.7.3}"
CACHE="${BENCH_CACHE:-$HOME/.cache/atrium-bench}"
THREADS="${BENCH_WRK_THREADS:-2}"
CONNECTIONS="${BENCH_WRK_CONNECTIONS:-16}"
DURATION="${BENCH_WRK_DURATION:-15s}"
WARMUP="${BENCH_WRK_WARMUP:-10s}"
PG_HOST="${BENCH_PG_HOST:-127.0.0.1}"
PG_PORT="${BENCH_PG_PORT:-5432}"
PG_USER="${BENCH_PG_USER:-postgres}"
TARGET_RATIO=3

export ATRIUM_NO_BUILD=1
log() { echo "bench: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/atrium-oauth-bench.XXXXXX")"
PIDS=()
DB=""
cleanup() {
  for pid in "${PIDS[@]:-}"; do
    [ -n "$pid" ] || continue
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  [ -z "$DB" ] || psql -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  [ "${BENCH_KEEP:-0}" = 1 ] && log "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
wait_for() { # URL SECONDS
  local deadline=$(( $(date +%s) + $2 ))
  until curl -sf -o /dev/null "$1"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# ------------------------------------------------------------------------------------------ prerequisites
[ -f "$ROOT/launcher/target/atrium.jar" ] || die "build first: mvn -B -q -DskipTests -pl launcher,cli -am package"
command -v wrk >/dev/null || { log "installing wrk (apt-get) ..."; apt-get install -y -qq wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; } >/dev/null 2>&1; }
command -v wrk >/dev/null || die "wrk is needed"
command -v psql >/dev/null || die "psql is needed (postgresql-client)"
KC_JAVA="${BENCH_KC_JAVA_HOME:-}"
if [ -z "$KC_JAVA" ]; then
  for j in /usr/lib/jvm/*; do
    [ -x "$j/bin/java" ] || continue
    v=$("$j/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = //p' || true)
    if [ -n "$v" ] && [ "$v" -ge 21 ] 2>/dev/null; then KC_JAVA="$j"; break; fi
  done
fi
[ -n "$KC_JAVA" ] || die "Keycloak $KC_VERSION needs Java 21 or later (set BENCH_KC_JAVA_HOME)"
KC_HOME="$CACHE/keycloak-$KC_VERSION"
if [ ! -x "$KC_HOME/bin/kc.sh" ]; then
  ZIP="$HOME/.m2/repository/org/keycloak/keycloak-quarkus-dist/$KC_VERSION/keycloak-quarkus-dist-$KC_VERSION.zip"
  [ -f "$ZIP" ] || { log "fetching keycloak-quarkus-dist $KC_VERSION (Maven Central) ..."; \
    mvn -q -B dependency:get -Dartifact="org.keycloak:keycloak-quarkus-dist:$KC_VERSION:zip" -Dtransitive=false >/dev/null; }
  mkdir -p "$CACHE" && unzip -q -o "$ZIP" -d "$CACHE"
fi

# ------------------------------------------------------------------------------------------ Atrium
DB="oauthbench_$(date +%s)_$$"
psql -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -c "CREATE DATABASE $DB" >/dev/null
A_PORT=$(free_port)
ATRIUM_NO_BUILD=1 "$ROOT/atrium" run --port "$A_PORT" --data "$WORK/data" \
  --db-url "jdbc:postgresql://$PG_HOST:$PG_PORT/$DB?user=$PG_USER" >"$WORK/atrium.log" 2>&1 &
PIDS+=("$!")
A="http://127.0.0.1:$A_PORT"
wait_for "$A/healthz" 120 || die "Atrium did not start (log: $WORK/atrium.log)"
PAT=$("$ROOT/atrium" token create --user benchuser --url "$A" --data "$WORK/data" | tail -n 1)
CLIENT=$(curl -sf -X POST "$A/api/me/oauth/clients" -H "Authorization: Bearer $PAT" -H 'Content-Type: application/json' \
  -d '{"client_name":"bench","redirect_uris":["http://127.0.0.1:9/cb"],"scope":"threads:read"}')
A_ID=$(echo "$CLIENT" | json 'd["client"]["client_id"]')
A_SECRET=$(echo "$CLIENT" | json 'd["client"]["client_secret"]')
A_AUTH="Basic $(printf '%s:%s' "$A_ID" "$A_SECRET" | base64 -w0)"
A_TOKEN=$(curl -sf -X POST "$A/oauth/token" -H "Authorization: $A_AUTH" -d 'grant_type=client_credentials&scope=threads:read' | json 'd["access_token"]')

# ------------------------------------------------------------------------------------------ Keycloak
K_PORT=$(free_port)
log "starting Keycloak $KC_VERSION (start-dev; the first start takes about 75 s) ..."
JAVA_HOME="$KC_JAVA" KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin \
  "$KC_HOME/bin/kc.sh" start-dev --http-host=127.0.0.1 --http-port="$K_PORT" --http-management-port="$(free_port)" \
  >"$WORK/keycloak.log" 2>&1 &
PIDS+=("$!")
K="http://127.0.0.1:$K_PORT"
wait_for "$K/realms/master/.well-known/openid-configuration" 300 || die "Keycloak did not start (log: $WORK/keycloak.log)"
ADMIN=$(curl -sf -X POST "$K/realms/master/protocol/openid-connect/token" \
  -d 'grant_type=password&client_id=admin-cli&username=admin&password=admin' | json 'd["access_token"]')
# the client is made afresh; Keycloak 26 introspects a token only for a client in its audience, hence the mapper
OLD_ID=$(curl -sf "$K/admin/realms/master/clients?clientId=bench" -H "Authorization: Bearer $ADMIN" | json 'd[0]["id"] if d else ""')
[ -z "$OLD_ID" ] || curl -sf -o /dev/null -X DELETE "$K/admin/realms/master/clients/$OLD_ID" -H "Authorization: Bearer $ADMIN"
curl -sf -o /dev/null -X POST "$K/admin/realms/master/clients" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
  -d '{"clientId":"bench","secret":"bench-secret","publicClient":false,"serviceAccountsEnabled":true,"standardFlowEnabled":false,
       "directAccessGrantsEnabled":false,"protocolMappers":[{"name":"audience-bench","protocol":"openid-connect",
       "protocolMapper":"oidc-audience-mapper","config":{"included.client.audience":"bench","access.token.claim":"true",
       "introspection.token.claim":"true"}}]}'
K_AUTH="Basic $(printf 'bench:bench-secret' | base64 -w0)"
K_TOKEN=$(curl -sf -X POST "$K/realms/master/protocol/openid-connect/token" -H "Authorization: $K_AUTH" \
  -d 'grant_type=client_credentials' | json 'd["access_token"]')

# both servers must find the measured token active, or the introspection figures mean nothing
curl -sf -X POST "$A/oauth/introspect" -H "Authorization: $A_AUTH" -d "token=$A_TOKEN" | grep -q '"active":true' \
  || die "Atrium does not report its token active"
curl -sf -X POST "$K/realms/master/protocol/openid-connect/token/introspect" -H "Authorization: $K_AUTH" -d "token=$K_TOKEN" \
  | grep -q '"active":true' || die "Keycloak does not report its token active"

# ------------------------------------------------------------------------------------------ runs
# run NAME URL AUTH BODY: prints requests/s and checks every answer was 2xx
run() {
  local name="$1" url="$2" auth="$3" body="$4" out="$WORK/$1.txt"
  BENCH_AUTH="$auth" BENCH_BODY="$body" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$BENCH_DIR/oauth/post.lua" "$url" >/dev/null
  BENCH_AUTH="$auth" BENCH_BODY="$body" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$BENCH_DIR/oauth/post.lua" "$url" >"$out"
  if grep -q "Non-2xx" "$out"; then log "$name: $(grep Non-2xx "$out")"; fi
  awk '/Requests\/sec/ {print int($2)}' "$out"
}
log "measuring (warm-up $WARMUP, then $DURATION each; wrk -t$THREADS -c$CONNECTIONS) ..."
A_CC=$(run atrium-token "$A/oauth/token" "$A_AUTH" "grant_type=client_credentials&scope=threads:read")
K_CC=$(run keycloak-token "$K/realms/master/protocol/openid-connect/token" "$K_AUTH" "grant_type=client_credentials")
A_IN=$(run atrium-introspect "$A/oauth/introspect" "$A_AUTH" "token=$A_TOKEN")
K_IN=$(run keycloak-introspect "$K/realms/master/protocol/openid-connect/token/introspect" "$K_AUTH" "token=$K_TOKEN")

ratio() { python3 -c "print(f'{$1/$2:.2f}' if $2 else 'n/a')"; }
verdict() { python3 -c "print('meets' if $2 and $1/$2 >= $TARGET_RATIO else 'BELOW')"; }
echo
echo "OAuth server throughput (cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-34s %10s %10s %8s  %s\n' "" "Atrium" "Keycloak" "ratio" "target >= ${TARGET_RATIO}x"
printf '%-34s %10s %10s %8s  %s\n' "client_credentials tokens/s" "$A_CC" "$K_CC" "$(ratio "$A_CC" "$K_CC")" "$(verdict "$A_CC" "$K_CC")"
printf '%-34s %10s %10s %8s  %s\n' "token introspections/s" "$A_IN" "$K_IN" "$(ratio "$A_IN" "$K_IN")" "$(verdict "$A_IN" "$K_IN")"
for f in atrium-token keycloak-token atrium-introspect keycloak-introspect; do
  printf '  %-22s p50 %s  p99 %s\n' "$f" "$(awk '/ 50%/ {print $2}' "$WORK/$f.txt")" "$(awk '/ 99%/ {print $2}' "$WORK/$f.txt")"
done
