#!/usr/bin/env python3
"""bench/git/gen-repo.py COMMITS MIB: writes a `git fast-import` stream to stdout.

The history is deterministic (fixed seed, fixed dates, fixed author) and shaped like a growing source tree:
text files of pseudo-random base64 lines in nested directories; every commit writes two chunks of new lines,
each into a new file or inserted into a live one, and now and then deletes a file that grew long. Those lines
are incompressible enough (6 bits of entropy per character) and the older versions of a file pack as small
deltas of the newer ones, so the packed repository ends up close to MIB mebibytes. Refs: `main`, two release
branches that stop early, a `side` branch merged back into main every 1000 commits, and an annotated tag
every 500 commits.

Only Python's standard library; `random.Random(seed)` and its `randrange`/`randbytes` give the same sequence
on every CPython >= 3.9.
"""
import base64
import random
import sys

SEED = 20260401
EPOCH = 1_700_000_000          # first commit's date; each later one is 10 minutes after the previous
LINE_CHARS = 64                # characters per line, newline excluded
RETIRE_CHUNKS = 12             # a file is deleted once it is that many chunks long
DIRS = ["src/main/java/dev/bench/" + d for d in ("core", "http", "store", "util", "api", "auth", "git")] \
    + ["src/test/java/dev/bench/" + d for d in ("core", "http", "store")] \
    + ["docs", "docs/guide", "web/assets", "web/app", "tools", "scripts"]
ZLIB_RATIO = 0.77              # what zlib makes of base64 text (measured); sizes the per-commit budget
OVERHEAD_PER_COMMIT = 1000     # packed bytes per commit besides blob data: commit, trees, index entry


def main():
    commits = int(sys.argv[1])
    mib = float(sys.argv[2])
    rnd = random.Random(SEED)
    out = sys.stdout.buffer
    budget = max(4 * (LINE_CHARS + 1), int((mib * 1024 * 1024 / commits - OVERHEAD_PER_COMMIT) / ZLIB_RATIO))
    chunk = budget // 2

    def lines(nbytes):
        n = max(1, nbytes // (LINE_CHARS + 1))
        raw = base64.b64encode(rnd.randbytes(n * LINE_CHARS * 3 // 4))
        return [raw[i:i + LINE_CHARS] for i in range(0, len(raw), LINE_CHARS)]

    files = {}                  # path -> list of lines (bytes, without newline)
    names = 0
    mark = 0
    side_base = None            # mark of the commit the side branch forked from
    side_tip = None

    def new_path():
        nonlocal names
        names += 1
        d = DIRS[rnd.randrange(len(DIRS))]
        ext = ".java" if d.startswith("src") else (".md" if d.startswith("docs") else ".txt")
        return f"{d}/file{names:05d}{ext}"

    def emit_commit(branch, n, changes, parents, message):
        nonlocal mark
        mark += 1
        when = EPOCH + n * 600
        msg = message.encode()
        parts = [f"commit refs/heads/{branch}\nmark :{mark}\n".encode(),
                 f"author Bench Author <author@atrium.invalid> {when} +0000\n".encode(),
                 f"committer Bench Committer <committer@atrium.invalid> {when} +0000\n".encode(),
                 f"data {len(msg)}\n".encode(), msg, b"\n"]
        if parents:
            parts.append(f"from :{parents[0]}\n".encode())
            for p in parents[1:]:
                parts.append(f"merge :{p}\n".encode())
        for path in changes:
            if path in files:
                body = b"\n".join(files[path]) + b"\n"
                parts.append(f"M 100644 inline {path}\ndata {len(body)}\n".encode())
                parts.append(body)
                parts.append(b"\n")
            else:
                parts.append(f"D {path}\n".encode())
        parts.append(b"\n")
        out.write(b"".join(parts))
        return mark

    def edit(n):
        """Writes about `budget` new bytes into the tree, in two chunks; returns the paths touched.

        A chunk goes into a new file, or is inserted at a random line of a live one. Files only grow (the
        older version is then a plain subset of the newer, so git stores it as a tiny delta) and are deleted
        once past RETIRE_CHUNKS chunks (fewer versions than git's delta depth of 50): the packed size is close
        to the random bytes written, whatever the scale.
        """
        touched = []
        for _ in range(2):
            live = [p for p in files if p not in touched]
            if len(live) < 40 + n // 50:
                path = new_path()
                files[path] = lines(chunk)
                touched.append(path)
                continue
            path = live[rnd.randrange(len(live))]
            body = files[path]
            if len(body) * (LINE_CHARS + 1) > RETIRE_CHUNKS * chunk:
                del files[path]                             # retired
            else:
                at = rnd.randrange(len(body) + 1)
                body[at:at] = lines(chunk)                  # inserted lines
            touched.append(path)
        return touched

    main_tip = None
    side_touched = set()
    tags = []
    for n in range(1, commits + 1):
        changes = edit(n)
        on_side = side_base is not None and n % 1000 >= 900
        if on_side:
            side_touched.update(changes)
            side_tip = emit_commit("side", n, changes, [side_tip], f"side work {n}\n\nBench commit {n} on side.\n")
            continue
        parents = [main_tip] if main_tip else []
        message = f"change {n}\n\nBench commit {n}: {', '.join(changes)}\n"
        if side_tip is not None and n % 1000 == 0:
            parents.append(side_tip)
            message = f"Merge side into main at {n}\n"
            changes = sorted(side_touched.union(changes))   # the merge's tree has the side's changes too
            side_touched.clear()
        main_tip = emit_commit("main", n, changes, parents, message)
        if n % 1000 == 899:
            side_base = side_tip = main_tip
        if n == commits // 3:
            out.write(f"reset refs/heads/release-1\nfrom :{main_tip}\n\n".encode())
        if n == 2 * commits // 3:
            out.write(f"reset refs/heads/release-2\nfrom :{main_tip}\n\n".encode())
        if n % 500 == 0:
            tags.append((n, main_tip))
    for n, m in tags:
        when = EPOCH + n * 600
        msg = f"Release at change {n}\n".encode()
        out.write(f"tag v{n // 500}.0\nfrom :{m}\ntagger Bench Tagger <tagger@atrium.invalid> {when} +0000\n"
                  f"data {len(msg)}\n".encode() + msg + b"\n")
    if side_tip is not None:
        out.write(f"reset refs/heads/side\nfrom :{side_tip}\n\n".encode())
    out.write(b"done\n")


if __name__ == "__main__":
    main()
