#!/usr/bin/env bash
# Benchmark: `pinlog verify-log URL` of a log served over loopback HTTP by nginx, against the same
# log verified from its directory, in the same invocation; then an incremental run (--state)
# after 1% more entries, counting the bytes nginx sent for it.
# Targets (issue 17): over HTTP within 2x of the directory at 10^6 entries; the incremental run
# downloads at most 2% of what a full run of the grown log downloads.
#
# The logs are bench/make-log.py's (a second implementation of the entry format), N entries and
# N + N/100 entries over the same first N (make-log.py is deterministic), published with the same
# key into two directories.
#
# Usage: bench/verify-log-http.sh [RUNS] [N]   (defaults: best of 3 runs; 1000000)
# Needs: cargo, python3 (rfc8785 from .ci/setup), nginx (installed with apt when missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
n=${2:-1000000}
grown=$((n + n / 100))
out=bench/out
mkdir -p "$out"

bash .ci/setup >/dev/null
python=.ci/venv/bin/python
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
cargo build --release --quiet
pinlog=$(pwd)/target/release/pinlog
source bench/lib.sh

dir=$out/http-$n
if [ ! -s "$dir/ready" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  "$python" bench/make-log.py "$dir/log.db" "$n" 10000 >/dev/null
  "$pinlog" log init --db "$dir/log.db" --origin example.com/pinlog-bench --key "$dir/key" \
    >"$dir/vkey" 2>/dev/null
  "$pinlog" log publish --db "$dir/log.db" --key "$dir/key" --out "$dir/a" >/dev/null
  rm -f "$dir/log.db"
  "$python" bench/make-log.py "$dir/log.db" "$grown" 10000 >/dev/null
  "$pinlog" log init --db "$dir/log.db" --origin example.com/pinlog-bench --key "$dir/key" \
    >/dev/null 2>&1
  # The grown log is published over a copy of the first, as a log grows in place.
  cp -al "$dir/a" "$dir/b"
  "$pinlog" log publish --db "$dir/log.db" --key "$dir/key" --out "$dir/b" >/dev/null
  rm -f "$dir/log.db"
  touch "$dir/ready"
fi

port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
conf=$(mktemp -d)
user=""
if [ "$(id -u)" -eq 0 ]; then user="user root;"; fi
cat >"$conf/nginx.conf" <<CONF
$user
worker_processes 1;
pid $conf/nginx.pid;
error_log $conf/error.log;
events { worker_connections 256; }
http {
  log_format bytes '\$body_bytes_sent \$uri';
  access_log $conf/access.log bytes;
  client_body_temp_path $conf;
  proxy_temp_path $conf;
  fastcgi_temp_path $conf;
  uwsgi_temp_path $conf;
  scgi_temp_path $conf;
  sendfile on;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$port;
    root $(pwd)/$dir;
  }
}
CONF
"$nginx_bin" -c "$conf/nginx.conf"
trap 'kill "$(cat "$conf/nginx.pid")" 2>/dev/null; rm -rf "$conf"' EXIT
url=http://127.0.0.1:$port
sent() { awk '{ s += $1 } END { print s + 0 }' "$conf/access.log"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
cat "$dir/a/tile/entries/"* >/dev/null 2>&1 || true
"$pinlog" verify-log "$dir/a" --vkey-file "$dir/vkey" --quiet
"$pinlog" verify-log "$url/a" --vkey-file "$dir/vkey" --quiet
dir_ms=$(best_ms "$pinlog" verify-log "$dir/a" --vkey-file "$dir/vkey" --quiet)
http_ms=$(best_ms "$pinlog" verify-log "$url/a" --vkey-file "$dir/vkey" --quiet)
awk -v n="$n" -v d="$dir_ms" -v h="$http_ms" 'BEGIN {
  printf "%d entries: verify-log DIR %d ms, verify-log URL %d ms (%.2fx)\n", n, d, h, h / d
}'

# Incremental: the state remembers the first log; the grown one is then verified from it.
state=$conf/state
: >"$conf/access.log"
"$pinlog" verify-log "$url/b" --vkey-file "$dir/vkey" --quiet >/dev/null
full=$(sent)
"$pinlog" verify-log "$url/a" --vkey-file "$dir/vkey" --quiet --state "$state" >/dev/null
: >"$conf/access.log"
start=$(date +%s%N)
"$pinlog" verify-log "$url/b" --vkey-file "$dir/vkey" --quiet --state "$state" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
inc=$(sent)
requests=$(wc -l <"$conf/access.log")
awk -v g="$grown" -v f="$full" -v i="$inc" -v r="$requests" -v ms="$ms" 'BEGIN {
  printf "incremental to %d entries: %d bytes in %d requests, %d ms; a full run: %d bytes (%.2f%%)\n", g, i, r, ms, f, 100 * i / f
}'
