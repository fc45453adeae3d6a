#!/usr/bin/env bash
# bench/git.sh: clone and push of a generated repository (~100 MiB packed, ~20k commits) through Atrium's smart
# HTTP (/git/:owner/:repo.git), through `git http-backend` behind nginx + fcgiwrap, and through
# `git clone --no-local file://` (the floor), in one run; prints the medians and the ratios next to the targets
# (Atrium / http-backend: clone <= 1.05x; push <= 1.5x, or <= 1.05x with ATRIUM_GIT_SHA1=fast) and the server's
# RSS after five clones (<= 800 MB). Atrium's clones read the repository the warm-up push filled, once Atrium's
# own maintenance has given it a bitmap; http-backend's and file://'s read theirs after `git repack -adb`.
# Informational only: it never gates CI. See bench/README.md.
#
#   bench/git.sh                                                   # needs launcher/target/atrium.jar + cli jar
#   BENCH_GIT_COMMITS=2000 BENCH_GIT_MIB=10 bench/git.sh           # a quick run on a small repository
#   BENCH_GIT_TARGETS="http-backend file" bench/git.sh             # without Atrium
#   BENCH_KEEP=1 bench/git.sh                                      # keep the temp dir (logs, configs, repos)
#
# Everything binds to 127.0.0.1. Every process it starts is stopped (SIGTERM, then waited for), the database it
# creates is dropped and its temp dir removed, also when interrupted (trap on EXIT/INT/TERM). The generated
# repository is cached under bench/.cache/git (git-ignored), keyed by its parameters and the generator's hash.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/basics.sh
. "$BENCH_DIR/lib/basics.sh"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
SERVER_JAR="$ROOT/launcher/target/atrium.jar"
CLI_JAR="$ROOT/cli/target/atrium-cli.jar"
GENERATOR="$BENCH_DIR/git/gen-repo.py"
HTTP_BACKEND=/usr/lib/git-core/git-http-backend

# Settings; the BENCH_* environment variables override them.
COMMITS="${BENCH_GIT_COMMITS:-20000}"
MIB="${BENCH_GIT_MIB:-100}"
RUNS="${BENCH_GIT_RUNS:-3}"                       # measured runs per target and operation (after 1 warm-up)
TARGETS="${BENCH_GIT_TARGETS:-atrium http-backend file}"
CACHE_DIR="${BENCH_GIT_CACHE:-$BENCH_DIR/.cache/git}"
OP_TIMEOUT_S="${BENCH_GIT_OP_TIMEOUT:-900}"       # per clone or push
FSCK="${BENCH_GIT_FSCK:-1}"                      # 0: skip the git fsck of one clone per target
GIT_USER="${BENCH_GIT_USER:-benchgit}"           # the Atrium user that owns the repositories
START_TIMEOUT_S="${BENCH_START_TIMEOUT:-120}"
STOP_TIMEOUT_S="${BENCH_STOP_TIMEOUT:-30}"
POLL_INTERVAL_S=0.05
PG_HOST="${BENCH_PG_HOST:-127.0.0.1}"
PG_PORT="${BENCH_PG_PORT:-5432}"
PG_USER="${BENCH_PG_USER:-postgres}"
KEEP="${BENCH_KEEP:-0}"
GC_TIMEOUT_S="${BENCH_GIT_GC_TIMEOUT:-900}"       # wait for Atrium's maintenance after a push
RSS_CLONES="${BENCH_GIT_RSS_CLONES:-5}"          # Atrium clones before the RSS figure (extra untimed ones if needed)
TARGET_CLONE=1.05
if [ "${ATRIUM_GIT_SHA1:-}" = fast ]; then TARGET_PUSH=1.05; else TARGET_PUSH=1.5; fi
TARGET_RSS_MB=800

# State the cleanup trap works from.
WORK_DIR=""
GEN_TMP=""
STARTED_PIDS=()
CREATED_DBS=()
LAST_PID=""

# Per-target state, filled by the setup_* functions.
declare -A LABEL=([atrium]="Atrium" [http-backend]="git http-backend (nginx)" [file]="file:// floor (--no-local)")
declare -A SERVER_PIDS=()      # target -> pids whose process trees serve it (their CPU is the server CPU)
declare -A CLONE_URL=()        # target -> URL of the repository the warm-up push filled
declare -A MEASURED=()         # "target op" -> space-separated seconds of the measured runs
declare -A SERVER_CPU=()       # "target op" -> space-separated server CPU seconds of the measured runs
declare -A CLIENT_CPU=()       # "target op" -> space-separated client CPU seconds of the measured runs
declare -A VERIFIED=()         # target -> correctness summary
ATRIUM_PORT=""; ATRIUM_DATA=""; ATRIUM_TOKEN=""; ATRIUM_SPACE=""; ATRIUM_AUTH=""; ATRIUM_OPERATOR=""
ATRIUM_CLONES=0                # clones Atrium served so far
declare -A MEM=()              # Atrium JVM RSS (MB) at: idle, clones, peak
MAINTENANCE=""                 # what Atrium's maintenance of the warm-up repository did
MAINTENANCE_WAITS=""           # seconds waited for it after each push
HTTP_PORT=""

load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# ---------------------------------------------------------------------------------------------- setup



