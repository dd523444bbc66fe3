#!/usr/bin/env bash
# Benchmark: `pinlog digest --listing` on a ~100 MB tools/list-shaped file built from real tool
# definitions, against two references run in the same invocation on the same bytes:
#   - `openssl dgst -sha256` (only hashing the file: the floor), target: pinlog within 3x;
#   - the python rfc8785 package computing the same lines and set hash, target: pinlog 25x faster.
# It also checks that pinlog's output equals the python reference byte for byte, and reports
# pinlog's peak memory against the input size (target: at most 3x).
#
# Usage: bench/digest.sh [SIZE_MB] [RUNS]     (defaults: 100 MB, best of 5 runs)
# Needs: cargo, openssl, GNU time (/usr/bin/time), python3; the python package is installed into
# .ci/venv by .ci/setup.
set -euo pipefail
cd "$(dirname "$0")/.."

size_mb=${1:-100}
runs=${2:-5}
out=bench/out
listing=$out/listing-${size_mb}mb.json
mkdir -p "$out"

bash .ci/setup
python=.ci/venv/bin/python
cargo build --release --quiet
pinlog=target/release/pinlog

if [ ! -s "$listing" ]; then
  python3 bench/make-listing.py "$listing" "$size_mb"
fi
bytes=$(stat -c %s "$listing")

source bench/lib.sh

# Warm the page cache so every command reads the file from memory.
cat "$listing" >/dev/null

openssl_ms=$(best_ms openssl dgst -sha256 "$listing")
pinlog_ms=$(best_ms "$pinlog" digest --listing "$listing")
rss_kb=$( { /usr/bin/time -f %M "$pinlog" digest --listing "$listing" >/dev/null; } 2>&1 | tail -n 1)

# The python reference once: it is slow, and its output is the check on pinlog's.
start=$(date +%s%N)
"$python" bench/digest_listing.py "$listing" >"$out/python.txt"
python_ms=$(( ($(date +%s%N) - start) / 1000000 ))
"$pinlog" digest --listing "$listing" >"$out/pinlog.txt"
if cmp -s "$out/python.txt" "$out/pinlog.txt"; then same=yes; else same=NO; fi

tools=$(($(wc -l <"$out/pinlog.txt") - 1))
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
awk -v bytes="$bytes" -v tools="$tools" -v o="$openssl_ms" -v p="$pinlog_ms" -v py="$python_ms" \
    -v rss="$rss_kb" -v same="$same" -v cpu="$cpu" -v cores="$(nproc)" -v runs="$runs" 'BEGIN {
  printf "input: %.1f MB, %d tools; machine: %s, %d cores; best of %d runs\n", bytes / 1e6, tools, cpu, cores, runs
  printf "openssl dgst -sha256:        %6d ms\n", o
  printf "pinlog digest --listing:     %6d ms  (%.0f MB/s)\n", p, bytes / 1e3 / p
  printf "python rfc8785 (one run):    %6d ms\n", py
  printf "pinlog / openssl:            %6.2fx  (target <= 3)\n", p / o
  printf "python / pinlog:             %6.1fx  (target >= 25)\n", py / p
  printf "pinlog peak memory / input:  %6.2fx  (%d MB; target <= 3)\n", rss * 1024 / bytes, rss / 1024
  printf "output identical to python:  %s\n", same
}'
[ "$same" = yes ]
