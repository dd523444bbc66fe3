//! Listings: a large one is read on two threads, and must give exactly what one reading gives,
//! digests and refusals alike, wherever in the document a refusal sits; its items are in
//! set-hash order and its set hash is the one an independent implementation computes.

use std::collections::HashMap;

use pinlog_core::digest::{value_digest, Digest, Listing, ListingError};
use pinlog_core::json::{self, array_items, Limits};
use pinlog_testkit::differential::{python, run_peer, Rng};
use pinlog_testkit::vectors::strings;
use sha2::{Digest as _, Sha256};

/// A listing of a few megabytes whose strings carry what a boundary scan could trip on.
fn big_listing(items: usize) -> String {
    let mut s = String::from("[\n");
    for i in 0..items {
        if i > 0 {
            s.push_str(",\n");
        }
        s.push_str(&format!(
            r#"{{"name":"tool-{i}","description":"commas, brackets ] }} [ {{ and quotes \" and \\ end\\","inputSchema":{{"type":"object","properties":{{"q{i}":{{"type":"string","default":"\"],["}}}}}},"n":[{i}.5,{{"\u00e9":[]}}]}}"#
        ));
    }
    s.push_str("\n]\n");
    s
}

fn sequential(input: &[u8]) -> Result<Listing<'static>, ListingError> {
    Listing::from_items(array_items(input, Limits::default())?)
}

#[test]
fn a_large_listing_reads_the_same_on_two_threads() {
    let doc = big_listing(12_000);
    assert!(doc.len() > 2 << 20);
    let parallel = Listing::read(doc.as_bytes(), Limits::default()).unwrap();
    assert_eq!(parallel.items().count(), 12_000);
    assert_eq!(Ok(&parallel), sequential(doc.as_bytes()).as_ref());
    // Item names are all there once: nothing was read twice or skipped at the boundary.
    let mut names: Vec<&str> = parallel.items().map(|l| l.name).collect();
    names.dedup();
    assert_eq!(names.len(), 12_000);
}

/// Makes one item of a listing unreadable, given the offset of its name.
type Breaker = fn(&mut String, usize);

