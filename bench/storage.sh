#!/usr/bin/env bash
# bench/storage.sh: upload and download MB/s of one file (1 GiB by default) through Atrium's workspace storage API
# (PUT /api/spaces/:id/storage/:fileId/content, GET .../storage/download/:fileId), beside the raw disk
# (dd ... conv=fsync of the same file into the same temp dir) and beside nginx serving the same file statically (and,
# for comparison, nginx with sendfile off, copying through user space as a servlet container must), in one run; prints the medians and the ratios next to the targets (download >= 80% of nginx, upload >= 70% of the raw
# disk write). Informational only: it never gates CI. See bench/README.md.
#
#   bench/storage.sh                          # needs launcher/target/atrium.jar + cli jar; installs nginx with apt-get if missing
#   BENCH_STORAGE_MIB=256 bench/storage.sh    # a quick run on a smaller file
#   BENCH_KEEP=1 bench/storage.sh             # keep the temp dir (logs, configs, the file)
#
# Everything binds to 127.0.0.1. Every process it starts is stopped (SIGTERM, then waited for), the database it
# creates is dropped and its temp dir removed, also when interrupted (trap on EXIT/INT/TERM).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
SERVER_JAR="$ROOT/launcher/target/atrium.jar"
CLI_JAR="$ROOT/cli/target/atrium-cli.jar"

MIB="${BENCH_STORAGE_MIB:-1024}"
RUNS="${BENCH_STORAGE_RUNS:-3}"
USER_NAME="${BENCH_STORAGE_USER:-benchstorage}"
TARGET_DOWNLOAD=0.80
TARGET_UPLOAD=0.70

# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

mbs() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1000000}'; }   # curl's bytes/s as MB/s

# ------------------------------------------------------------------------------------------------ setup

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench-storage.XXXXXX")"
for c in curl java dd awk sha256sum; do command -v "$c" >/dev/null || die "$c is required"; done
[ -f "$SERVER_JAR" ] && [ -f "$CLI_JAR" ] || die "build the server first: (cd $ROOT && mvn -B -q -DskipTests package)"
ensure_apt_package nginx nginx
command -v psql >/dev/null || ensure_apt_package psql postgresql-client

FILE="$WORK_DIR/www/file.bin"
mkdir -p "$WORK_DIR/www" "$WORK_DIR/nginx/tmp"
log "writing a ${MIB} MiB file of random bytes ..."
head -c "$(( MIB * 1024 * 1024 ))" /dev/urandom >"$FILE"
SIZE=$(stat -c %s "$FILE")
SHA=$(sha256sum "$FILE" | cut -d' ' -f1)

# nginx: the same file, statically, as this user
NGINX_PORT=$(free_port)
NGINX_COPY_PORT=$(free_port)
user_line=""; [ "$(id -u)" = 0 ] && user_line="user root root;"
cat >"$WORK_DIR/nginx/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon off;
pid $WORK_DIR/nginx/nginx.pid;
error_log $WORK_DIR/nginx/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $WORK_DIR/nginx/tmp/body;
  proxy_temp_path $WORK_DIR/nginx/tmp/proxy;
  fastcgi_temp_path $WORK_DIR/nginx/tmp/fastcgi;
  uwsgi_temp_path $WORK_DIR/nginx/tmp/uwsgi;
  scgi_temp_path $WORK_DIR/nginx/tmp/scgi;
  server { listen 127.0.0.1:$NGINX_PORT; root $WORK_DIR/www; }
  # for comparison only: nginx copying through user space as a servlet container must (no sendfile)
  server { listen 127.0.0.1:$NGINX_COPY_PORT; root $WORK_DIR/www; sendfile off; output_buffers 2 256k; }
}
EOF
nginx -e "$WORK_DIR/nginx/error.log" -p "$WORK_DIR/nginx" -c "$WORK_DIR/nginx/nginx.conf" >>"$WORK_DIR/nginx/out.log" 2>&1 </dev/null &
STARTED_PIDS+=("$!")
deadline=$(( $(now_ms) + 10000 ))
until port_in_use "$NGINX_PORT"; do
  [ "$(now_ms)" -lt "$deadline" ] || die "nginx did not listen within 10 s ($(cat "$WORK_DIR/nginx/error.log" 2>/dev/null))"
  sleep 0.05
done
log "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///') serving the file on http://127.0.0.1:$NGINX_PORT/file.bin"

