#!/usr/bin/env python3
"""Round-trip latency through `pinlog proxy` against the same server direct, driven by the official
Python MCP client, in one invocation: sessions alternate (direct, proxied, direct, …) so that both
see the same machine state.

Usage: proxy_latency.py PINLOG SESSIONS CALLS -- SERVER COMMAND…        (stdio)
       proxy_latency.py --http PINLOG SESSIONS CALLS -- SERVER COMMAND…  (Streamable HTTP: the
       command serves on the port in $PORT; the proxy listens on another, in front of it)

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

import socket
import subprocess

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


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


async def timed(client, calls: int) -> tuple[list[float], list[float]]:
    echo, listing = [], []
    for _ in range(20):
        await client.call_tool("echo", {"message": "warm"})
    for i in range(calls):
        t = time.perf_counter()
        await client.call_tool("echo", {"message": f"m{i}"})
        echo.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        await client.list_tools()
        listing.append((time.perf_counter() - t) * 1000)
    return echo, listing


async def http_session(url: str, calls: int) -> tuple[list[float], list[float]]:
    async with create_mcp_http_client() as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", cache=None) as client:
            return await timed(client, calls)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


async def main_http(pinlog: str, sessions: int, calls: int, server: list[str]) -> None:
    up, front = free_port(), free_port()
    srv = subprocess.Popen(server, env={**os.environ, "PORT": str(up)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = subprocess.Popen(
        [pinlog, "proxy", "--name", "bench-http", "--listen", f"127.0.0.1:{front}", "--upstream", f"http://127.0.0.1:{up}/mcp"],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(up)
        wait_listening(front)
        direct = {"echo": [], "list": []}
        proxied = {"echo": [], "list": []}
        for n in range(sessions * 2):
            target, into = (f"http://127.0.0.1:{up}/mcp", direct) if n % 2 == 0 else (f"http://127.0.0.1:{front}/mcp", proxied)
            e, l = await http_session(target, calls)
            into["echo"] += e
            into["list"] += l
        report(sessions, calls, peak_rss_kib(proxy.pid), direct, proxied, "http")
    finally:
        proxy.terminate()
        srv.terminate()
        proxy.wait()
        srv.wait()


def report(sessions: int, calls: int, peak: int, direct: dict, proxied: dict, transport: str) -> None:
    out = {"transport": transport, "sessions_each": sessions, "calls_each": calls, "proxy_peak_rss_kib": peak}
    for kind in ("echo", "list"):
        d, p = summary(direct[kind]), summary(proxied[kind])
        out[kind] = {
            "direct": d,
            "proxied": p,
            "added_median_ms": round(p["median_ms"] - d["median_ms"], 4),
            "ratio": round(p["median_ms"] / d["median_ms"], 3),
        }
    print(json.dumps(out))


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
    server = sys.argv[split + 1 :]
    if sys.argv[1] == "--http":
        pinlog, sessions, calls = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        return await main_http(pinlog, sessions, calls, server)
    pinlog, sessions, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
    report(sessions, calls, peak, direct, proxied, "stdio")


if __name__ == "__main__":
    os.environ.setdefault("PINLOG_HOME", tempfile.mkdtemp(prefix="pinlog-bench-"))
    anyio.run(main)