has_target() { case " $TARGETS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

check_prerequisites() {
  local c t
  for t in $TARGETS; do
    case "$t" in atrium|http-backend|file) ;; *) die "unknown target '$t' in BENCH_GIT_TARGETS (atrium, http-backend, file)" ;; esac
  done
  for c in git python3 curl timeout awk sha1sum base64; do
    command -v "$c" >/dev/null || die "$c is required"
  done
  [ "$RUNS" -ge 1 ] 2>/dev/null || die "BENCH_GIT_RUNS must be a positive integer"
  if has_target http-backend; then
    [ -x "$HTTP_BACKEND" ] || die "$HTTP_BACKEND is missing (package git)"
    ensure_apt_package nginx nginx
    ensure_apt_package fcgiwrap fcgiwrap
  fi
  if has_target atrium; then
    command -v java >/dev/null || die "java is required"
    if [ ! -f "$SERVER_JAR" ] || [ ! -f "$CLI_JAR" ]; then
      die "build the server first: (cd $ROOT && mvn -B -q -DskipTests -pl launcher,cli -am package)," \
        "or leave Atrium out: BENCH_GIT_TARGETS=\"http-backend file\""
    fi
    ensure_apt_package psql postgresql-client
  fi
}



# ------------------------------------------------------------------------------------------ processes

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

# descendants PID: the pids of PID's children, grandchildren and so on.
descendants() {
  cat /proc/[0-9]*/stat 2>/dev/null | sed -E 's/^([0-9]+) \(.*\) [A-Za-z] ([0-9]+) .*/\1 \2/' | awk -v root="$1" '
    { parent[$1] = $2 }
    END { for (p in parent) { q = parent[p]; for (d = 0; d < 64 && q > 1; d++) { if (q == root) { print p; break } q = parent[q] } } }'
}

# stop_process PID: SIGTERM, wait up to STOP_TIMEOUT_S, then SIGKILL; then the same for what PID had started and
# left running (fcgiwrap's preforked workers outlive their parent).
stop_process() {
  local pid="$1" started deadline p left kids
  started=$(now_ms)
  kids=$(descendants "$pid")
  deadline=$(( started + STOP_TIMEOUT_S * 1000 ))
  kill -TERM "$pid" 2>/dev/null || true
  while is_running "$pid" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
  if is_running "$pid"; then
    log "process $pid ignored SIGTERM for ${STOP_TIMEOUT_S}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  forget_pid "$pid"
  for p in $kids; do is_running "$p" && kill -TERM "$p" 2>/dev/null; done
  while :; do
    left=""
    for p in $kids; do is_running "$p" && left+="$p "; done
    [ -n "$left" ] && [ "$(now_ms)" -lt "$deadline" ] || break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    log "processes $left (started by $pid) ignored SIGTERM; sending SIGKILL"
    for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
  fi
}

# run_tracked COMMAND...: runs COMMAND in the background and waits for it, so that a SIGTERM/SIGINT to this
# script is handled at once (bash defers traps while a foreground command runs) and the cleanup stops it.
# Its own output goes where this shell's goes; run_logged LOG COMMAND... appends COMMAND's to LOG instead
# (redirecting the run_tracked call itself would also send the trap's messages to LOG).
run_tracked() {
  local pid rc=0
  "$@" &
  pid=$!
  STARTED_PIDS+=("$pid")
  wait "$pid" || rc=$?
  forget_pid "$pid"
  return "$rc"
}

run_logged() {
  local pid rc=0 logfile="$1"
  shift
  "$@" >>"$logfile" 2>&1 &
  pid=$!
  STARTED_PIDS+=("$pid")
  wait "$pid" || rc=$?
  forget_pid "$pid"
  return "$rc"
}

# tree_cpu_ticks PID...: user+system clock ticks of the process trees rooted at the PIDs, including what their
# finished (reaped) children used; 0 for a tree that is gone.
tree_cpu_ticks() {
  # /proc/PID/stat after "PID (comm) ": $1 pid $2 state $3 ppid ... $13 utime $14 stime $15 cutime $16 cstime
  cat /proc/[0-9]*/stat 2>/dev/null | sed -E 's/^([0-9]+) \(.*\) /\1 /' | awk -v roots="$*" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) root[r[i]] = 1 }
    { parent[$1] = $3; ticks[$1] = $13 + $14 + $15 + $16 }
    END {
      for (p in ticks) {
        q = p
        for (depth = 0; depth < 64 && q != "" && q != 0; depth++) {
          if (q in root) { sum += ticks[p]; break }
          q = parent[q]
        }
      }
      print sum + 0
    }'
}

# save_times / children_cpu_ms: user+system CPU ms of this shell's finished children, from `times`. It must run
# in this very shell (in a $(...) subshell it would count from zero), hence the file in between.
save_times() { times >"$WORK_DIR/times"; }
children_cpu_ms() {
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print int((u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000) }' \
    "$WORK_DIR/times"
}

