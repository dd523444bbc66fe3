#!/usr/bin/env bash
# Benchmark: `pinlog verify-log` on logs of 10^5 and 10^6 entries, against `openssl dgst -sha256`
# over the same entry bundles (the floor: hashing the bytes once), in the same invocation.
# Target: verify-log within 3x of openssl at 10^6 entries, and peak memory flat from 10^5 to 10^6.
#
# The logs are written by bench/make-log.py, a second implementation of the entry format and the
# tree root: the script also checks that pinlog publishes the root python computed.
#
# Usage: bench/verify-log.sh [RUNS] [SIZES...]   (defaults: best of 5 runs; 100000 1000000)
# Needs: cargo, openssl, GNU time (/usr/bin/time), python3 (rfc8785 comes from .ci/setup).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
shift || true
sizes=("${@:-100000}")
if [ $# -eq 0 ]; then sizes=(100000 1000000); fi
out=bench/out
mkdir -p "$out"

bash .ci/setup >/dev/null
python=.ci/venv/bin/python
cargo build --release --quiet
pinlog=$(pwd)/target/release/pinlog

source bench/lib.sh

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $cpu, $(nproc) cores"
for n in "${sizes[@]}"; do
  dir=$out/log-$n
  if [ ! -s "$dir/root" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    "$python" bench/make-log.py "$dir/log.db" "$n" 10000 >"$dir/root"
    "$pinlog" log init --db "$dir/log.db" --origin example.com/pinlog-bench --key "$dir/key" \
      >"$dir/vkey" 2>/dev/null
    "$pinlog" log publish --db "$dir/log.db" --key "$dir/key" --out "$dir/pub" >/dev/null
  fi
  published=$(sed -n 3p "$dir/pub/checkpoint")
  if [ "$published" != "$(cat "$dir/root")" ]; then
    echo "ROOT MISMATCH at $n entries: pinlog $published, python $(cat "$dir/root")" >&2
    exit 1
  fi
  # The same bytes openssl hashes: every bundle, in order, in one file.
  bundles=$dir/bundles.bin
  if [ ! -s "$bundles" ]; then
    find "$dir/pub/tile/entries" -type f -not -path '*.p/*' | sort >"$dir/list"
    find "$dir/pub/tile/entries" -type f -path '*.p/*' | sort >>"$dir/list"
    xargs cat <"$dir/list" >"$bundles"
  fi
  bytes=$(stat -c %s "$bundles")
  cat "$bundles" >/dev/null
  "$pinlog" verify-log "$dir/pub" --vkey-file "$dir/vkey" --quiet

  openssl_ms=$(best_ms openssl dgst -sha256 "$bundles")
  verify_ms=$(best_ms "$pinlog" verify-log "$dir/pub" --vkey-file "$dir/vkey" --quiet)
  generic_ms=$(best_ms "$pinlog" verify-log "$dir/pub" --vkey-file "$dir/vkey" --quiet --generic)
  rss_kb=$( { /usr/bin/time -f %M "$pinlog" verify-log "$dir/pub" --vkey-file "$dir/vkey" \
    --quiet >/dev/null; } 2>&1 | tail -n 1)
  awk -v n="$n" -v b="$bytes" -v o="$openssl_ms" -v v="$verify_ms" -v g="$generic_ms" \
    -v r="$rss_kb" 'BEGIN {
      printf "%d entries, %.1f MB of bundles: openssl %d ms, verify-log %d ms (%.2fx), ", n, b / 1e6, o, v, v / o
      printf "--generic %d ms (%.2fx), peak memory %.1f MiB\n", g, g / o, r / 1024
    }'
done
