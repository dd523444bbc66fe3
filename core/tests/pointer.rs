//! RFC 6901 JSON pointers, against the RFC's own examples (section 5).

use pinlog_core::json::{self, Limits, Value};
use pinlog_core::JsonPointer;

const RFC6901_DOC: &str = include_str!("data/rfc6901-example.json");

#[test]
fn rfc6901_section5_examples_resolve() {
    let doc = json::parse(RFC6901_DOC.as_bytes(), Limits::default()).unwrap();
    let canon = |v: &Value<'_>| String::from_utf8(json::to_canonical(v).unwrap()).unwrap();
    for (pointer, want) in [
        ("", None),
        ("/foo", Some(r#"["bar","baz"]"#)),
        ("/foo/0", Some(r#""bar""#)),
        ("/", Some("0")),
        ("/a~1b", Some("1")),
        ("/c%d", Some("2")),
        ("/e^f", Some("3")),
        ("/g|h", Some("4")),
        ("/i\\j", Some("5")),
        ("/k\"l", Some("6")),
        ("/ ", Some("7")),
        ("/m~0n", Some("8")),
    ] {
        let p = JsonPointer::parse(pointer).unwrap();
        let got = p
            .resolve(&doc)
            .unwrap_or_else(|| panic!("{pointer} does not resolve"));
        match want {
            Some(want) => assert_eq!(canon(got), want, "{pointer}"),
            None => assert_eq!(got, &doc),
        }
        assert_eq!(
            p.to_string(),
            pointer,
            "{pointer} writes back as it was read"
        );
    }
}

#[test]
fn pointers_that_refer_to_nothing() {
    let doc = json::parse(RFC6901_DOC.as_bytes(), Limits::default()).unwrap();
    for pointer in [
        "/foo/2", "/foo/-", "/foo/01", "/foo/+1", "/foo/0/x", "/nope", "/m~n",
    ] {
        let p = JsonPointer::parse(pointer);
        assert!(p.map_or(true, |p| p.resolve(&doc).is_none()), "{pointer}");
    }
}

#[test]
fn malformed_pointers_are_refused_with_the_offset() {
    let e = JsonPointer::parse("foo").unwrap_err();
    assert_eq!(e.offset, 0);
    let e = JsonPointer::parse("/a/b~2").unwrap_err();
    assert_eq!(e.offset, 4);
    let e = JsonPointer::parse("/~").unwrap_err();
    assert_eq!(e.offset, 1);
}

#[test]
fn tokens_with_slash_and_tilde_are_escaped() {
    let p = JsonPointer::root()
        .join_name("a/b~c")
        .join_index(3)
        .join_name("");
    assert_eq!(p.to_string(), "/a~1b~0c/3/");
    assert_eq!(JsonPointer::parse("/a~1b~0c/3/").unwrap(), p);
}
