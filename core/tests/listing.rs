//! Listings: a large one is read on two threads, and must give exactly what one reading gives,
//! digests and refusals alike, wherever in the document a refusal sits.

use pinlog_core::digest::{Listing, ListingError};
use pinlog_core::json::{array_items, Limits};

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

fn sequential(input: &[u8]) -> Result<Listing, ListingError> {
    Listing::from_items(array_items(input, Limits::default())?)
}

#[test]
fn a_large_listing_reads_the_same_on_two_threads() {
    let doc = big_listing(12_000);
    assert!(doc.len() > 2 << 20);
    let parallel = Listing::read(doc.as_bytes(), Limits::default()).unwrap();
    assert_eq!(parallel.items().len(), 12_000);
    assert_eq!(Ok(&parallel), sequential(doc.as_bytes()).as_ref());
    // Item names are all there once: nothing was read twice or skipped at the boundary.
    let mut names: Vec<&str> = parallel.items().iter().map(|l| l.name.as_str()).collect();
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
    assert_eq!(listing.items().len(), 2);
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
