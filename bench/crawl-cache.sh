#!/usr/bin/env bash
# Benchmark: the crawl with the install cache against the crawl that installs every package, in the
# same invocation, on the same servers.
# Targets (issue 18): the median look at an unchanged version with the cache warm at most 1.5 s
# for the reference servers; the daily re-crawl of the seeds at least 4x faster than without it.
#
# Three crawls of the same seeds, each with --relook (every server looked at again, as a day later):
#   uncached  --install-cache-bytes 0: every package installed, as before the cache;
#   cold      an empty cache: every package installed and kept;
#   warm      the cache as the cold run left it: nothing installed.
# For each: the wall time, and the median and largest look (crawl_looks.took_ms). The ratio is
# uncached / warm.
#
# Usage: bench/crawl-cache.sh [loopback | seeds [FILE]]
#   loopback (default): the reference servers .ci/setup installs (server-everything, -memory,
#     -filesystem from npm; mcp-server-time, -fetch from PyPI), served by the loopback registries of
#     tests/fixtures/fake_registries.py;
#   seeds: FILE (default data/seeds.txt) from the real npm registry and PyPI (their network only).
# Needs: cargo, python3, bubblewrap, node and npm (.ci/setup installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-loopback}
seeds_file=${2:-data/seeds.txt}
out=bench/out/crawl-cache-$mode
rm -rf "$out" && mkdir -p "$out/work"

bash .ci/setup >/dev/null
cargo build --release --quiet
pinlog=$(pwd)/target/release/pinlog
python=.ci/venv/bin/python

args=(--source seeds --optout OPTOUT.txt --concurrency 2 --work "$out/work" --relook)
if [ "$mode" = loopback ]; then
  cat >"$out/seeds.txt" <<'EOF'
npm:@modelcontextprotocol/server-everything
npm:@modelcontextprotocol/server-memory
npm:@modelcontextprotocol/server-filesystem
pypi:mcp-server-time
pypi:mcp-server-fetch
EOF
  python3 tests/fixtures/fake_registries.py --port-file "$out/port" \
    --npm-lock .ci/npm/package-lock.json --wheels .ci/wheels --quiet &
  registries=$!
  trap 'kill $registries 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.1; done
  base="http://127.0.0.1:$(cat "$out/port")"
  args+=(--seeds "$out/seeds.txt" --npm-registry "$base" --pypi-index "$base/simple/")
else
  args+=(--seeds "$seeds_file")
fi

# crawl NAME [extra args]: one crawl into its own store; prints "wall_ms median_ms max_ms looks ok".
crawl() {
  local name=$1
  shift
  local start end
  start=$(date +%s%N)
  "$pinlog" crawl --db "$out/$name.db" "${args[@]}" "$@" >"$out/$name.out" 2>"$out/$name.err"
  end=$(date +%s%N)
  "$python" - "$out/$name.db" $(( (end - start) / 1000000 )) <<'EOF'
import sqlite3, statistics, sys
db, wall = sys.argv[1], sys.argv[2]
run = sqlite3.connect(db).execute("SELECT max(id) FROM crawl_runs").fetchone()[0]
rows = sqlite3.connect(db).execute(
    "SELECT took_ms, outcome FROM crawl_looks WHERE run = ? AND outcome != 'opt-out'", (run,)).fetchall()
took = [t for t, _ in rows]
ok = sum(1 for _, o in rows if o in ("new", "changed", "unchanged"))
print(wall, int(statistics.median(took)), max(took), len(took), ok)
EOF
}

read -r u_wall u_med u_max n u_ok < <(crawl uncached --install-cache-bytes 0)
# The cold and warm runs share a store and a cache, as a daily crawl does.
read -r c_wall c_med c_max _ c_ok < <(crawl cached --install-cache "$out/cache")
read -r w_wall w_med w_max _ w_ok < <(crawl cached --install-cache "$out/cache")

kept=$("$python" -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
run = c.execute('SELECT max(id) FROM crawl_runs').fetchone()[0]
rows = c.execute('SELECT coalesce(install, \"-\") FROM crawl_looks WHERE run = ?', (run,)).fetchall()
kinds = {}
for (i,) in rows:
    kind = i.split(':')[0]
    kinds[kind] = kinds.get(kind, 0) + 1
print(', '.join(f'{n} {k}' for k, n in sorted(kinds.items())))" "$out/cached.db")

echo "crawl of $n servers ($mode), --concurrency 2, each with --relook"
printf '  %-9s %8s ms wall, look median %6s ms, max %6s ms, %s ok\n' \
  uncached "$u_wall" "$u_med" "$u_max" "$u_ok" cold "$c_wall" "$c_med" "$c_max" "$c_ok" \
  warm "$w_wall" "$w_med" "$w_max" "$w_ok"
echo "  warm run's installs: $kept (- for no package, or an install that failed)"
# Runs that did not read the same servers are not compared.
if [ "$u_ok" != "$w_ok" ] || [ "$c_ok" != "$w_ok" ]; then
  echo "the runs read different numbers of servers; see $out/*.err" >&2
  exit 1
fi
awk -v u="$u_wall" -v w="$w_wall" -v um="$u_med" -v wm="$w_med" 'BEGIN {
  printf "  uncached / warm: %.2fx wall, %.2fx median look\n", u / w, um / wm }'
