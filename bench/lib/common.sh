# Sourced by the bench scripts: logging, ports, packages, PostgreSQL, cleanup, and starting Atrium.
# The sourcing script sets ROOT (the repository) before sourcing, and may set START_TIMEOUT_S, PG_HOST, PG_PORT,
# PG_USER and KEEP (1 keeps WORK_DIR). Every process started goes into STARTED_PIDS and every database made into
# CREATED_DBS: the EXIT/INT/TERM trap stops them (SIGTERM, then SIGKILL after 30 s), drops them and removes WORK_DIR.

START_TIMEOUT_S="${START_TIMEOUT_S:-${BENCH_START_TIMEOUT:-120}}"
PG_HOST="${PG_HOST:-${BENCH_PG_HOST:-127.0.0.1}}"
PG_PORT="${PG_PORT:-${BENCH_PG_PORT:-5432}}"
PG_USER="${PG_USER:-${BENCH_PG_USER:-postgres}}"
KEEP="${KEEP:-${BENCH_KEEP:-0}}"
WORK_DIR="${WORK_DIR:-}"
STARTED_PIDS=()
CREATED_DBS=()

# shellcheck source=basics.sh
. "$(dirname "${BASH_SOURCE[0]}")/basics.sh"
is_running() { kill -0 "$1" 2>/dev/null; }

psql_admin() {
  PGCONNECT_TIMEOUT=5 timeout 60 psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -v ON_ERROR_STOP=1 -qAt "$@"
}

# create_database PREFIX: a fresh database on the machine's PostgreSQL (dropped at exit); sets CREATED_DB to its name.
# Call it directly, never in $(...): a subshell's CREATED_DBS is lost, and the trap would not drop the database.
create_database() {
  CREATED_DB="${1}_$(date +%s)_$$_$RANDOM"
  psql_admin -c "CREATE DATABASE $CREATED_DB" >/dev/null || die "could not create database $CREATED_DB"
  CREATED_DBS+=("$CREATED_DB")
}

cleanup() {
  local rc=$? pid db
  set +e
  trap - EXIT INT TERM
  for pid in "${STARTED_PIDS[@]}"; do
    is_running "$pid" && kill -TERM "$pid" 2>/dev/null
  done
  for pid in "${STARTED_PIDS[@]}"; do
    for _ in $(seq 1 300); do is_running "$pid" || break; sleep 0.1; done
    is_running "$pid" && kill -KILL "$pid" 2>/dev/null
  done
  for db in "${CREATED_DBS[@]}"; do
    # BENCH_KEEP_DB=1 keeps the databases, to try statements on the generated data
    if [ "${BENCH_KEEP_DB:-0}" = 1 ]; then log "kept database $db"; continue; fi
    psql_admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || log "could not drop database $db"
  done
  if [ -n "$WORK_DIR" ]; then
    if [ "$KEEP" = 1 ]; then log "kept $WORK_DIR"; else rm -rf "$WORK_DIR"; fi
  fi
  exit "$rc"
}
trap cleanup EXIT INT TERM

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) {print 0} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

# start_atrium [ENV=VALUE ...]: runs the built server on a free port with WORK_DIR/atrium as its data, on a fresh
# database of the machine's PostgreSQL when there is one (else the embedded one), with the given extra environment;
# waits for /healthz 200 and sets ATRIUM_PORT, ATRIUM_DATA, ATRIUM_PID and ATRIUM_STARTED_MS (ms to healthy).
# START_ATRIUM_PORT, when set, is the port to use (a script that must know it beforehand, e.g. for ATRIUM_PUBLIC_URL).
start_atrium() {
  local args started db
  [ -f "$ROOT/launcher/target/atrium.jar" ] && [ -f "$ROOT/cli/target/atrium-cli.jar" ] \
    || die "build the server first: (cd $ROOT && mvn -B -q -DskipTests package)"
  ATRIUM_PORT=${START_ATRIUM_PORT:-$(free_port)}
  ATRIUM_DATA="$WORK_DIR/atrium"
  args=(run --port "$ATRIUM_PORT" --data "$ATRIUM_DATA")
  if psql_admin -c 'select 1' >/dev/null 2>&1; then
    create_database bench_atrium
    db=$CREATED_DB
    args+=(--db-url "jdbc:postgresql://$PG_HOST:$PG_PORT/$db?user=$PG_USER")
  fi
  started=$(now_ms)
  env ATRIUM_NO_BUILD=1 "$@" "$ROOT/atrium" "${args[@]}" >>"$WORK_DIR/atrium.log" 2>&1 </dev/null &
  ATRIUM_PID=$!
  STARTED_PIDS+=("$ATRIUM_PID")
  # no process is started per poll (basics.sh says why)
  while healthz_code "$ATRIUM_PORT"; set_now_ms; [ "$HEALTHZ_CODE" != 200 ]; do
    is_running "$ATRIUM_PID" || { tail -n 30 "$WORK_DIR/atrium.log" >&2; die "Atrium exited before /healthz answered 200"; }
    [ "$(( NOW_MS - started ))" -lt "$(( START_TIMEOUT_S * 1000 ))" ] || die "no /healthz 200 within ${START_TIMEOUT_S}s"
    nap 0.05
  done
  ATRIUM_STARTED_MS=$(( NOW_MS - started ))
}

# atrium_token USER: a personal access token of USER (made if missing) on the server start_atrium started.
atrium_token() {
  local token
  token=$(ATRIUM_NO_BUILD=1 timeout 60 "$ROOT/atrium" token create --user "$1" --url "http://127.0.0.1:$ATRIUM_PORT" \
    --data "$ATRIUM_DATA" 2>>"$WORK_DIR/token.err" </dev/null | tail -n 1)
  [ -n "$token" ] || die "atrium token create printed no token ($(cat "$WORK_DIR/token.err"))"
  echo "$token"
}
