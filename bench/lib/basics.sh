# Sourced by the bench scripts (bench/lib/common.sh, run.sh, git.sh): logging, free ports and Debian packages.
# ensure_apt_package writes its log to $WORK_DIR/apt.log.

log() { echo "bench: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
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