# server_cpu_ticks TARGET: CPU clock ticks the target's server processes used so far. For http-backend that is
# nginx and fcgiwrap plus what every CGI process used: fcgiwrap does not collect its children's times, so the
# CGI is a wrapper that appends bash's `times` to a file once git http-backend exits; this first waits (up to
# 2 s) for the last request's CGI to be gone.
server_cpu_ticks() {
  local target="$1" _ live ticks cgi=0
  if [ "$target" = http-backend ]; then
    for _ in $(seq 1 40); do
      live=$(for p in $(descendants "${SERVER_PIDS[$target]%% *}"); do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null; echo; done \
        | grep -c 'cgi-wrapper' || true)
      [ "$live" = 0 ] && break
      sleep 0.05
    done
    [ -f "$WORK_DIR/http/cgi-times" ] && cgi=$(awk -v hz="$(getconf CLK_TCK)" 'NR % 2 == 0 {
      split($1, u, /[ms]/); split($2, s, /[ms]/); t += (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * hz } END { printf "%d", t }' \
      "$WORK_DIR/http/cgi-times")
  fi
  ticks=$(tree_cpu_ticks ${SERVER_PIDS[$target]})
  echo $(( ticks + cgi ))
}

# stop_orphan_embedded_pg DATA_DIR: stops an embedded PostgreSQL left behind by a server that was killed.
stop_orphan_embedded_pg() {
  local pidfile="$1/pg/postmaster.pid" pid _
  [ -f "$pidfile" ] || return 0
  pid=$(head -n 1 "$pidfile" 2>/dev/null || true)
  [ -n "$pid" ] && is_running "$pid" || return 0
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/pg" || return 0
  log "stopping leftover embedded PostgreSQL (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do is_running "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# server_jvm_pid, rss_mb, peak_rss_mb
source "$BENCH_DIR/lib/jvm.sh"

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
  local rc=$? pid db
  set +e
  trap - EXIT INT TERM
  for pid in "${STARTED_PIDS[@]}"; do
    log "stopping pid $pid"
    stop_process "$pid"
  done
  [ -n "$ATRIUM_DATA" ] && [ -d "$ATRIUM_DATA" ] && stop_orphan_embedded_pg "$ATRIUM_DATA"
  for db in "${CREATED_DBS[@]}"; do drop_database "$db"; done
  [ -n "$GEN_TMP" ] && rm -rf "$GEN_TMP"
  if [ -n "$WORK_DIR" ] && [ -d "$WORK_DIR" ]; then
    if [ "$KEEP" = 1 ]; then log "kept $WORK_DIR (BENCH_KEEP=1)"; else rm -rf "$WORK_DIR"; fi
  fi
  exit "$rc"
}

# ----------------------------------------------------------------------------------------- repository

# Every git here runs without the user's or the system's configuration and never prompts.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
git_plain() { git "$@"; }

generate_into() {
  python3 "$GENERATOR" "$COMMITS" "$MIB" | git_plain -C "$1" fast-import --quiet
}

# source_repo: prints the path of the generated bare repository, building it into the cache when missing.
SOURCE_REPO=""
prepare_source_repo() {
  local key repo started
  key="c${COMMITS}-m${MIB}-$(sha1sum "$GENERATOR" | cut -c1-12)"
  repo="$CACHE_DIR/$key.git"
  if [ ! -f "$repo/bench-complete" ]; then
    mkdir -p "$CACHE_DIR"
    GEN_TMP="$CACHE_DIR/.tmp-$key-$$.git"
    rm -rf "$GEN_TMP"
    git_plain init -q --bare -b main "$GEN_TMP"
    log "generating the repository ($COMMITS commits, ~$MIB MiB) into $repo ..."
    started=$(now_ms)
    run_tracked generate_into "$GEN_TMP" || die "generating the repository failed"
    log "  fast-import took $(( ($(now_ms) - started) / 1000 )) s; repacking (git repack -adf) ..."
    run_tracked git -C "$GEN_TMP" repack -a -d -f -q || die "git repack failed"
    git_plain -C "$GEN_TMP" prune-packed
    touch "$GEN_TMP/bench-complete"
    rm -rf "$repo"
    mv "$GEN_TMP" "$repo"
    GEN_TMP=""
    log "  done in $(( ($(now_ms) - started) / 1000 )) s"
  else
    log "using the cached repository $repo"
  fi
  SOURCE_REPO="$repo"
  git_plain -C "$repo" for-each-ref --format='%(objectname) %(refname)' | sort >"$WORK_DIR/source.refs"
  git_plain -C "$repo" rev-parse --all | sort >"$WORK_DIR/source.revs"
}

# ------------------------------------------------------------------------------------------ http-backend

# setup_http_backend: fcgiwrap and nginx as this user, configs/sockets/logs/pid in the temp dir.
setup_http_backend() {
  local dir="$WORK_DIR/http" sock user_line="" deadline
  mkdir -p "$dir/root/$GIT_USER" "$dir/tmp"
  sock="$dir/fcgiwrap.sock"
  HTTP_PORT=$(free_port)
  # nginx started as root switches its workers to 'user' (nobody by default); keep them as root so that they
  # can write to fcgiwrap's socket, which fcgiwrap (also started by us, as root) creates.
  [ "$(id -u)" = 0 ] && user_line="user root root;"
  cat >"$dir/cgi-wrapper.sh" <<EOF
#!/bin/bash
# runs git http-backend, then records the CPU it used (bash's children times) for bench/git.sh
$HTTP_BACKEND
rc=\$?
times >>"$dir/cgi-times"
exit \$rc
EOF
  chmod +x "$dir/cgi-wrapper.sh"
  cat >"$dir/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 256; }
http {
  access_log $dir/nginx-access.log;
  client_body_temp_path $dir/tmp/client_body;
  fastcgi_temp_path $dir/tmp/fastcgi;
  proxy_temp_path $dir/tmp/proxy;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:$HTTP_PORT;
    location ~ ^/git(/.*)\$ {
      fastcgi_pass unix:$sock;
      fastcgi_buffering off;
      fastcgi_request_buffering off;
      fastcgi_read_timeout ${OP_TIMEOUT_S}s;
      fastcgi_send_timeout ${OP_TIMEOUT_S}s;
      fastcgi_param SCRIPT_FILENAME $dir/cgi-wrapper.sh;
      fastcgi_param GIT_PROJECT_ROOT $dir/root;
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param GIT_PROTOCOL \$http_git_protocol;
      fastcgi_param PATH_INFO \$1;
      fastcgi_param QUERY_STRING \$query_string;
      fastcgi_param REQUEST_METHOD \$request_method;
      fastcgi_param CONTENT_TYPE \$content_type;
      fastcgi_param CONTENT_LENGTH \$content_length;
      fastcgi_param HTTP_CONTENT_ENCODING \$http_content_encoding;
      fastcgi_param REQUEST_URI \$request_uri;
      fastcgi_param SERVER_PROTOCOL \$server_protocol;
      fastcgi_param GATEWAY_INTERFACE CGI/1.1;
      fastcgi_param REMOTE_ADDR \$remote_addr;
      fastcgi_param REMOTE_USER \$remote_user;
      fastcgi_param SERVER_NAME \$server_name;
      fastcgi_param SERVER_PORT \$server_port;
    }
  }
}
EOF
  fcgiwrap -c 4 -s "unix:$sock" >>"$dir/fcgiwrap.log" 2>&1 </dev/null &
  LAST_PID=$!
  STARTED_PIDS+=("$LAST_PID")
  SERVER_PIDS[http-backend]="$LAST_PID"
  deadline=$(( $(now_ms) + 10000 ))
  until [ -S "$sock" ]; do
    is_running "$LAST_PID" || { cat "$dir/fcgiwrap.log" >&2; die "fcgiwrap exited"; }
    [ "$(now_ms)" -lt "$deadline" ] || die "fcgiwrap made no socket within 10 s"
    sleep "$POLL_INTERVAL_S"
  done
  nginx -e "$dir/nginx-error.log" -p "$dir" -c "$dir/nginx.conf" >>"$dir/nginx.log" 2>&1 </dev/null &
  LAST_PID=$!
  STARTED_PIDS+=("$LAST_PID")
  SERVER_PIDS[http-backend]+=" $LAST_PID"
  deadline=$(( $(now_ms) + 10000 ))
  until port_in_use "$HTTP_PORT"; do
    is_running "$LAST_PID" || { cat "$dir/nginx.log" "$dir/nginx-error.log" >&2 2>/dev/null; die "nginx exited"; }
    [ "$(now_ms)" -lt "$deadline" ] || die "nginx did not listen within 10 s"
    sleep "$POLL_INTERVAL_S"
  done
  log "git http-backend behind nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') + fcgiwrap on http://127.0.0.1:$HTTP_PORT/git/"
}

