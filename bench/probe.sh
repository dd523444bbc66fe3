#!/usr/bin/env bash
# Benchmark: `pinlog probe` of the reference server-everything over stdio (initialize, then
# tools/list and prompts/list read twice each), beside the same exchange made by the least client
# there is (bench/server_start.py: raw JSON lines, nothing checked), in the same invocation. That
# exchange is the server's own cost; the difference is what pinlog adds.
#
# Usage: bench/probe.sh [RUNS]     (default: best of 10)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-10}
bash .ci/setup >/dev/null
cargo build --release --quiet
pinlog=target/release/pinlog
python=.ci/venv/bin/python
server=(node .ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio)
source bench/lib.sh

start_ms=$(best_ms "$python" bench/server_start.py "${server[@]}")
probe_ms=$(best_ms "$pinlog" probe -- "${server[@]}")
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $cpu, $(nproc) cores; node $(node --version)"
awk -v s="$start_ms" -v p="$probe_ms" 'BEGIN {
  printf "server, driven by a minimal client (spawn, initialize, 2x tools/list, 2x prompts/list, exit): %d ms\n", s
  printf "pinlog probe (the same exchange, every answer read strictly, the manifest written): %d ms\n", p
  printf "added by pinlog: %d ms (%.2fx)\n", p - s, p / s
}'