# Atrium, on a fresh database of the machine's PostgreSQL when there is one, else embedded
start_atrium
TOKEN=$(atrium_token "$USER_NAME")
API="http://127.0.0.1:$ATRIUM_PORT/api/spaces/$USER_NAME/storage"
AUTH="Authorization: Bearer $TOKEN"
FILE_ID=$(curl -sf -H "$AUTH" -H 'Content-Type: application/json' -d '{"path":"bench/file.bin"}' "$API/files" \
  | grep -o '"id":"[^"]*"' | head -n 1 | sed 's/"id":"\(.*\)"/\1/')
[ -n "$FILE_ID" ] || die "POST $API/files made no file"
log "Atrium on http://127.0.0.1:$ATRIUM_PORT (healthy after $ATRIUM_STARTED_MS ms), file $FILE_ID"

# --------------------------------------------------------------------------------------------- measure

disk=""; nginx_down=""; nginx_copy=""; api_up=""; api_down=""
log "warm-up: one upload and one download of each kind, not counted"
cat "$FILE" >/dev/null
curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/file.bin"
curl -s -o /dev/null "http://127.0.0.1:$NGINX_COPY_PORT/file.bin"
curl -sf -o /dev/null -X PUT -H "$AUTH" -H 'Content-Type: application/octet-stream' -T "$FILE" "$API/$FILE_ID/content"
curl -sf -o /dev/null -H "$AUTH" "$API/download/$FILE_ID"
for run in $(seq 1 "$RUNS"); do
  t0=$(now_ms)
  dd if="$FILE" of="$WORK_DIR/dd.out" bs=1M conv=fsync status=none
  t1=$(now_ms)
  rm -f "$WORK_DIR/dd.out"
  disk+=" $(awk -v b="$SIZE" -v ms="$(( t1 - t0 ))" 'BEGIN {printf "%.0f", b / 1000 / ms}')"
  nginx_down+=" $(mbs "$(curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$NGINX_PORT/file.bin")")"
  nginx_copy+=" $(mbs "$(curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$NGINX_COPY_PORT/file.bin")")"
  out=$(curl -s -o "$WORK_DIR/put.json" -w '%{http_code} %{speed_upload}' -X PUT -H "$AUTH" -H 'Content-Type: application/octet-stream' \
    -T "$FILE" "$API/$FILE_ID/content")
  [ "${out%% *}" = 200 ] || die "upload answered ${out%% *}: $(head -c 300 "$WORK_DIR/put.json")"
  grep -q "$SHA" "$WORK_DIR/put.json" || die "the upload's SHA-256 is not the file's"
  api_up+=" $(mbs "${out##* }")"
  out=$(curl -s -o /dev/null -w '%{http_code} %{speed_download} %{size_download}' -H "$AUTH" "$API/download/$FILE_ID")
  set -- $out
  [ "$1" = 200 ] && [ "$3" = "$SIZE" ] || die "download answered $1 with $3 bytes"
  api_down+=" $(mbs "$2")"
  log "run $run: disk write$(echo "$disk" | awk '{print " " $NF}') MB/s, nginx$(echo "$nginx_down" | awk '{print " " $NF}') MB/s," \
    "API upload$(echo "$api_up" | awk '{print " " $NF}') MB/s, API download$(echo "$api_down" | awk '{print " " $NF}') MB/s"
done

m_disk=$(echo "$disk" | median); m_nginx=$(echo "$nginx_down" | median); m_copy=$(echo "$nginx_copy" | median)
m_up=$(echo "$api_up" | median); m_down=$(echo "$api_down" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN {print (r >= t) ? "meets" : "MISSES"}'; }
r_up=$(ratio "$m_up" "$m_disk"); r_down=$(ratio "$m_down" "$m_nginx")
echo
echo "storage bench: ${MIB} MiB file, median of $RUNS runs, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-44s %8s MB/s\n' "raw disk write (dd bs=1M conv=fsync)" "$m_disk" "nginx static download" "$m_nginx" \
  "nginx static download, sendfile off" "$m_copy" \
  "Atrium upload (PUT .../:fileId/content)" "$m_up" "Atrium download (GET .../download/:fileId)" "$m_down"
echo "  upload / raw disk:   $r_up (target >= $TARGET_UPLOAD: $(verdict "$r_up" "$TARGET_UPLOAD"))"
echo "  download / nginx:    $r_down (target >= $TARGET_DOWNLOAD: $(verdict "$r_down" "$TARGET_DOWNLOAD"))"
echo "  download / nginx without sendfile: $(ratio "$m_down" "$m_copy") (for comparison)"
echo "  all runs: disk [$disk ], nginx [$nginx_down ], nginx no sendfile [$nginx_copy ], upload [$api_up ], download [$api_down ]"