# new_repo_http_backend NAME: an empty bare repository that accepts pushes; prints its URL.
new_repo_http_backend() {
  local repo="$WORK_DIR/http/root/$GIT_USER/$1.git"
  git_plain init -q --bare -b main "$repo"
  git_plain -C "$repo" config http.receivepack true
  echo "http://127.0.0.1:$HTTP_PORT/git/$GIT_USER/$1.git"
}

drop_repo_http_backend() { rm -rf "$WORK_DIR/http/root/$GIT_USER/$1.git"; }

# ------------------------------------------------------------------------------------------------- file

setup_file() { mkdir -p "$WORK_DIR/file"; SERVER_PIDS[file]=""; }

new_repo_file() {
  git_plain init -q --bare -b main "$WORK_DIR/file/$1.git"
  echo "file://$WORK_DIR/file/$1.git"
}

drop_repo_file() { rm -rf "$WORK_DIR/file/$1.git"; }

# ----------------------------------------------------------------------------------------------- atrium

setup_atrium() {
  local db="" db_url="" started out code
  ATRIUM_PORT=$(free_port)
  ATRIUM_DATA="$WORK_DIR/atrium"
  if external_pg_available; then
    db="bench_git_$(date +%s)_$$"
    create_database "$db"
    db_url="$(jdbc_url "$db")"
    log "starting Atrium on port $ATRIUM_PORT (external PostgreSQL, fresh database $db) ..."
  else
    log "starting Atrium on port $ATRIUM_PORT (no PostgreSQL at $PG_HOST:$PG_PORT: embedded) ..."
  fi
  local args=(run --port "$ATRIUM_PORT" --data "$ATRIUM_DATA")
  [ -n "$db_url" ] && args+=(--db-url "$db_url")
  started=$(now_ms)
  ATRIUM_NO_BUILD=1 "$ROOT/atrium" "${args[@]}" >>"$WORK_DIR/atrium.log" 2>&1 </dev/null &
  LAST_PID=$!
  STARTED_PIDS+=("$LAST_PID")
  SERVER_PIDS[atrium]="$LAST_PID"
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$ATRIUM_PORT/healthz" || true)
    [ "$code" = 200 ] && break
    is_running "$LAST_PID" || { tail -n 30 "$WORK_DIR/atrium.log" >&2; die "Atrium exited before /healthz answered 200"; }
    [ "$(( $(now_ms) - started ))" -lt "$(( START_TIMEOUT_S * 1000 ))" ] \
      || { tail -n 30 "$WORK_DIR/atrium.log" >&2; die "no /healthz 200 within ${START_TIMEOUT_S}s"; }
    sleep "$POLL_INTERVAL_S"
  done
  log "  healthy after $(( $(now_ms) - started )) ms${ATRIUM_GIT_SHA1:+ (ATRIUM_GIT_SHA1=$ATRIUM_GIT_SHA1)}"
  ATRIUM_OPERATOR=$(cat "$ATRIUM_DATA/operator.token" 2>/dev/null || true)
  [ -n "$ATRIUM_OPERATOR" ] || die "no operator token in $ATRIUM_DATA/operator.token"

  out="$WORK_DIR/token.out"
  ATRIUM_NO_BUILD=1 timeout 60 "$ROOT/atrium" token create --user "$GIT_USER" --url "http://127.0.0.1:$ATRIUM_PORT" \
    --data "$ATRIUM_DATA" >"$out" 2>>"$WORK_DIR/token.err" </dev/null \
    || { cat "$WORK_DIR/token.err" >&2; die "atrium token create failed"; }
  ATRIUM_TOKEN=$(tail -n 1 "$out")
  [ -n "$ATRIUM_TOKEN" ] || die "atrium token create printed no token"
  # {"space":{"id":"...","name":...}}: the first "id" is the space's
  ATRIUM_SPACE=$(curl -sf --max-time 10 -H "Authorization: Bearer $ATRIUM_TOKEN" \
    "http://127.0.0.1:$ATRIUM_PORT/api/spaces/me" | grep -o '"id":"[^"]*"' | head -n 1 | sed 's/"id":"\(.*\)"/\1/' || true)
  [ -n "$ATRIUM_SPACE" ] || die "GET /api/spaces/me gave no space id"
  # git sends it on every request; any user name, the personal access token as password
  ATRIUM_AUTH="Authorization: Basic $(printf '%s:%s' "$GIT_USER" "$ATRIUM_TOKEN" | base64 -w0)"
  log "  user $GIT_USER, space $ATRIUM_SPACE"
  sleep 5
  MEM[idle]=$(rss_mb "${SERVER_PIDS[atrium]}")
}

