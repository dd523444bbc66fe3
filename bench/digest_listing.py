#!/usr/bin/env python3
"""The reference for bench/digest.sh: what `pinlog digest --listing FILE` prints, computed with the
python rfc8785 package (RFC 8785 canonical bytes) and hashlib. Lines are sorted by name in UTF-16
order, then by digest, and the set hash closes the output."""
import hashlib
import json
import sys

import rfc8785


def utf16(name: str) -> bytes:
    return name.encode("utf-16-be")


def main() -> None:
    with open(sys.argv[1], "rb") as f:
        tools = json.load(f)
    lines = sorted(
        ((t["name"], hashlib.sha256(rfc8785.dumps(t)).hexdigest()) for t in tools),
        key=lambda p: (utf16(p[0]), p[1]),
    )
    out = sys.stdout
    for name, hexdigest in lines:
        out.write(f"{name}\tsha256:{hexdigest}\n")
    text = "\n".join(f"{n}:{h}" for n, h in lines)
    out.write(f"set\t{hashlib.sha256(text.encode()).hexdigest()}\n")


if __name__ == "__main__":
    main()
