#!/usr/bin/env python3
"""Writes a tools/list-shaped JSON array of about SIZE bytes built from real tool definitions.

The seed is bench/data/real-tools.json (definitions captured from MCP reference servers). Copies get
unique names and small, deterministic variations (a numbered description, a non-ASCII word, an
extra numeric constraint), so the digests differ and the canonical writer has real work to do.
Usage: make-listing.py OUT [SIZE_MB]
"""
import copy
import json
import sys
from pathlib import Path

WORDS = ["weather", "caf\u00e9", "\u65e5\u672c\u8a9e", "\u05e9\u05dc\u05d5\u05dd", "\U0001f600", "na\u00efve"]


def main() -> None:
    out = Path(sys.argv[1])
    target = int(float(sys.argv[2]) if len(sys.argv) > 2 else 100) * 1_000_000
    seed = json.loads((Path(__file__).parent / "data" / "real-tools.json").read_text("utf-8"))
    tools = [t for server in seed["servers"] for t in server["tools"]]
    written = 1
    with out.open("w", encoding="utf-8") as f:
        f.write("[")
        i = 0
        while written < target:
            t = copy.deepcopy(tools[i % len(tools)])
            t["name"] = f"{t['name']}-{i}"
            t["description"] = f"{t.get('description', '')} ({WORDS[i % len(WORDS)]} #{i})"
            props = t.setdefault("inputSchema", {}).setdefault("properties", {})
            props[f"limit{i % 7}"] = {"type": "number", "minimum": i % 100, "maximum": 1e3 + i / 8}
            text = json.dumps(t, ensure_ascii=(i % 2 == 0), indent=None if i % 3 else 1)
            if i:
                f.write(",\n")
                written += 2
            f.write(text)
            written += len(text.encode("utf-8"))
            i += 1
        f.write("]\n")
    print(f"{out}: {i} tools, {out.stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
