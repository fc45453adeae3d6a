#!/usr/bin/env bash
# bench/resources-vectorize.sh: vectorize top-10 query latency (p50/p99) and recall@10 on 100,000 random 384-dimension
# vectors (cosine), through the provider in-process (VectorFacet, no HTTP): the Lucene HNSW index (index: hnsw) at
# several query-time oversampling factors (ef = 10 x factor) against the true top-10 by brute force, and the exact index
# on PostgreSQL (index: exact) for comparison. Target: recall@10 >= 0.95 with p99 <= 20 ms (HNSW).
# The HNSW index is the provider's default: the graph walked on int8 vectors, the best candidates scored again on the
# float vectors (hnswQuantized, docs/decisions.md), with the Vector API's SIMD kernels when the JVM has the module; a
# segment whose walk would visit so much of it that scoring every int8 vector in file order is cheaper is scanned
# instead (hnswFlatScan). Each hnsw line ends with how its timed queries searched the segments: walked or scanned.
# The bench is bundles/resource.vectorize/src/test/.../VectorizeBench.java, run by surefire (not part of the tests).
#
#   bench/resources-vectorize.sh
#   BENCH_VEC_N=20000 BENCH_VEC_QUERIES=100 BENCH_VEC_MAXCONN=16 BENCH_VEC_BEAMWIDTH=100 BENCH_VEC_OVERSAMPLE=5,10 bench/resources-vectorize.sh
#   BENCH_VEC_BATCH=1000 bench/resources-vectorize.sh         # vectors per upsert while loading (each upsert commits)
#   BENCH_VEC_EXACT_QUERIES=0 bench/resources-vectorize.sh    # skip the PostgreSQL exact index
#   BENCH_VEC_MERGE_WAIT=0 bench/resources-vectorize.sh       # measure the segments the upserts left, not the background merge's one
#   BENCH_VEC_INDEX_DIR=/tmp/vbench bench/resources-vectorize.sh   # keep the HNSW index there (reused, not loaded, if there)
#   BENCH_VEC_JAVA_OPTS= BENCH_VEC_INDEX_DIR=/tmp/vbench bench/resources-vectorize.sh   # the same index, Lucene's scalar
#                                                              # distances (the JVM without the Vector API module)
#   BENCH_VEC_FLAT_SCAN=false bench/resources-vectorize.sh    # always walk the graph (hnswFlatScan off)
#   BENCH_VEC_CLUSTERS=1000 BENCH_VEC_INDEX_DIR=/tmp/vbench-c bench/resources-vectorize.sh   # clustered vectors (a
#                                                              # Gaussian mixture; BENCH_VEC_CLUSTER_SPREAD, default 0.5)
#
# The JVM gets --add-modules jdk.incubator.vector (BENCH_VEC_JAVA_OPTS), as the server does: distances are SIMD. The
# bench prints which scorer computed them and what one distance costs on the index's mapped vectors.
#
# Needs PostgreSQL at 127.0.0.1:5432 (ATRIUM_TEST_PG overrides) with trust auth for postgres; the database and the
# Lucene files it creates are removed at the end. Informational only: it never gates CI.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mvn -B -q -pl bundles/resource.vectorize -am test -Dtest=VectorizeBench -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.n="${BENCH_VEC_N:-100000}" -Dbench.dims="${BENCH_VEC_DIMS:-384}" -Dbench.queries="${BENCH_VEC_QUERIES:-200}" \
  -Dbench.maxConn="${BENCH_VEC_MAXCONN:-32}" -Dbench.beamWidth="${BENCH_VEC_BEAMWIDTH:-200}" \
  -Dbench.batch="${BENCH_VEC_BATCH:-10000}" -Dbench.oversample="${BENCH_VEC_OVERSAMPLE:-1,2,5,10,20,50,100,150}" -Dbench.exactQueries="${BENCH_VEC_EXACT_QUERIES:-20}" \
  -Dbench.mergeWaitSeconds="${BENCH_VEC_MERGE_WAIT:-3600}" -Dbench.indexDir="${BENCH_VEC_INDEX_DIR:-}" \
  -Dbench.distances="${BENCH_VEC_DISTANCES:-1000000}" -Dbench.flatScan="${BENCH_VEC_FLAT_SCAN:-true}" \
  -Dbench.clusters="${BENCH_VEC_CLUSTERS:-0}" -Dbench.clusterSpread="${BENCH_VEC_CLUSTER_SPREAD:-0.5}" \
  -DargLine="-Xmx2g ${BENCH_VEC_JAVA_OPTS---add-modules jdk.incubator.vector}" 2>&1 \
  | grep -E 'vectorize bench|^hnsw|^exact|^distance|recall|ERROR|FAIL|Tests run' || true
