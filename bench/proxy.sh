#!/usr/bin/env bash
# Benchmark: round-trip latency of `tools/call` (server-everything's echo) and `tools/list` through
# `pinlog proxy` against the same server direct, over stdio and over Streamable HTTP, driven by the
# official Python MCP client, sessions alternating in one invocation; and the proxy's peak RSS. Target (docs/BENCHMARKS.md): median
# added latency <= 0.25 ms per round trip, RSS <= 15 MiB.
#
# Usage: bench/proxy.sh [SESSIONS] [CALLS]     (default: 6 sessions each way, 300 calls each)
set -euo pipefail
cd "$(dirname "$0")/.."

sessions=${1:-6}
calls=${2:-300}
bash .ci/setup >/dev/null
cargo build --release --quiet
server=(node .ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $cpu, $(nproc) cores; node $(node --version)"
.ci/venv/bin/python bench/proxy_latency.py target/release/pinlog "$sessions" "$calls" -- "${server[@]}"
http=(node .ci/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp)
PINLOG_HOME="$(mktemp -d)" .ci/venv/bin/python bench/proxy_latency.py --http target/release/pinlog "$sessions" "$calls" -- "${http[@]}"
