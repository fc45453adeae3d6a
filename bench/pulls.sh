#!/usr/bin/env bash
# bench/pulls.sh: pull requests on the 20,000-commit benchmark repository (bench/git/gen-repo.py, shared with
# bench/git.sh's cache). A pull request of 50 commits touching 200 files, on a base that moved 20 commits since the
# head left it: `GET …/conflicts` (the three-way merge check, uncached: every run has a new head) and
# `POST …/merge` (strategy merge) p50/p99, beside real git on the same repository: `git merge-tree --write-tree`
# (git's in-memory merge, the check's floor) and `git merge --no-ff` in a work tree. Then `GET …/diff` of a pull
# request changing 1,000 files, p50/p99, JSON and `?format=patch`, beside `git diff base...head`.
# Targets (issue 35): merge <= 2x `git merge`; diff p99 <= 500 ms. Informational only: it never gates CI.
#
#   bench/pulls.sh                                       # needs launcher/target/atrium.jar + cli jar
#   BENCH_PULLS_RUNS=5 BENCH_GIT_COMMITS=2000 BENCH_GIT_MIB=10 bench/pulls.sh   # a quick run
#   BENCH_KEEP=1 bench/pulls.sh                          # keep the temp dir (logs, work tree)
#
# Everything binds to 127.0.0.1; every process started is stopped and the database dropped on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
# shellcheck source=lib/common.sh
. "$BENCH_DIR/lib/common.sh"

COMMITS="${BENCH_GIT_COMMITS:-20000}"
MIB="${BENCH_GIT_MIB:-100}"
CACHE_DIR="${BENCH_GIT_CACHE:-$BENCH_DIR/.cache/git}"
GENERATOR="$BENCH_DIR/git/gen-repo.py"
RUNS="${BENCH_PULLS_RUNS:-20}"
PR_COMMITS=50
PR_FILES=200
BASE_AHEAD=20
DIFF_FILES=1000
USER_NAME=benchpulls
TARGET_MERGE_X=2.0
TARGET_DIFF_P99_MS=500

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench
export GIT_COMMITTER_EMAIL=bench@example.com

WORK_DIR=$(mktemp -d /tmp/bench-pulls.XXXXXX)

# p PERCENT: the nearest-rank percentile of the numbers on stdin (p99 of 20 runs is the slowest)
p() { sort -g | awk -v q="$1" '{a[NR]=$1} END { if (NR == 0) { print 0; exit } i = int(q / 100 * NR); if (i < q / 100 * NR) i++; if (i < 1) i = 1; print a[i] }'; }
ms() { awk '{ printf "%d\n", $1 * 1000 + 0.5 }'; }
# timed CMD...: runs it, prints its wall time in seconds
timed() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'; }

# ------------------------------------------------------------------------------------------ repository

key="c${COMMITS}-m${MIB}-$(sha1sum "$GENERATOR" | cut -c1-12)"
SOURCE="$CACHE_DIR/$key.git"
if [ ! -f "$SOURCE/bench-complete" ]; then
  log "generating the benchmark repository ($COMMITS commits, ~$MIB MiB; bench/git.sh shares it) ..."
  mkdir -p "$CACHE_DIR"
  tmp="$CACHE_DIR/.tmp-$key-$$.git"
  rm -rf "$tmp"
  git init -q --bare -b main "$tmp"
  python3 "$GENERATOR" "$COMMITS" "$MIB" | git -C "$tmp" fast-import --quiet
  git -C "$tmp" repack -a -d -f -q
  touch "$tmp/bench-complete"
  rm -rf "$SOURCE"
  mv "$tmp" "$SOURCE"
fi
log "repository: $SOURCE"

WORK="$WORK_DIR/work"
git clone -q --no-local "$SOURCE" "$WORK"
cd "$WORK"
M0=$(git rev-parse main)
FORK="main~$BASE_AHEAD"
# files the head changes: present at the fork point and at main, untouched by the base since (a clean merge)
comm -12 <(git ls-tree -r --name-only "$FORK" | sort) <(git ls-tree -r --name-only main | sort) \
  | grep -vxF -f <(git diff --name-only "$FORK" main) | head -n "$PR_FILES" >"$WORK_DIR/pr-files"
usable=$(wc -l <"$WORK_DIR/pr-files")
if [ "$usable" -lt "$PR_FILES" ]; then
  log "only $usable files are usable for the head (a small repository): the head changes those"
  PR_FILES=$usable
