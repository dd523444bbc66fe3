#!/usr/bin/env bash
# Benchmark: N scripted fixture packages (tests/fixtures/fixture_server.js) from the loopback
# registries (tests/fixtures/fake_registries.py), crawled in the same invocation three ways, each
# into a fresh store:
#   1. the single process, `crawl --concurrency 2` (the reference);
#   2. the coordinator, `crawl --queue`, with one worker (`crawl-worker --concurrency 2`);
#   3. the coordinator with two workers (`--concurrency 1` each: two looks at once, as in 1).
# Prints looks per minute, and per core (the machine's cores were the run's), how busy the
# machine's CPUs were during the run (from /proc/stat: other load on the machine counts too;
# installers and servers run under bubblewrap and are not the crawler's children in rusage), the
# coordinator's own CPU per result (its rusage: it runs no child), and each way's ratio to the
# reference.
#
# Usage: bench/crawl-queue.sh [N]     (default 1000)
#        PINLOG=path/to/pinlog bench/crawl-queue.sh N   (a binary already built)
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:-1000}
bash .ci/setup >/dev/null
if [ -z "${PINLOG:-}" ]; then
  cargo build --release --quiet
  PINLOG=target/release/pinlog
fi
command -v nats-server >/dev/null || { echo "bench/crawl-queue.sh: needs nats-server" >&2; exit 1; }
out=bench/out/crawl-queue
rm -rf "$out"
mkdir -p "$out/packages"

# N packages of one tool each, the description naming the package.
for i in $(seq "$n"); do
  dir="$out/packages/pinlog-bench-$i-1.0.0"
  mkdir -p "$dir"
  printf '{"name":"pinlog-bench-%d","version":"1.0.0","bin":{"pinlog-bench-%d":"server.js"},"pinlogFixture":{"description":"Bench server %d."}}' \
    "$i" "$i" "$i" > "$dir/package.json"
  cp tests/fixtures/fixture_server.js "$dir/server.js"
  echo "npm:pinlog-bench-$i"
done > "$out/seeds.txt"
: > "$out/optout.txt"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

python3 tests/fixtures/fake_registries.py --port-file "$out/port" \
  --npm-lock .ci/npm/package-lock.json --npm-packages "$out/packages" --wheels .ci/wheels --quiet &
pids+=($!)
until [ -s "$out/port" ]; do sleep 0.1; done
reg="http://127.0.0.1:$(cat "$out/port")"

nats_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$out/nats"
# No configuration: the server as an operator first starts it.
nats-server -js -sd "$out/nats/js" -a 127.0.0.1 -p "$nats_port" >/dev/null 2>&1 &
pids+=($!)
until (echo > "/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null; do sleep 0.1; done
queue="nats://127.0.0.1:$nats_port"

# Every way installs every package: the ways compare the queue's cost, not the install cache's
# (bench/crawl-cache.sh measures that).
common=(--npm-registry "$reg" --pypi-index "$reg/simple/" --timeout-ms 10000 --install-cache-bytes 0)
crawl() { # db, extra flags…
  local db=$1
  shift
  "$PINLOG" crawl --db "$out/$db" --source seeds --seeds "$out/seeds.txt" --optout "$out/optout.txt" \
    --work "$out/work" "${common[@]}" "$@" >"$out/$db.summary" 2>"$out/$db.log"
}
worker() { # name, concurrency
  "$PINLOG" crawl-worker --queue "$queue" --concurrency "$2" --work "$out/work-$1" "${common[@]}" \
    >/dev/null 2>"$out/worker-$1.log" &
  pids+=($!)
  echo $!
}
# The machine's busy and total CPU ticks so far.
ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# Wall and CPU seconds of a command (and what it waited for), and the machine's busy share.
timed() {
  local TIMEFORMAT='%R %U %S' b0 t0 b1 t1
  read -r b0 t0 < <(ticks)
  { time "$@"; } 2>"$out/time"
  read -r b1 t1 < <(ticks)
  read -r t_wall t_user t_sys <"$out/time"
  t_busy=$(awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.0f", 100 * b / t }')
}
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }

declare -A wall busy coord
timed crawl single.db --concurrency 2
wall[single]=$t_wall
busy[single]=$t_busy
coord[single]=-

for way in one two; do
  ws=()
  if [ "$way" = one ]; then
    ws+=("$(worker a 2)")
  else
    ws+=("$(worker b 1)" "$(worker c 1)")
  fi
  timed crawl "queue-$way.db" --queue "$queue" --ack-wait 60
  wall[$way]=$t_wall
  busy[$way]=$t_busy
  coord[$way]=$(add "$t_user" "$t_sys")
  kill "${ws[@]}"
done

for db in single.db queue-one.db queue-two.db; do
  grep -q "looked at $n: $n ok ($n new" "$out/$db.summary" || {
    echo "bench/crawl-queue.sh: $db did not look at all $n packages:" >&2
    cat "$out/$db.summary" >&2
    exit 1
  }
done

cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $cpu_model, $(nproc) cores; $n fixture packages from loopback registries"
for way in single one two; do
  awk -v n="$n" -v w="${wall[$way]}" -v b="${busy[$way]}" -v k="${coord[$way]}" -v rw="${wall[single]}" -v way="$way" -v cores="$(nproc)" 'BEGIN {
    name = way == "single" ? "single process, concurrency 2     " : way == "one" ? "coordinator + 1 worker (conc. 2)  " : "coordinator + 2 workers (conc. 1) "
    printf "%s %6.1f s  %6.1f looks/min  %5.1f looks/min/core  CPUs %3d%% busy", name, w, n * 60 / w, n * 60 / w / cores, b
    if (k != "-") printf "  coordinator %5.1f ms CPU/result", k * 1000 / n
    printf "  (%.2fx the single process)\n", rw / w
  }'
done
