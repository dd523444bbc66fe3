#!/usr/bin/env bash
# Coverage: how many real MCP servers the crawler reads, before and after a change, in one
# invocation, on the same servers and the same day's registries.
#
# Each side crawls SET fresh (a new store, a new install cache, --source seeds, --relook) from the
# real npm registry and PyPI, and the outcome of every look is counted by reason (crawl_looks.outcome;
# new, changed and unchanged are "read"). The table goes into docs/BENCHMARKS.md.
#
# Usage: bench/coverage.sh BEFORE_REV [SET]
#   BEFORE_REV  the commit to compare with, built in a worktree under bench/out (or set
#               PINLOG_BEFORE to a pinlog binary already built from it);
#   SET         the seed-syntax list to crawl (default data/coverage-set.txt; data/seeds.txt for
#               the seeds).
# The after side is the work tree's HEAD (or PINLOG_AFTER, a pinlog binary built from it). Needs: cargo, python3, bubblewrap, node and npm
# (.ci/setup installs them), and the registries' network.
set -euo pipefail
cd "$(dirname "$0")/.."

before_rev=${1:?usage: bench/coverage.sh BEFORE_REV [SET]}
set_file=${2:-data/coverage-set.txt}
out=bench/out/coverage-$(basename "$set_file" .txt)
rm -rf "$out/before" "$out/after" && mkdir -p "$out/before" "$out/after"

if [ -n "${PINLOG_AFTER:-}" ]; then
  after_bin=$PINLOG_AFTER
else
  cargo build --release --quiet
  after_bin=$(pwd)/target/release/pinlog
fi
if [ -n "${PINLOG_BEFORE:-}" ]; then
  before_bin=$PINLOG_BEFORE
else
  src=bench/out/coverage-before-src
  git worktree remove --force "$src" 2>/dev/null || true
  git worktree add --detach "$src" "$before_rev" >/dev/null
  (cd "$src" && CARGO_TARGET_DIR="$(pwd)/../coverage-before-target" cargo build --release --quiet)
  before_bin=$(pwd)/bench/out/coverage-before-target/release/pinlog
fi

# crawl SIDE BIN: one fresh crawl of the set into bench/out/…/SIDE.
crawl() {
  local side=$1 bin=$2
  "$bin" crawl --db "$out/$side/log.db" --install-cache "$out/$side/cache" \
    --source seeds --seeds "$set_file" --optout OPTOUT.txt --relook --concurrency 2 \
    --work "$out/$side/work" >"$out/$side/out" 2>"$out/$side/err"
}
crawl before "$before_bin"
crawl after "$after_bin"

python3 - "$out/before/log.db" "$out/after/log.db" "$set_file" <<'PY'
import sqlite3, sys

READ = {"new", "changed", "unchanged"}

def outcomes(db):
    c = sqlite3.connect(db)
    run = c.execute("SELECT max(id) FROM crawl_runs").fetchone()[0]
    return dict(c.execute(
        "SELECT server, outcome FROM crawl_looks WHERE run = ? AND outcome != 'opt-out'", (run,)))

before, after = outcomes(sys.argv[1]), outcomes(sys.argv[2])
reasons = sorted(set(before.values()) | set(after.values()),
                 key=lambda r: (r not in READ, r))
count = lambda side, r: sum(1 for o in side.values() if o == r)
print(f"coverage of {sys.argv[3]}: {len(after)} servers looked at")
print(f"| outcome | before | after |")
print(f"|---|---:|---:|")
for r in reasons:
    print(f"| {r} | {count(before, r)} | {count(after, r)} |")
read = lambda side: sum(1 for o in side.values() if o in READ)
for name, side in (("before", before), ("after", after)):
    n = len(side)
    print(f"{name}: read {read(side)} of {n} ({100 * read(side) / max(n, 1):.0f}%)")
moved = sorted(s for s in after if before.get(s) != after[s])
if moved:
    print("changed outcome:")
    for s in moved:
        print(f"  {s}: {before.get(s, '-')} -> {after[s]}")
PY
