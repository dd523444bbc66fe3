#!/usr/bin/env python3
"""Writes docs/digest-vectors.json, the test vectors of docs/SPEC-digest.md.

Canonical bytes and digests of the decidable cases are computed here with the python rfc8785
package and hashlib, an implementation independent of pinlog's. The undecidable and refused cases
state pinlog's stricter rules; their expected outcomes are written out by hand below.
Run: .ci/venv/bin/python docs/digest-vectors.py > docs/digest-vectors.json
"""
import hashlib
import json

import rfc8785


def digest(b: bytes) -> str:
    return "sha256:" + hashlib.sha256(b).hexdigest()


CANONICAL = [
    ("A tool as a server sends it: members out of order, whitespace between tokens",
     '{ "name": "echo", "inputSchema": {"type": "object", "required": ["message"],\n'
     '  "properties": {"message": {"type": "string", "description": "Message to echo"}}},\n'
     '  "description": "Echoes back the input string", "annotations": {"readOnlyHint": true} }'),
    ("Members sort by UTF-16 code units: U+1F600 (D83D DE00) before U+E000, though its code point is larger",
     '{"\\ue000": 1, "\\ud83d\\ude00": 2, "z": 3, "": 4, "Z": 5}'),
    ("Strings are not normalised: precomposed and decomposed e-acute stay different values",
     '{"a": "caf\\u00e9", "b": "cafe\\u0301"}'),
    ("String escapes: controls as \\b \\f \\n \\r \\t or lowercase \\u00xx; / DEL U+2028 and non-ASCII as themselves",
     '["\\u0008\\u000c\\n\\r\\t\\u0000\\u001F", "\\/ \\u007f \\u2028 \\ud83d\\ude00 \\u00e9", "\\"\\\\"]'),
    ("Numbers in ECMAScript form",
     '[1.0, -0, -0.0, 1E3, 1e-7, 0.000001, 4.50, 2e-3, 123456789012345, 1e15, 333333333.33333329]'),
    ("2^53 itself is decidable, and so is a fraction below it, read as its nearest double",
     '[9007199254740992, -9007199254740992, 9.007199254740992e15, 9007199254740991.5]'),
    ("The smallest doubles: a literal below the smallest subnormal rounds up to it when nearer to it than to 0",
     '[5e-324, 3e-324, 2.2250738585072014e-308]'),
    ("Literals, empty containers, nesting", '{"t": true, "f": false, "n": null, "o": {}, "a": [[], [{}]]}'),
    ("Member names that differ only by case or by NFC-irrelevant characters are different members",
     '{"Name": 1, "name": 2, "name\\u200b": 3}'),
]

UNDECIDABLE = [
    ("An integer past 2^53", '{"maximum": 9007199254740993}',
     [("/maximum", "9007199254740993", "beyond-2^53")]),
    ("The same integer in other notations", '[9007199254740993.0, 9.007199254740993e15, 90071992547409930e-1]',
     [("/0", "9007199254740993.0", "beyond-2^53"), ("/1", "9.007199254740993e15", "beyond-2^53"),
      ("/2", "90071992547409930e-1", "beyond-2^53")]),
    ("1e30, the integer RFC 8785's own example writes", '{"numbers": [1E30]}',
     [("/numbers/0", "1E30", "beyond-2^53")]),
    ("A fraction past 2^53 rounds to an integer past 2^53", '[9007199254740992.5, -1.5e300]',
     [("/0", "9007199254740992.5", "beyond-2^53"), ("/1", "-1.5e300", "beyond-2^53")]),
    ("Outside the range of a double: to infinity, or to zero from a non-zero literal",
     '{"big": 1e400, "tiny": 1e-400, "smaller": -2e-324}',
     [("/big", "1e400", "out-of-float64-range"), ("/tiny", "1e-400", "out-of-float64-range"),
      ("/smaller", "-2e-324", "out-of-float64-range")]),
    ("Every literal is named, in document order, by JSON pointer", '{"z~/": [1e30], "a": {"b": 1e999}}',
     [("/z~0~1/0", "1e30", "beyond-2^53"), ("/a/b", "1e999", "out-of-float64-range")]),
]

# (about, input text or bytes, rule, byte offset)
REFUSED = [
    ("A member name twice in one object", '{"description":"a","description":"b"}', "duplicate-member", 19),
    ("A repeat spelled with an escape is the same name", '{"ab":1,"\\u0061b":2}', "duplicate-member", 8),
    ("Two names equal after NFC: precomposed and decomposed e-acute", '{"\u00e9":1,"e\u0301":2}', "nfc-equal-members", 8),
    ("Two names equal after NFC: KELVIN SIGN and K", '{"K":1,"\u212a":2}', "nfc-equal-members", 7),
    ("A high surrogate escape alone", '["\\ud800"]', "unpaired-surrogate", 2),
    ("A low surrogate escape alone", '["x\\udead"]', "unpaired-surrogate", 3),
    ("A high surrogate followed by a non-surrogate escape", '["\\ud83d\\u0041"]', "unpaired-surrogate", 2),
    ("A byte that is not UTF-8", b'["\xff"]', "invalid-utf8", 2),
    ("An overlong UTF-8 encoding of /", b'["\xc0\xaf"]', "invalid-utf8", 2),
    ("A surrogate encoded in UTF-8", b'["\xed\xa0\x80"]', "invalid-utf8", 2),
    ("A byte order mark", b'\xef\xbb\xbf{}', "byte-order-mark", 0),
    ("Data after the document", '{} {}', "trailing-data", 3),
    ("Nesting deeper than 256 levels", "[" * 257 + "]" * 257, "too-deep", 256),
    ("A raw control character in a string", '["a\tb"]', "control-character", 3),
    ("An escape JSON does not define", '["\\x41"]', "invalid-escape", 2),
    ("A leading zero", '[01]', "invalid-number", 1),
    ("A decimal point without digits after it", '[1.]', "invalid-number", 1),
    ("A trailing comma", '[1,]', "syntax", 3),
    ("NaN is not JSON", '[NaN]', "syntax", 1),
    ("The document ends inside a value", '{"a":', "unexpected-end", 5),
]