fi
git checkout -q -b pr "$FORK"
per=$(( (PR_FILES + PR_COMMITS - 1) / PR_COMMITS ))
for c in $(seq 1 "$PR_COMMITS"); do
  sed -n "$(( (c - 1) * per + 1 )),$(( c * per ))p" "$WORK_DIR/pr-files" | while read -r f; do
    echo "pull request change $c" >>"$f"
  done
  git commit -q --allow-empty -am "pr: change $c"
done
P0=$(git rev-parse pr)
git checkout -q -b big main
# every file of main changed (the generated tree has a few hundred), and new ones up to DIFF_FILES
git ls-tree -r --name-only main | head -n "$DIFF_FILES" | while read -r f; do echo "wide change" >>"$f"; done
existing=$(git ls-tree -r --name-only main | wc -l)
mkdir -p wide
for k in $(seq "$(( existing + 1 ))" "$DIFF_FILES"); do
  printf 'a new file %d\nwith two lines\n' "$k" >"wide/file-$k.txt"
done
git add -A
git commit -q -m "big: $DIFF_FILES files"
[ "$(git diff --name-only main big | wc -l)" -eq "$DIFF_FILES" ] || die "the repository has fewer than $DIFF_FILES files"
git checkout -q main
log "head: $PR_COMMITS commits over $PR_FILES files from main~$BASE_AHEAD; wide diff: $DIFF_FILES files ($existing changed, the rest new)"

# ---------------------------------------------------------------------------------------------- Atrium

