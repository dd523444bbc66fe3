#!/usr/bin/env python3
"""Builds a pinlog store of N entries, written without pinlog: a second implementation of the
entry format (docs/SPEC-log.md), the surface blobs and the RFC 9162 tree root.

Surfaces come from the real tool and prompt definitions in bench/data/real-tools.json, each
server's in many variants (one tool description reworded), canonicalised with the python rfc8785
package. Entries go to SERVERS servers in turn; each entry moves its server to another variant, so
every server's chain of `previous` pointers is long.

Usage: make-log.py DB ENTRIES [SERVERS]      prints the root the log must have, base64
"""
import base64
import hashlib
import json
import sqlite3
import sys
from pathlib import Path

import rfc8785

ORIGIN = "example.com/pinlog-bench"
VARIANTS = 40


def sha(b):
    return hashlib.sha256(b).digest()


def digest(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def utf16_key(s):
    return s.encode("utf-16-be")


def set_hash(items):
    lines = sorted(
        ((i["name"], hashlib.sha256(rfc8785.dumps(i)).hexdigest()) for i in items),
        key=lambda p: (utf16_key(p[0]), p[1]),
    )
    return digest("\n".join(f"{n}:{h}" for n, h in lines).encode())


def surfaces():
    data = json.loads((Path(__file__).parent / "data/real-tools.json").read_text())
    out = []
    for server in data["servers"]:
        for v in range(VARIANTS):
            tools = json.loads(json.dumps(server["tools"]))
            if v:
                tools[0]["description"] = f"{tools[0].get('description', '')} (revision {v})"
            doc = {"instructions": None, "prompts": server["prompts"], "tools": tools}
            blob = rfc8785.dumps(doc)
            parts = {
                "instructions": None,
                "prompts": set_hash(server["prompts"]),
                "tools": set_hash(tools),
            }
            out.append((blob, parts, digest(rfc8785.dumps(parts))))
    return out


def entry_bytes(e):
    # Every name and value here is ASCII and every number an integer: sorted keys with no
    # whitespace is then exactly RFC 8785.
    return json.dumps(e, sort_keys=True, separators=(",", ":")).encode()


def main():
    db, n = sys.argv[1], int(sys.argv[2])
    servers = int(sys.argv[3]) if len(sys.argv) > 3 else 10_000
    pool = surfaces()
    con = sqlite3.connect(db)
    con.executescript(
        """
        PRAGMA journal_mode = WAL;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE entries (idx INTEGER PRIMARY KEY, server TEXT NOT NULL,
            surface TEXT NOT NULL, observed_at TEXT NOT NULL, blob TEXT NOT NULL,
            leaf BLOB NOT NULL, body BLOB NOT NULL);
        CREATE INDEX entries_by_server ON entries (server, idx);
        CREATE TABLE blobs (digest TEXT PRIMARY KEY, body BLOB NOT NULL);
        CREATE TABLE checkpoints (size INTEGER PRIMARY KEY, root BLOB NOT NULL,
            note TEXT NOT NULL);
        CREATE TABLE servers (server TEXT PRIMARY KEY, first_seen TEXT, last_probe TEXT,
            last_ok TEXT, last_error TEXT, last_change TEXT, look_before_change TEXT,
            last_index INTEGER);
        """
    )
    con.executemany(
        "INSERT INTO meta VALUES (?, ?)", [("schema", "1"), ("origin", ORIGIN)]
    )
    con.executemany(
        "INSERT INTO blobs VALUES (?, ?)", [(digest(b), b) for b, _, _ in pool]
    )
    last = {}
    stack = []  # (height, hash) of the whole subtrees on the tree's right edge
    rows = []
    for i in range(n):
        s = i % servers
        server = f"npm:@bench/server-{s}"
        turn = i // servers
        # Each server stays within its own family of surfaces, moving one variant per entry.
        family = s % 6
        blob, parts, surface = pool[family * VARIANTS + turn % VARIANTS]
        second = i // 20
        day, rest = divmod(second, 86400)
        month, mday = divmod(day, 28)
        e = {
            "blob": digest(blob),
            "instructions": None,
            "labels": ["new-server"] if server not in last else ["description-changed"],
            "observed_at": "%04d-%02d-%02dT%02d:%02d:%02dZ"
            % (2026 + month // 12, month % 12 + 1, mday + 1, rest // 3600, rest // 60 % 60, rest % 60),
            "previous": None
            if server not in last
            else {"index": last[server][0], "surface": last[server][1]},
            "probe": {
                "crawler": "pinlog/0.1.0",
                "env_placeholders": [],
                "env_supplied": [],
                "package_version": "1.0.%d" % turn,
                "protocol_asked": "2025-06-18",
                "protocol_negotiated": "2025-06-18",
                "sandbox": "bubblewrap",
                "transport": "stdio",
            },
            "prompts": parts["prompts"],
            "server": server,
            "surface": surface,
            "tools": parts["tools"],
            "v": 1,
        }
        body = entry_bytes(e)
        leaf = sha(b"\x00" + body)
        rows.append((i, server, surface, e["observed_at"], e["blob"], leaf, body))
        last[server] = (i, surface)
        stack.append((0, leaf))
        while len(stack) > 1 and stack[-1][0] == stack[-2][0]:
            (h, right), (_, left) = stack.pop(), stack.pop()
            stack.append((h + 1, sha(b"\x01" + left + right)))
        if len(rows) == 50_000:
            con.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            rows.clear()
    con.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    root = sha(b"") if not stack else stack[-1][1]
    for _, left in reversed(stack[:-1]):
        root = sha(b"\x01" + left + root)
    print(base64.b64encode(root).decode())


if __name__ == "__main__":
    main()