LISTINGS = [
    ("Two tools sent out of order",
     '[{"name":"weather","description":"Weather for a city."},{"name":"alerts","description":"Alerts for a state."}]'),
    ("Names sort by UTF-16 code units", '[{"name":"\\ue000"},{"name":"\\ud83d\\ude00"},{"name":"a"}]'),
    ("Two tools with one name are ordered by digest", '[{"name":"dup","description":"b"},{"name":"dup","description":"a"}]'),
    ("An empty listing", '[]'),
]
UNDECIDABLE_LISTINGS = [
    ("A tool with an undecidable number has no digest, and the listing no set hash",
     '[{"name":"ok"},{"name":"big","inputSchema":{"maximum":12345678901234567890}}]',
     ["big\tundecidable", "ok\t" + digest(rfc8785.dumps({"name": "ok"}))]),
]
# (about, input, index of the first bad item, the byte it starts at, what was found)
REFUSED_LISTINGS = [
    ("An item without a name", '[{"name":"a"},{"description":"no name"}]', 1, 14, "no name member"),
    ("An item whose name is not a string", '[{"name":7}]', 0, 1, "number"),
    ("An item that is not an object", '[{"name":"a"}, "b"]', 1, 15, "string"),
    ("The first place a rule is broken is reported: a bad item before a syntax error", '[1, x', 0, 1, "number"),
]

INSTRUCTIONS = [
    ("Hashed as the UTF-8 bytes served, not canonicalised", "Use the \"weather\" tool.\n"),
    ("Not normalised either", "cafe\u0301"),
    ("An empty string is not the same as none", ""),
]


def load(text: str):
    # rfc8785 refuses Python integers from 2^53 on (JavaScript's safe range); 2^53 itself is exact
    # as a double, which is how pinlog reads it, so such an integer is handed over as a float.
    return json.loads(text, parse_int=lambda s: int(s) if abs(int(s)) < 2**53 else float(s))


def utf16(name: str) -> bytes:
    return name.encode("utf-16-be")


def listing(text: str):
    tools = load(text)
    lines = sorted(((t["name"], hashlib.sha256(rfc8785.dumps(t)).hexdigest()) for t in tools),
                   key=lambda p: (utf16(p[0]), p[1]))
    joined = "\n".join(f"{n}:{h}" for n, h in lines)
    return [f"{n}\tsha256:{h}" for n, h in lines], hashlib.sha256(joined.encode()).hexdigest()


def encoded(value):
    return {"input": value} if isinstance(value, str) else {"input_hex": value.hex()}


def main() -> None:
    out = {
        "about": "Test vectors of pinlog's canonical form and digests, version 1 (docs/SPEC-digest.md). "
                 "Inputs are JSON text (input) or raw bytes (input_hex). Canonical bytes and digests of "
                 "the decidable cases were computed with the python rfc8785 package and hashlib.",
        "canonical": [],
        "undecidable": [],
        "refused": [],
        "listings": [],
        "instructions": [],
    }
    for about, text in CANONICAL:
        canonical = rfc8785.dumps(load(text))
        out["canonical"].append({"about": about, "input": text,
                                 "canonical": canonical.decode("utf-8"), "digest": digest(canonical)})
    for about, text, literals in UNDECIDABLE:
        out["undecidable"].append({"about": about, "input": text, "literals": [
            {"pointer": p, "literal": l, "reason": r} for p, l, r in literals]})
    for about, value, rule, offset in REFUSED:
        out["refused"].append({"about": about, **encoded(value), "rule": rule, "offset": offset})
    for about, text in LISTINGS:
        lines, set_hash = listing(text)
        out["listings"].append({"about": about, "input": text, "lines": lines, "set": set_hash})
    for about, text, lines in UNDECIDABLE_LISTINGS:
        out["listings"].append({"about": about, "input": text, "lines": sorted(lines, key=lambda l: utf16(l.split("\t")[0])), "set": None})
    for about, text, index, offset, found in REFUSED_LISTINGS:
        assert text[offset] in '{"[0123456789-tfn', (about, offset)
        out["listings"].append({"about": about, "input": text, "refused": {
            "rule": "no-string-name", "index": index, "offset": offset, "found": found}})
    for about, text in INSTRUCTIONS:
        out["instructions"].append({"about": about, "instructions": text,
                                    "digest": digest(text.encode("utf-8"))})
    out["instructions"].append({"about": "No instructions: no digest", "instructions": None, "digest": None})
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
