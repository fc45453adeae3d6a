#!/usr/bin/env bash
# bench/pg-upgrade.sh: how long the embedded database's upgrade from PostgreSQL 14 to 18 takes (ClusterUpgrade: the old
# cluster copied into a new one at the first start of a release on 18), for BENCH_PG_ROWS rows (default 1,000,000) of
# about BENCH_PG_ROW_BYTES bytes (200) and as many rows referencing them. Prints the database's size, the upgrade's
# time and its rows per second. Runs real 14 and 18 servers from the database bundle's binaries; needs nothing else.
# The bench is bundles/database/src/test/.../ClusterUpgradeBench.java, run by surefire (not part of the tests).
#   bench/pg-upgrade.sh
#   BENCH_PG_ROWS=100000 bench/pg-upgrade.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mvn -B -q -pl bundles/database -am test -Dtest=ClusterUpgradeBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.rows="${BENCH_PG_ROWS:-1000000}" -Dbench.rowBytes="${BENCH_PG_ROW_BYTES:-200}" 2>&1 \
  | grep -E 'pg-upgrade bench|ERROR|FAIL|Tests run' || true
