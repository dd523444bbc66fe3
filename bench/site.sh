#!/usr/bin/env bash
# Benchmark: `pinlog site build` of a log of 10^5 entries over 10^4 servers (made by
# bench/make-log.py, the second implementation of the entry format), cold (empty output
# directory) and warm (nothing changed), against copying the built site with `cp -r` in the same
# invocation: the floor of writing that many files of those bytes on this disk.
# Target: a cold build in at most 30 s.
#
# Usage: bench/site.sh [ENTRIES] [SERVERS]   (defaults: 100000 10000)
# Needs: cargo, GNU time (/usr/bin/time), python3 (rfc8785 comes from .ci/setup).
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:-100000}
servers=${2:-10000}
out=bench/out
dir=$out/log-$n
mkdir -p "$out"

bash .ci/setup >/dev/null
python=.ci/venv/bin/python
cargo build --release --quiet
pinlog=$(pwd)/target/release/pinlog

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $cpu, $(nproc) cores"
if [ ! -s "$dir/root" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  "$python" bench/make-log.py "$dir/log.db" "$n" "$servers" >"$dir/root"
  "$pinlog" log init --db "$dir/log.db" --origin example.com/pinlog-bench --key "$dir/key" \
    >"$dir/vkey" 2>/dev/null
  "$pinlog" log publish --db "$dir/log.db" --key "$dir/key" --out "$dir/pub" >/dev/null
fi

site=$out/site-$n
rm -rf "$site" "$site.copy"
sync
build() {
  /usr/bin/time -f "%e %M" -o "$out/time" "$pinlog" site build --db "$dir/log.db" --log "$dir/pub" \
    --vkey-file "$dir/vkey" --out "$site" --now 2026-12-01T00:00:00Z >"$out/site-stdout"
  read -r secs kib <"$out/time"
  echo "$secs $kib"
}
read -r cold cold_kib < <(build)
echo "pinlog site build, cold: ${cold} s, peak ${cold_kib} KiB: $(cat "$out/site-stdout")"
read -r warm warm_kib < <(build)
echo "pinlog site build, warm: ${warm} s, peak ${warm_kib} KiB: $(cat "$out/site-stdout")"
files=$(find "$site" -type f | wc -l)
bytes=$(du -sb "$site" | cut -f1)
sync
/usr/bin/time -f "%e" -o "$out/time" cp -r "$site" "$site.copy"
copy=$(cat "$out/time")
echo "cp -r of the built site ($files files, $bytes bytes): ${copy} s"
awk -v c="$cold" -v w="$warm" -v r="$copy" 'BEGIN {
  printf "cold build / cp -r: %.2fx; warm rebuild / cp -r: %.2fx; cold build target <= 30 s: %s\n",
    c / r, w / r, (c <= 30 ? "met" : "NOT met")
}'
rm -rf "$site.copy"
