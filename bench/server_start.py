#!/usr/bin/env python3
"""The reference for bench/probe.sh: the least a client can do to read a server's surface over
stdio, with nothing checked: start it, initialize, list tools and prompts twice, close its input
and wait for it to exit. What this costs is the server's; what pinlog costs beyond it is
pinlog's.

Usage: server_start.py COMMAND [ARGS...]
"""
import json
import subprocess
import sys

p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)


def send(obj):
    p.stdin.write((json.dumps(obj) + "\n").encode())
    p.stdin.flush()


def call(i, method, params):
    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("id") == i and "method" not in msg:
            return msg


call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
for i in range(2):
    call(1 + 2 * i, "tools/list", {})
    call(2 + 2 * i, "prompts/list", {})
p.stdin.close()
p.wait()