#[test]
fn refusals_anywhere_are_the_ones_a_single_reading_finds() {
    let doc = big_listing(12_000);
    let item = |i: usize| doc.find(&format!("\"tool-{i}\"")).unwrap();
    let breakers: [(&str, Breaker); 5] = [
        ("repeated member", |d, at| {
            d.insert_str(at, r#""name":"again","#)
        }),
        ("no name", |d, at| d.replace_range(at..at + 6, r#""nam""#)),
        ("unpaired surrogate", |d, at| {
            d.insert_str(at + 1, r"\ud800")
        }),
        ("trailing comma", |d, at| {
            let end = d[at..].find("]}").unwrap() + at;
            d.insert(end, ',');
        }),
        ("raw control", |d, at| d.insert(at + 2, '\u{1}')),
    ];
    for (what, breaker) in breakers {
        // The split falls near 53% of the bytes, around item 6,360.
        for i in [
            3, 3_000, 6_000, 6_300, 6_350, 6_360, 6_370, 6_400, 6_500, 11_999,
        ] {
            let mut broken = doc.clone();
            breaker(&mut broken, item(i));
            let parallel = Listing::read(broken.as_bytes(), Limits::default());
            let single = sequential(broken.as_bytes());
            assert!(single.is_err(), "{what} at item {i} is refused");
            assert_eq!(parallel, single, "{what} at item {i}");
        }
        // Two refusals, one in each half: the first in the document is reported.
        let mut broken = doc.clone();
        breaker(&mut broken, item(10_000));
        breaker(&mut broken, item(2_000));
        assert_eq!(
            Listing::read(broken.as_bytes(), Limits::default()),
            sequential(broken.as_bytes()),
            "{what} twice"
        );
    }
}

#[test]
fn one_item_spanning_the_middle_is_read_whole() {
    let filler = "x".repeat(3 << 20);
    let doc = format!(r#"[{{"name":"a"}},{{"name":"big","d":"{filler}"}}]"#);
    let listing = Listing::read(doc.as_bytes(), Limits::default()).unwrap();
    assert_eq!(Ok(&listing), sequential(doc.as_bytes()).as_ref());
    assert_eq!(listing.items().count(), 2);
}

#[test]
fn a_large_listing_cut_off_after_a_backslash_is_refused_not_a_panic() {
    // Found by the fuzzer: the boundary scan ran past the end of the input after a backslash.
    // One item spans the middle and the input ends inside it, right after a backslash, so the
    // scan for a boundary reaches the end.
    let doc = format!(r#"[{{"name":"a"}},{{"name":"{}\"#, "x".repeat(2 << 20));
    let read = Listing::read(doc.as_bytes(), Limits::default());
    assert_eq!(read, sequential(doc.as_bytes()));
    assert!(read.is_err());
}

#[test]
fn a_second_part_dropped_unread_leaves_the_first_to_read_everything() {
    // What happens when no second thread can be started.
    let doc = big_listing(2_000);
    let all: Vec<_> = array_items(doc.as_bytes(), Limits::default())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut first = array_items(doc.as_bytes(), Limits::default()).unwrap();
    let second = first.split_near(doc.len() / 2);
    assert!(second.is_some());
    drop(second);
    let read: Vec<_> = first.collect::<Result<_, _>>().unwrap();
    assert_eq!(read, all);
}

#[test]
fn names_escaped_and_beyond_the_bmp_hash_as_python_computes() {
    // Escaped and raw spellings of one name; U+E000 and U+FFFF, which UTF-16 puts after the
    // characters beyond the BMP and code point order before them; the empty name.
    const NAMES: [&str; 12] = [
        r#"q\"uote"#,
        r"back\\slash",
        r"line\nbreak",
        r"\u001f",
        r"\u00e9",
        "é",
        r"\ud83d\ude00",
        "😀",
        "𝐀",
        "\u{e000}",
        "\u{ffff}",
        "",
    ];
    // Past a mebibyte, so that it is read on two threads. Each name comes twice with different
    // descriptions (ordered by digest), once in each half for some.
    let mut doc = String::from("[");
    for i in 0..40_000 {
        if i > 0 {
            doc.push(',');
        }
        let name = NAMES[i % NAMES.len()];
        let n = i / (2 * NAMES.len()) % 1_000;
        doc.push_str(&format!(
            r#"{{"name":"{name}{n}","description":"item {i}"}}"#
        ));
    }
    doc.push(']');
    assert!(doc.len() > 1 << 20);
    let script = r#"
import sys, json, hashlib, rfc8785
items = json.loads(sys.stdin.buffer.read())
lines = sorted((i["name"].encode("utf-16-be"), hashlib.sha256(rfc8785.dumps(i)).hexdigest(), i["name"]) for i in items)
lines = [f"{n}:{h}" for _, h, n in lines]
print(json.dumps({"lines": lines, "set": hashlib.sha256("\n".join(lines).encode()).hexdigest()}))
"#;
    let stdout = run_peer(
        &python(),
        &["-c", script],
        doc.as_bytes(),
        "the python package rfc8785 is needed: `bash .ci/run` installs it, or set PINLOG_PYTHON",
    );
    let want: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let read = Listing::read(doc.as_bytes(), Limits::default()).unwrap();
    let lines: Vec<String> = read
        .items()
        .map(|l| format!("{}:{}", l.name, l.digest.unwrap().hex()))
        .collect();
    assert_eq!(lines, strings(&want["lines"]));
    assert_eq!(
        read.set_hash().unwrap().hex(),
        want["set"].as_str().unwrap()
    );
    assert_eq!(Ok(&read), sequential(doc.as_bytes()).as_ref());
}

#[test]
fn a_listing_of_many_full_runs_is_in_set_hash_order() {
    // More items than fill the largest runs on each of the two threads, of a few thousand kinds
    // in a scrambled order: names beyond the BMP, after it in UTF-16 and before it in code points.
    const PIECES: [&str; 6] = ["a", "é", "😀", "\u{e000}", "\u{ffff}", "z"];
    let mut rng = Rng(0x5eed_0003);
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut doc = String::from("[");
    for i in 0..2_400_000 {
        let name = format!("{}{}", rng.pick(&PIECES), rng.below(500));
        let item = format!(r#"{{"i":{},"name":"{name}"}}"#, rng.below(3));
        doc.push_str(if i > 0 { "," } else { "" });
        doc.push_str(&item);
        *counts.entry(item).or_default() += 1;
    }
    doc.push(']');
    let listing = Listing::read(doc.as_bytes(), Limits::default()).unwrap();
    // The order computed apart: by UTF-16 code units, then by digest.
    let mut kinds: Vec<(Vec<u16>, Digest, String, usize)> = counts
        .into_iter()
        .map(|(item, count)| {
            let value = json::parse(item.as_bytes(), Limits::default()).unwrap();
            let name = value.as_object().unwrap().get("name").unwrap();
            let name = name.as_str().unwrap().to_string();
            let digest = value_digest(&value).unwrap();
            (name.encode_utf16().collect(), digest, name, count)
        })
        .collect();
    kinds.sort();
    let want = kinds
        .iter()
        .flat_map(|(_, digest, name, count)| std::iter::repeat_n((name.as_str(), *digest), *count));
    let ours = listing.items().map(|l| (l.name, l.digest.unwrap()));
    assert!(ours.eq(want.clone()), "the items are not in set-hash order");
    let mut set = Sha256::new();
    for (i, (name, digest)) in want.enumerate() {
        set.update(format!(
            "{}{name}:{}",
            if i > 0 { "\n" } else { "" },
            digest.hex()
        ));
    }
    let set: [u8; 32] = set.finalize().into();
    assert_eq!(listing.set_hash().unwrap().hex(), hex(&set));
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn undecidable_items_of_one_name_stay_in_document_order() {
    // Items of one name at both ends and in both threads' parts; an integer past 2^53 has no
    // digest.
    let undecidable = ["c", "a", "d", "b"];
    let at: [usize; 4] = [0, 270_000, 400_000, 599_999];
    let items: Vec<String> = (0..600_000)
        .map(|i| match at.iter().position(|&a| a == i) {
            Some(k) => format!(r#"{{"name":"u","{}":9007199254740993}}"#, undecidable[k]),
            None => format!(r#"{{"name":"{}"}}"#, (i * 7919) % 600_000),
        })
        .collect();
    let doc = format!("[{}]", items.join(","));
    let listing = Listing::read(doc.as_bytes(), Limits::default()).unwrap();
    assert_eq!(Ok(&listing), sequential(doc.as_bytes()).as_ref());
    let order: Vec<String> = listing
        .items()
        .filter_map(|l| l.digest.err().map(|e| e.literals[0].pointer.to_string()))
        .collect();
    assert_eq!(order, ["/c", "/a", "/d", "/b"]);
    assert_eq!(listing.items().count(), 600_000);
    assert_eq!(listing.set_hash(), None);
}
