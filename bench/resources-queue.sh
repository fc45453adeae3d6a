#!/usr/bin/env bash
# bench/resources-queue.sh: queue messages/s (each sent, received and acked) through the provider API in-process
# (QueueFacet, no HTTP; bench/QueueThroughput.java) on PostgreSQL (SKIP LOCKED) and on NATS JetStream, with producers
# and consumers running together; beside it `nats bench` (JetStream publish + pull consume) against the same NATS when
# the nats CLI is installed, else the same pipeline on jnats directly as the reference. Informational only. Called by
# bench/resources.sh; runs alone too.
#
#   bench/resources-queue.sh
#   BENCH_QUEUE_PRODUCERS=4 BENCH_QUEUE_CONSUMERS=4 BENCH_QUEUE_SECONDS=8 BENCH_QUEUE_BATCH=10 bench/resources-queue.sh
#   BENCH_NATS=nats://127.0.0.1:4222             # the NATS to use (the default)
#
# The database it creates is dropped and its streams deleted, also when interrupted (the streams by the Java part).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
PRODUCERS="${BENCH_QUEUE_PRODUCERS:-4}"
CONSUMERS="${BENCH_QUEUE_CONSUMERS:-4}"
SECONDS_EACH="${BENCH_QUEUE_SECONDS:-8}"
BATCH="${BENCH_QUEUE_BATCH:-10}"
BODY_BYTES="${BENCH_QUEUE_BODY_BYTES:-128}"
NATS_URL="${BENCH_NATS:-nats://127.0.0.1:4222}"

# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/atrium-bench-queue.XXXXXX")"
command -v java >/dev/null || die "java is required"
command -v psql >/dev/null || ensure_apt_package psql postgresql-client

log "building the classpath of the queue providers (mvn, offline when it can) ..."
(cd "$ROOT" && mvn -B -q -o -DskipTests package dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/classpath.txt \
  -pl bundles/resource.queue,bundles/resource.queue.nats -am >"$WORK_DIR/mvn.log" 2>&1 \
  || mvn -B -q -DskipTests package dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/classpath.txt \
  -pl bundles/resource.queue,bundles/resource.queue.nats -am >>"$WORK_DIR/mvn.log" 2>&1) || die "mvn failed (see $WORK_DIR/mvn.log)"
CP="$ROOT/bundles/resource.queue/target/classes:$ROOT/bundles/resource.queue.nats/target/classes"
CP+=":$(cat "$ROOT/bundles/resource.queue/target/classpath.txt"):$(cat "$ROOT/bundles/resource.queue.nats/target/classpath.txt")"

create_database bench_queue
db=$CREATED_DB
log "in-process: $PRODUCERS producers + $CONSUMERS consumers (batches of $BATCH), ${SECONDS_EACH} s per backend, ${BODY_BYTES}-byte bodies ..."
java -cp "$CP" "$BENCH_DIR/QueueThroughput.java" "$NATS_URL" "jdbc:postgresql://$PG_HOST:$PG_PORT/$db?user=$PG_USER" \
  "$PRODUCERS" "$CONSUMERS" "$SECONDS_EACH" "$BATCH" "$BODY_BYTES" >"$WORK_DIR/queue.out" 2>"$WORK_DIR/queue.err" \
  || { tail -n 30 "$WORK_DIR/queue.err" >&2; die "the in-process queue bench failed"; }
read -r _ _ _ pg_sent _ pg_acked < <(grep '^queue postgres ' "$WORK_DIR/queue.out")
read -r _ _ _ nats_sent _ nats_acked < <(grep '^queue nats ' "$WORK_DIR/queue.out")
read -r _ _ _ ref_sent _ ref_acked < <(grep '^queue jnats ' "$WORK_DIR/queue.out")
ref_name="jnats directly (publish, pull fetch, ack)"

if command -v nats >/dev/null; then
  log "nats bench: JetStream publish and pull consume, $PRODUCERS/$CONSUMERS clients ..."
  subject="atrium-bench-cli.$$"
  if out=$(nats -s "$NATS_URL" bench "$subject" --js --pub "$PRODUCERS" --sub "$CONSUMERS" --pull --msgs 100000 --size "$BODY_BYTES" --purge 2>&1); then
    ref_acked=$(echo "$out" | awk '/^Sub stats:/ {gsub(",", "", $3); printf "%.0f", $3}')
    ref_sent=$(echo "$out" | awk '/^Pub stats:/ {gsub(",", "", $3); printf "%.0f", $3}')
    ref_name="nats bench --js --pull"
  else
    log "nats bench failed; keeping the jnats reference: $(echo "$out" | tail -n 2)"
  fi
fi

printf '\nqueue: messages/s through QueueFacet in-process (%s producers, %s consumers, batch %s, %s-byte bodies)\n' \
  "$PRODUCERS" "$CONSUMERS" "$BATCH" "$BODY_BYTES"
printf '  %-44s %12s %22s\n' "path" "sent/s" "received+acked/s"
printf '  %-44s %12s %22s\n' "PostgreSQL (SKIP LOCKED)" "$pg_sent" "$pg_acked" "NATS JetStream (provider)" "$nats_sent" "$nats_acked" \
  "$ref_name" "$ref_sent" "$ref_acked"