start_atrium
log "Atrium healthy in $ATRIUM_STARTED_MS ms on port $ATRIUM_PORT"
TOKEN=$(atrium_token "$USER_NAME")
API="http://127.0.0.1:$ATRIUM_PORT"
SPACE=$(curl -sf -H "Authorization: Bearer $TOKEN" "$API/api/spaces/me" | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
REPO=$(curl -sf -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  --data '{"name":"bench-pulls","visibility":"public"}' "$API/api/spaces/$SPACE/repos" \
  | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
[ -n "$REPO" ] || die "could not create the repository"
REMOTE="$API/git/$USER_NAME/bench-pulls.git"
AUTH="http.extraHeader=Authorization: Basic $(printf '%s:%s' "$USER_NAME" "$TOKEN" | base64 -w0)"
log "pushing the repository to Atrium ..."
started=$(now_ms)
git -c "$AUTH" push -q "$REMOTE" main pr big
log "  pushed in $(( ($(now_ms) - started) / 1000 )) s; waiting for Atrium's maintenance to settle ..."
OPERATOR=$(cat "$ATRIUM_DATA/operator.token")
deadline=$(( $(now_ms) + 900000 ))
until curl -s -H "Authorization: Bearer $OPERATOR" "$API/admin/repos/$REPO/gc" | grep -q '"state":"idle"' \
  && curl -s -H "Authorization: Bearer $OPERATOR" "$API/admin/repos/$REPO/gc" | grep -q '"bitmaps":[1-9]'; do
  [ "$(now_ms)" -lt "$deadline" ] || die "maintenance did not finish"
  sleep 1
done

api() { curl -s -o "$WORK_DIR/answer" -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $TOKEN" "$@"; }

: >"$WORK_DIR/t-check"; : >"$WORK_DIR/t-merge"; : >"$WORK_DIR/t-git-merge-tree"; : >"$WORK_DIR/t-git-merge"
for i in $(seq 1 "$RUNS"); do
  # every run: main back where it was, a head of its own (so no merge check is cached)
  git checkout -q -B "pr-$i" "$P0"
  git commit -q --allow-empty -m "run $i"
  git -c "$AUTH" push -q -f "$REMOTE" "$M0:refs/heads/main" "pr-$i"
  read -r code _ < <(api -H 'Content-Type: application/json' \
    --data "{\"title\":\"run $i\",\"head\":\"pr-$i\",\"base\":\"main\"}" "$API/api/repos/$REPO/pulls")
  [ "$code" = 201 ] || die "opening a pull request answered $code: $(head -c 300 "$WORK_DIR/answer")"
  n=$(grep -o '"number":[0-9]*' "$WORK_DIR/answer" | head -n 1 | cut -d: -f2)
  sleep 1 # the background check of the new pull request runs now; it must not overlap the timed one
  read -r code t < <(api "$API/api/repos/$REPO/pulls/$n/conflicts")
  [ "$code" = 200 ] || die "conflicts answered $code"
  echo "$t" >>"$WORK_DIR/t-check"
  read -r code t < <(api -H 'Content-Type: application/json' --data '{"strategy":"merge"}' \
    "$API/api/repos/$REPO/pulls/$n/merge")
  [ "$code" = 200 ] || die "merge answered $code: $(head -c 300 "$WORK_DIR/answer")"
  echo "$t" >>"$WORK_DIR/t-merge"
  # the floors, on the same repository and commits
  timed git merge-tree --write-tree "$M0" "pr-$i" >>"$WORK_DIR/t-git-merge-tree"
  git checkout -q -f main
  git reset -q --hard "$M0"
  timed git merge -q --no-ff -m "run $i" "pr-$i" >>"$WORK_DIR/t-git-merge"
  git reset -q --hard "$M0"
done
# the cached check (the same pair again), for what a second reader gets
read -r _ t_cached < <(api "$API/api/repos/$REPO/pulls/1/conflicts")

git -c "$AUTH" push -q -f "$REMOTE" "$M0:refs/heads/main"
read -r code _ < <(api -H 'Content-Type: application/json' \
  --data '{"title":"wide","head":"big","base":"main"}' "$API/api/repos/$REPO/pulls")
[ "$code" = 201 ] || die "opening the wide pull request answered $code"
D=$(grep -o '"number":[0-9]*' "$WORK_DIR/answer" | head -n 1 | cut -d: -f2)
: >"$WORK_DIR/t-diff"; : >"$WORK_DIR/t-patch"; : >"$WORK_DIR/t-git-diff"
api "$API/api/repos/$REPO/pulls/$D/diff" >/dev/null # warm-up
for i in $(seq 1 "$RUNS"); do
  read -r code t < <(api "$API/api/repos/$REPO/pulls/$D/diff")
  [ "$code" = 200 ] || die "diff answered $code"
  echo "$t" >>"$WORK_DIR/t-diff"
  read -r code t < <(api "$API/api/repos/$REPO/pulls/$D/diff?format=patch")
  echo "$t" >>"$WORK_DIR/t-patch"
  timed git diff "$M0...big" >>"$WORK_DIR/t-git-diff"
done
api "$API/api/repos/$REPO/pulls/$D/diff" >/dev/null
files=$(grep -o '"path":' "$WORK_DIR/answer" | wc -l || true)

# ---------------------------------------------------------------------------------------------- report

row() { # LABEL FILE
  printf '  %-44s p50 %6d ms   p99 %6d ms\n' "$1" "$(ms <"$2" | p 50)" "$(ms <"$2" | p 99)"
}
echo
echo "==== bench/pulls.sh: $COMMITS commits (~$MIB MiB), $RUNS runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) ===="
echo "pull request: $PR_COMMITS commits over $PR_FILES files; base $BASE_AHEAD commits ahead of the fork point"
row "Atrium GET conflicts (uncached)" "$WORK_DIR/t-check"
row "  floor: git merge-tree --write-tree" "$WORK_DIR/t-git-merge-tree"
printf '  %-44s %d ms\n' "Atrium GET conflicts (cached pair)" "$(echo "$t_cached" | ms)"
row "Atrium POST merge (strategy merge)" "$WORK_DIR/t-merge"
row "  floor: git merge --no-ff (work tree)" "$WORK_DIR/t-git-merge"
m50=$(ms <"$WORK_DIR/t-merge" | p 50); g50=$(ms <"$WORK_DIR/t-git-merge" | p 50)
m99=$(ms <"$WORK_DIR/t-merge" | p 99); g99=$(ms <"$WORK_DIR/t-git-merge" | p 99)
awk -v a="$m50" -v b="$g50" -v c="$m99" -v d="$g99" -v t="$TARGET_MERGE_X" 'BEGIN {
  printf "  merge / git merge: p50 %.2fx, p99 %.2fx (target <= %.1fx: %s)\n", a / b, c / d, t, (a / b <= t ? "met" : "NOT met") }'
echo "wide diff: $DIFF_FILES files ($existing changed, the rest added; $files in the JSON answer)"
row "Atrium GET diff (JSON, patches to 1 MiB)" "$WORK_DIR/t-diff"
row "Atrium GET diff?format=patch (streamed)" "$WORK_DIR/t-patch"
row "  floor: git diff base...head" "$WORK_DIR/t-git-diff"
d99=$(ms <"$WORK_DIR/t-diff" | p 99)
echo "  diff p99 $d99 ms (target <= $TARGET_DIFF_P99_MS ms: $([ "$d99" -le "$TARGET_DIFF_P99_MS" ] && echo met || echo 'NOT met'))"