# new_repo_atrium NAME: POST /api/spaces/<space>/repos (public); prints the Git URL.
new_repo_atrium() {
  local name="bench-$1" status body="$WORK_DIR/create-repo.json"
  status=$(curl -s --max-time 30 -o "$body" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $ATRIUM_TOKEN" -H 'Content-Type: application/json' \
    --data "{\"name\":\"$name\",\"visibility\":\"public\"}" \
    "http://127.0.0.1:$ATRIUM_PORT/api/spaces/$ATRIUM_SPACE/repos" || true)
  [ "$status" = 201 ] || die "POST /api/spaces/$ATRIUM_SPACE/repos answered ${status:-nothing}: $(head -c 300 "$body" 2>/dev/null)" \
    "(does this build serve Git yet? BENCH_GIT_TARGETS=\"http-backend file\" leaves Atrium out)"
  # {"repository":{"id":"...",...}}: the first "id" is the repository's; wait_maintained reads it from here
  grep -o '"id":"[^"]*"' "$body" | head -n 1 | sed 's/"id":"\(.*\)"/\1/' >"$WORK_DIR/repo-id-$1"
  [ -s "$WORK_DIR/repo-id-$1" ] || die "POST /api/spaces/$ATRIUM_SPACE/repos gave no repository id: $(head -c 300 "$body")"
  echo "http://127.0.0.1:$ATRIUM_PORT/git/$GIT_USER/$name.git"
}

# wait_maintained NAME: waits until Atrium's own maintenance has collected the repository the push filled: polls
# GET /admin/repos/<id>/gc (operator token) until "bitmaps" > 0 and "state" is idle. Never asks for a collection
# (no POST): the point is that it happens without the operator. Sets GC_STATUS (the last answer) and GC_WAIT_S.
GC_STATUS=""; GC_WAIT_S=""
wait_maintained() {
  local id started url state bitmaps
  id=$(cat "$WORK_DIR/repo-id-$1")
  url="http://127.0.0.1:$ATRIUM_PORT/admin/repos/$id/gc"
  started=$(now_ms)
  while :; do
    GC_STATUS=$(curl -s --max-time 10 -H "Authorization: Bearer $ATRIUM_OPERATOR" "$url" || true)
    state=$(sed -n 's/.*"state":"\([a-z]*\)".*/\1/p' <<<"$GC_STATUS")
    bitmaps=$(sed -n 's/.*"bitmaps":\([0-9]*\).*/\1/p' <<<"$GC_STATUS")
    [ "$state" = idle ] && [ "${bitmaps:-0}" -gt 0 ] && break
    [ "$(( $(now_ms) - started ))" -lt "$(( GC_TIMEOUT_S * 1000 ))" ] \
      || die "Atrium's maintenance gave repository $id no bitmap within ${GC_TIMEOUT_S}s after the push (last: $GC_STATUS)"
    sleep 0.5
  done
  GC_WAIT_S=$(awk -v ms=$(( $(now_ms) - started )) 'BEGIN { printf "%.1f", ms / 1000 }')
}

# repack_with_bitmap TARGET: http-backend's and file://'s copy of the warm-up push, repacked as one pack with a
# bitmap index (git repack -adb), so that git serves it at its best, as Atrium's maintenance leaves Atrium's.
repack_with_bitmap() {
  local repo
  case "$1" in
    http-backend) repo="$WORK_DIR/http/root/$GIT_USER/push-0.git" ;;
    file) repo="$WORK_DIR/file/push-0.git" ;;
    *) return 0 ;;
  esac
  run_logged "$WORK_DIR/logs/$1-repack.log" git -C "$repo" repack -a -d -b -q \
    || { tail -n 20 "$WORK_DIR/logs/$1-repack.log" >&2; die "git repack -adb of $repo failed"; }
  ls "$repo"/objects/pack/*.bitmap >/dev/null 2>&1 || die "git repack -adb left no bitmap in $repo"
}

drop_repo_atrium() { :; }   # the whole data dir and database go at the end

# ------------------------------------------------------------------------------------------ measuring

# git_for TARGET: sets GIT_CMD to git with the target's credentials for a push (Atrium: Basic with the token).
GIT_CMD=()
git_for() {
  GIT_CMD=(git)
  [ "$1" = atrium ] && GIT_CMD+=(-c "http.extraHeader=$ATRIUM_AUTH")
  return 0
}

# timed TARGET OP LOG COMMAND...: runs COMMAND (bounded by OP_TIMEOUT_S); sets OP_S, OP_SERVER_S, OP_CLIENT_S.
OP_S=""; OP_SERVER_S=""; OP_CLIENT_S=""
timed() {
  local target="$1" op="$2" logfile="$3" t0 t1 s0=0 s1=0 c0 c1 rc=0
  shift 3
  save_times
  c0=$(children_cpu_ms)
  [ -n "${SERVER_PIDS[$target]:-}" ] && s0=$(server_cpu_ticks "$target")
  t0=$(now_ms)
  run_logged "$logfile" timeout "$OP_TIMEOUT_S" "$@" || rc=$?
  t1=$(now_ms)
  [ -n "${SERVER_PIDS[$target]:-}" ] && s1=$(server_cpu_ticks "$target")
  save_times
  c1=$(children_cpu_ms)
  [ "$rc" = 0 ] || { tail -n 20 "$logfile" >&2; die "$op via $target failed (exit $rc; log $logfile)"; }
  OP_S=$(awk -v ms=$(( t1 - t0 )) 'BEGIN { printf "%.2f", ms / 1000 }')
  OP_CLIENT_S=$(awk -v ms=$(( c1 - c0 )) 'BEGIN { printf "%.2f", ms / 1000 }')
  if [ -n "${SERVER_PIDS[$target]:-}" ]; then
    OP_SERVER_S=$(awk -v t=$(( s1 - s0 )) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }')
  else
    OP_SERVER_S="-"
  fi
}

# check_refs TARGET WHAT REFS_FILE: the refs (object name and ref name) must be the source's.
check_refs() {
  sort "$3" >"$3.sorted"
  cmp -s "$WORK_DIR/source.refs" "$3.sorted" \
    || { diff "$WORK_DIR/source.refs" "$3.sorted" | head -n 10 >&2; die "$2 via $1: refs differ from the source's"; }
}

# push_run TARGET ROUND: pushes every ref of the source into a new empty repository (round 0 = warm-up, whose
# repository the clones then read).
push_run() {
  local target="$1" round="$2" url logfile="$WORK_DIR/logs/$1-push-$2.log"
  url=$("new_repo_${target//-/_}" "push-$round")
  git_for "$target"
  timed "$target" push "$logfile" "${GIT_CMD[@]}" -C "$SOURCE_REPO" push --mirror --quiet "$url"
  # what the server now advertises must be exactly the source's refs
  "${GIT_CMD[@]}" ls-remote --refs "$url" | awk '{ print $1, $2 }' >"$WORK_DIR/ls-remote.refs" \
    || die "git ls-remote $url failed"
  check_refs "$target" "push $round" "$WORK_DIR/ls-remote.refs"
  # Atrium collects a pushed repository in the background: wait for it after every push, so that no collection
  # runs during a later measurement (and the clones read a maintained repository)
  if [ "$target" = atrium ]; then
    wait_maintained "push-$round"
    MAINTENANCE_WAITS+="$GC_WAIT_S "
  fi
  if [ "$round" = 0 ]; then
    CLONE_URL[$target]="$url"
    log "  $target: warm-up push $OP_S s"
    if [ "$target" = atrium ]; then
      MAINTENANCE="$GC_STATUS"
      log "  atrium: maintained $GC_WAIT_S s after the push: $GC_STATUS"
    else
      repack_with_bitmap "$target"
    fi
  else
    MEASURED["$target push"]+="$OP_S "
    SERVER_CPU["$target push"]+="$OP_SERVER_S "
    CLIENT_CPU["$target push"]+="$OP_CLIENT_S "
    log "  $target: push $OP_S s (server CPU $OP_SERVER_S s, client CPU $OP_CLIENT_S s)"
    "drop_repo_${target//-/_}" "push-$round"
  fi
}

# clone_run TARGET ROUND: a bare clone of the repository the warm-up push filled; round 1's is verified.
clone_run() {
  local target="$1" round="$2" dest="$WORK_DIR/clone-$1-$2.git" logfile="$WORK_DIR/logs/$1-clone-$2.log"
  local extra=()
  [ "$target" = file ] && extra=(--no-local)
  timed "$target" clone "$logfile" git clone --bare --quiet "${extra[@]}" "${CLONE_URL[$target]}" "$dest"
  [ "$target" = atrium ] && ATRIUM_CLONES=$(( ATRIUM_CLONES + 1 ))
  if [ "$round" = 0 ]; then
    log "  $target: warm-up clone $OP_S s"
  else
    MEASURED["$target clone"]+="$OP_S "
    SERVER_CPU["$target clone"]+="$OP_SERVER_S "
    CLIENT_CPU["$target clone"]+="$OP_CLIENT_S "
    log "  $target: clone $OP_S s (server CPU $OP_SERVER_S s, client CPU $OP_CLIENT_S s)"
  fi
  if [ "$round" = 1 ]; then
    verify_clone "$target" "$dest"
  fi
  rm -rf "$dest"
}

verify_clone() {
  local target="$1" dest="$2" fsck="not run (BENCH_GIT_FSCK=0)"
  git_plain -C "$dest" for-each-ref --format='%(objectname) %(refname)' >"$WORK_DIR/clone.refs"
  check_refs "$target" clone "$WORK_DIR/clone.refs"
  git_plain -C "$dest" rev-parse --all | sort >"$WORK_DIR/clone.revs"
  cmp -s "$WORK_DIR/source.revs" "$WORK_DIR/clone.revs" || die "clone via $target: git rev-parse --all differs from the source's"
  if [ "$FSCK" = 1 ]; then
    log "  $target: git fsck of the clone ..."
    run_logged "$WORK_DIR/logs/$target-fsck.log" git -C "$dest" fsck --strict --no-progress \
      || { tail -n 20 "$WORK_DIR/logs/$target-fsck.log" >&2; die "git fsck of the clone via $target failed"; }
    fsck="git fsck --strict passed"
  fi
  VERIFIED[$target]="$(wc -l <"$WORK_DIR/clone.refs") refs and git rev-parse --all identical to the source's, $fsck"
}

# ------------------------------------------------------------------------------------------------ report

median() { tr ' ' '\n' | { grep -vx -e '' -e '-' || true; } | sort -n | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "-"; exit }
  if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || a == "" || b == "" || b <= 0) print "-"; else printf "%.2fx\n", a / b }'; }

# cpu_sum TARGET OP: median server CPU + median client CPU, "-" when not measured.
cpu_sum() {
  awk -v s="$(median <<<"${SERVER_CPU["$1 $2"]:-}")" -v c="$(median <<<"${CLIENT_CPU["$1 $2"]:-}")" \
    'BEGIN { if (s == "-" || c == "-") print "-"; else printf "%.2f\n", s + c }'
}

# verdict RATIO TARGET
verdict() {
  awk -v r="${1%x}" -v t="$2" 'BEGIN { if (r == "-") print "n/a"; else print (r <= t) ? "PASS" : "MISS" }'
}

# rss_after_clones: untimed clones from Atrium until it has served RSS_CLONES, then its JVM's RSS.
rss_after_clones() {
  local dest="$WORK_DIR/clone-rss.git"
  while [ "$ATRIUM_CLONES" -lt "$RSS_CLONES" ]; do
    log "  atrium: untimed clone $(( ATRIUM_CLONES + 1 )) of $RSS_CLONES (for the RSS figure) ..."
    run_logged "$WORK_DIR/logs/atrium-clone-rss.log" timeout "$OP_TIMEOUT_S" git clone --bare --quiet "${CLONE_URL[atrium]}" "$dest" \
      || die "clone via atrium failed (log $WORK_DIR/logs/atrium-clone-rss.log)"
    rm -rf "$dest"
    ATRIUM_CLONES=$(( ATRIUM_CLONES + 1 ))
  done
  MEM[clones]=$(rss_mb "${SERVER_PIDS[atrium]}")
  MEM[peak]=$(peak_rss_mb "${SERVER_PIDS[atrium]}")
}

print_report() {
  local t c_med p_med objects pack_kib refs
  objects=$(git_plain -C "$SOURCE_REPO" count-objects -v | awk '/^in-pack:/ { print $2 }')
  pack_kib=$(du -sk "$SOURCE_REPO"/objects/pack/*.pack | awk '{ s += $1 } END { print s }')
  refs=$(wc -l <"$WORK_DIR/source.refs")

  echo
  echo "================================== Atrium Git benchmark =================================="
  echo "$(date -u +%FT%TZ), $(nproc) CPUs shared by the git client, the servers and whatever else runs here"
  echo "load average (1/5/15 min) before: $LOAD_AT_START; after: $(load_average)"
  echo "repository: $COMMITS commits, $objects objects, $refs refs, pack $(awk -v k="$pack_kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB" \
    "(bench/git/gen-repo.py $COMMITS $MIB, cached in $SOURCE_REPO)"
  echo "$(git --version), protocol v$(git_plain config --get protocol.version || echo 2);" \
    "median of $RUNS runs after 1 warm-up run, targets interleaved"
  echo "Atrium: ${ATRIUM_JAVA_OPTS+ATRIUM_JAVA_OPTS=\"$ATRIUM_JAVA_OPTS\", }JGit SHA-1" \
    "$([ "${ATRIUM_GIT_SHA1:-}" = fast ] && echo 'without collision detection (ATRIUM_GIT_SHA1=fast)' || echo 'with collision detection (default)')"
  echo "clone: git clone --bare (file:// adds --no-local) of the repository the warm-up push filled, maintained by"
  echo "       Atrium itself (JGit GC with bitmaps); repacked with 'git repack -adb' for http-backend and file://"
  echo "push:  git push --mirror of the generated repository into a new empty repository"
  echo
  printf '  %-28s %18s %20s %20s\n' "" "wall time, s" "server CPU, s" "client CPU, s"
  printf '  %-28s %9s %9s %10s %9s %10s %9s\n' "" clone push clone push clone push
  for t in atrium http-backend file; do
    has_target "$t" || continue
    c_med=$(median <<<"${MEASURED["$t clone"]:-}")
    p_med=$(median <<<"${MEASURED["$t push"]:-}")
    printf '  %-28s %9s %9s %10s %9s %10s %9s\n' "${LABEL[$t]}" "$c_med" "$p_med" \
      "$(median <<<"${SERVER_CPU["$t clone"]:-}")" "$(median <<<"${SERVER_CPU["$t push"]:-}")" \
      "$(median <<<"${CLIENT_CPU["$t clone"]:-}")" "$(median <<<"${CLIENT_CPU["$t push"]:-}")"
  done
  echo
  printf '  %-28s %9s %9s\n' "wall time ratios (medians)" "clone" "push"
  local clone_a clone_h clone_f push_a push_h push_f rc rp
  clone_a=$(median <<<"${MEASURED["atrium clone"]:-}"); push_a=$(median <<<"${MEASURED["atrium push"]:-}")
  clone_h=$(median <<<"${MEASURED["http-backend clone"]:-}"); push_h=$(median <<<"${MEASURED["http-backend push"]:-}")
  clone_f=$(median <<<"${MEASURED["file clone"]:-}"); push_f=$(median <<<"${MEASURED["file push"]:-}")
  rc=$(ratio "$clone_a" "$clone_h"); rp=$(ratio "$push_a" "$push_h")
  printf '  %-28s %9s %9s   target clone <= %sx: %s; push <= %sx%s: %s\n' "Atrium / http-backend" "$rc" "$rp" \
    "$TARGET_CLONE" "$(verdict "$rc" "$TARGET_CLONE")" "$TARGET_PUSH" \
    "$([ "${ATRIUM_GIT_SHA1:-}" = fast ] && echo ' (ATRIUM_GIT_SHA1=fast)' || echo ' (SHA-1 collision detection on)')" \
    "$(verdict "$rp" "$TARGET_PUSH")"
  printf '  %-28s %9s %9s\n' "Atrium / file:// floor" "$(ratio "$clone_a" "$clone_f")" "$(ratio "$push_a" "$push_f")"
  printf '  %-28s %9s %9s\n' "http-backend / file:// floor" "$(ratio "$clone_h" "$clone_f")" "$(ratio "$push_h" "$push_f")"
  # CPU is steadier than wall time on a shared machine: informational, no target
  printf '  %-28s %9s %9s   (server + client CPU, no target)\n' "CPU Atrium / http-backend" \
    "$(ratio "$(cpu_sum atrium clone)" "$(cpu_sum http-backend clone)")" \
    "$(ratio "$(cpu_sum atrium push)" "$(cpu_sum http-backend push)")"
  has_target atrium || echo "  (Atrium was not run: BENCH_GIT_TARGETS=\"$TARGETS\")"
  if has_target atrium; then
    echo
    echo "Atrium's JVM, RSS (ps -o rss):"
    printf '  %-44s %6s MB   (no target)\n' "idle, 5 s after start" "${MEM[idle]:--}"
    printf '  %-44s %6s MB   target <= %d MB: %s\n' "after $ATRIUM_CLONES clones of the repository" "${MEM[clones]:--}" \
      "$TARGET_RSS_MB" "$(awk -v v="${MEM[clones]:-}" -v t="$TARGET_RSS_MB" 'BEGIN { print (v == "") ? "n/a" : (v <= t) ? "PASS" : "MISS" }')"
    printf '  %-44s %6s MB   (VmHWM, no target)\n' "peak over the whole run" "${MEM[peak]:--}"
    echo "Atrium's maintenance of the warm-up repository (GET /admin/repos/:id/gc, never POSTed):"
    echo "  $MAINTENANCE"
    echo "  seconds from the end of each push to bitmaps > 0 and idle (not in any figure): $MAINTENANCE_WAITS"
  fi
  echo
  echo "every run (s):"
  for t in atrium http-backend file; do
    has_target "$t" || continue
    printf '  %-28s clone %s| push %s\n' "${LABEL[$t]}" "${MEASURED["$t clone"]:-}" "${MEASURED["$t push"]:-}"
  done
  echo "correctness (one clone per target; every push's advertised refs are checked too):"
  for t in atrium http-backend file; do
    has_target "$t" || continue
    printf '  %-28s %s\n' "${LABEL[$t]}" "${VERIFIED[$t]:-not verified}"
  done
  if has_target atrium; then
    echo "Atrium log: $(grep -cE 'SEVERE|ERROR|Exception' "$WORK_DIR/atrium.log" || true) error/exception lines," \
      "$(grep -cE 'WARN' "$WORK_DIR/atrium.log" || true) warning lines"
  fi
  if has_target http-backend; then
    echo "nginx error log: $(grep -cE '\[(error|crit|alert|emerg)\]' "$WORK_DIR/http/nginx-error.log" 2>/dev/null || true) error lines"
  fi
  echo "=========================================================================================="
}

# ------------------------------------------------------------------------------------------------ main

main() {
  local t round
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
  WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench-git.XXXXXX")"
  mkdir -p "$WORK_DIR/logs"
  LOAD_AT_START="$(load_average)"
  check_prerequisites
  prepare_source_repo
  log "source: $SOURCE_REPO ($(wc -l <"$WORK_DIR/source.refs") refs)"

  has_target file && setup_file
  has_target http-backend && setup_http_backend
  has_target atrium && setup_atrium

  for round in $(seq 0 "$RUNS"); do
    if [ "$round" = 0 ]; then log "warm-up round ..."; else log "round $round of $RUNS ..."; fi
    for t in $TARGETS; do push_run "$t" "$round"; done
    for t in $TARGETS; do clone_run "$t" "$round"; done
  done
  has_target atrium && rss_after_clones

  print_report
}

main "$@"
