#!/usr/bin/env bash
# The client under test for the MCP conformance suite's client scenarios: it is given the mock
# server's URL as its last argument and the revision to speak in MCP_CONFORMANCE_PROTOCOL_VERSION.
# pinlog lists; it never calls a tool.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
exec "${PINLOG_BIN:-$here/target/release/pinlog}" probe --passes 1 \
  --protocol "${MCP_CONFORMANCE_PROTOCOL_VERSION:-2025-11-25}" "${@: -1}" >/dev/null
