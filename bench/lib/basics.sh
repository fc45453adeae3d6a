# Sourced by the bench scripts (bench/lib/common.sh, run.sh, git.sh): logging, free ports, Debian packages and a
# user's default space.
# ensure_apt_package writes its log to $WORK_DIR/apt.log.

log() { echo "bench: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Polling a start without starting processes: a poll every 20 ms that forked curl, date and sleep took about 1.3 s of
# CPU from a two-core machine's cold start (the server's start is CPU-bound), and that showed in the figure.
# set_now_ms: NOW_MS, from the shell's own clock.
set_now_ms() { local t=${EPOCHREALTIME/[.,]/}; NOW_MS=$(( t / 1000 )); }
# nap SECONDS: sleeps without a sleep process (a read that times out on a pipe nobody writes).
nap() {
  [ -n "${NAP_FD:-}" ] || exec {NAP_FD}<> <(:)
  read -r -t "$1" -u "$NAP_FD" _ || true
}
# healthz_code PORT: HEALTHZ_CODE is the status of GET /healthz on 127.0.0.1:PORT, 000 when nothing answers (within 2 s),
# asked by the shell itself over /dev/tcp.
healthz_code() {
  local fd line
  HEALTHZ_CODE=000
  { exec {fd}<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 0
  printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&"$fd" 2>/dev/null \
    && IFS= read -r -t 2 -u "$fd" line && [[ $line =~ ^HTTP/1\.[01]\ ([0-9]{3}) ]] && HEALTHZ_CODE=${BASH_REMATCH[1]}
  exec {fd}>&-
  return 0
}
free_port() {
  local _ p
  for _ in $(seq 1 100); do
    p=$(( 20000 + RANDOM % 30000 ))
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  die "no free port found"
}
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}
# ensure_apt_package COMMAND PACKAGE: installs PACKAGE with apt-get unless COMMAND is already there.
ensure_apt_package() {
  local cmd="$1" pkg="$2"
  command -v "$cmd" >/dev/null && return 0
  log "installing $pkg (apt-get) ..."
  export DEBIAN_FRONTEND=noninteractive
  if ! as_root apt-get install -y -qq "$pkg" >"$WORK_DIR/apt.log" 2>&1; then
    as_root apt-get update -qq >>"$WORK_DIR/apt.log" 2>&1 || true
    as_root apt-get install -y -qq "$pkg" >>"$WORK_DIR/apt.log" 2>&1 \
      || die "apt-get install $pkg failed (see $WORK_DIR/apt.log); install it by hand: apt-get install $pkg"
  fi
  command -v "$cmd" >/dev/null || die "$pkg installed but $cmd is not there"
}

# space_id_of PORT TOKEN: prints the id of the token owner's default space (GET /api/spaces/me).
space_id_of() {
  curl -sf --max-time 10 -H "Authorization: Bearer $2" "http://127.0.0.1:$1/api/spaces/me" \
    | grep -o '"id":"[^"]*"' | head -n 1 | sed 's/"id":"\(.*\)"/\1/'
}
