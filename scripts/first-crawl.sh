#!/usr/bin/env bash
# The main job on the embedded default, small: crawl a few public MCP servers (npm's search and
# data/seeds.txt) into a SQLite store, publish the log with a key made on first use, verify the
# published copy the way anyone else would, and build the static site from it. Builds pinlog-verify,
# the auditors' binary, beside pinlog.
set -euo pipefail
cd "$(dirname "$0")/.."

# stdio servers run only inside bubblewrap; without it they are recorded as sandbox-unavailable.
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -q && apt-get install -y -q bubblewrap
  else
    echo "first-crawl: install bubblewrap (e.g. sudo apt-get install bubblewrap) to run servers sandboxed" >&2
  fi
fi

cargo build --release --locked --package pinlog --package pinlog-verifier
./target/release/pinlog crawl --db data/log.db --source seeds --source npm --limit "${LIMIT:-12}" \
  --publish public/log --key data/log.key
./target/release/pinlog verify-log public/log --vkey-file data/log.key.vkey
./target/release/pinlog site build --db data/log.db --log public/log --vkey-file data/log.key.vkey \
  --out public/site
echo "the site is in public/site/index.html; the auditors' verifier is target/release/pinlog-verify"
