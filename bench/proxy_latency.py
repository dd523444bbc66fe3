#!/usr/bin/env python3
"""Round-trip latency through `pinlog proxy` against the same server direct, driven by the official
Python MCP client, in one invocation: sessions alternate (direct, proxied, direct, …) so that both
see the same machine state.

Usage: proxy_latency.py PINLOG SESSIONS CALLS -- SERVER COMMAND…

Per session: connect (handshake), warm up with 20 calls, then CALLS `tools/call echo` and CALLS
`tools/list` round trips, each timed alone. For proxied sessions the proxy's peak RSS (VmHWM) is
read from /proc before the session closes. Prints one JSON line: the median and p90 of each kind,
direct and proxied, the added median in ms, the ratio, and the proxy's largest peak RSS in KiB.
"""

import json
import os
import statistics
import sys
import tempfile
import time

import anyio
from mcp import Client, StdioServerParameters


def proxy_pid(label: str) -> int | None:
    """The pid of the `pinlog proxy --name LABEL` process."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"proxy" in argv and label.encode() in argv:
            return int(pid)
    return None


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


async def session(command: list[str], calls: int, label: str | None) -> tuple[list[float], list[float], int]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    echo, listing, rss = [], [], 0
    async with Client(params, mode="legacy", cache=None) as client:
        for _ in range(20):
            await client.call_tool("echo", {"message": "warm"})
        for i in range(calls):
            t = time.perf_counter()
            await client.call_tool("echo", {"message": f"m{i}"})
            echo.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await client.list_tools()
            listing.append((time.perf_counter() - t) * 1000)
        if label is not None:
            pid = proxy_pid(label)
            rss = peak_rss_kib(pid) if pid else 0
    return echo, listing, rss


def summary(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs), 4), "p90_ms": round(xs[int(len(xs) * 0.9)], 4)}


async def main() -> None:
    split = sys.argv.index("--")
    pinlog, sessions, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    server = sys.argv[split + 1 :]
    label = f"bench-{os.getpid()}"
    direct = {"echo": [], "list": []}
    proxied = {"echo": [], "list": []}
    peak = 0
    for n in range(sessions * 2):
        if n % 2 == 0:
            e, l, _ = await session(server, calls, None)
            direct["echo"] += e
            direct["list"] += l
        else:
            e, l, rss = await session([pinlog, "proxy", "--name", label, "--", *server], calls, label)
            proxied["echo"] += e
            proxied["list"] += l
            peak = max(peak, rss)
    out = {"sessions_each": sessions, "calls_each": calls, "proxy_peak_rss_kib": peak}
    for kind in ("echo", "list"):
        d, p = summary(direct[kind]), summary(proxied[kind])
        out[kind] = {
            "direct": d,
            "proxied": p,
            "added_median_ms": round(p["median_ms"] - d["median_ms"], 4),
            "ratio": round(p["median_ms"] / d["median_ms"], 3),
        }
    print(json.dumps(out))


if __name__ == "__main__":
    os.environ.setdefault("PINLOG_HOME", tempfile.mkdtemp(prefix="pinlog-bench-"))
    anyio.run(main)
