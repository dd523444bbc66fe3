//! The strict reader refuses each thing two honest parsers could read differently, names the rule
//! and the byte where it was broken, and accepts exactly RFC 8259 JSON otherwise.

use pinlog_core::json::{self, array_items, Limits, Rule, Value, MAX_DEPTH};

/// The refusal of `input`, which reading into a tree and writing canonical bytes while reading
/// must agree on.
fn refused(input: &[u8]) -> (Rule, usize) {
    let e = json::parse(input, Limits::default()).expect_err(&String::from_utf8_lossy(input));
    let streamed = json::canonicalize(input, Limits::default()).unwrap_err();
    assert_eq!(e, streamed, "{}", String::from_utf8_lossy(input));
    (e.rule, e.offset)
}

#[test]
fn each_rule_is_named_with_its_offset() {
    let cases: &[(&[u8], Rule, usize)] = &[
        (br#"{"a":1,"a":2}"#, Rule::DuplicateMember, 7),
        (br#"{"x":{"t":1,"t":2}}"#, Rule::DuplicateMember, 12),
        // "é" precomposed, then "e" + COMBINING ACUTE: one name after NFC.
        (
            "{\"\u{e9}\":1,\"e\u{301}\":2}".as_bytes(),
            Rule::NfcEqualMembers,
            8,
        ),
        // KELVIN SIGN normalises to the ASCII letter K.
        (
            "{\"K\":1,\"\u{212a}\":2}".as_bytes(),
            Rule::NfcEqualMembers,
            7,
        ),
        // An escape spelling the same name is the same name.
        (br#"{"ab":1,"\u0061b":2}"#, Rule::DuplicateMember, 8),
        (br#""\ud800""#, Rule::UnpairedSurrogate, 1),
        (br#""\udc00\ud800""#, Rule::UnpairedSurrogate, 1),
        (br#""x\ud83dy""#, Rule::UnpairedSurrogate, 2),
        (br#""\ud83d\u0041""#, Rule::UnpairedSurrogate, 1),
        (b"\"a\xff\"", Rule::InvalidUtf8, 2),
        (b"\"\xc3\"", Rule::InvalidUtf8, 1),
        (b"\"\xed\xa0\x80\"", Rule::InvalidUtf8, 1),
        (b"{} {}", Rule::TrailingData, 3),
        (b"1 2", Rule::TrailingData, 2),
        (b"\xef\xbb\xbf{}", Rule::ByteOrderMark, 0),
        (b"", Rule::UnexpectedEnd, 0),
        (b"   ", Rule::UnexpectedEnd, 3),
        (b"[1,", Rule::UnexpectedEnd, 3),
        (b"\"abc", Rule::UnexpectedEnd, 0),
        (b"\"a\tb\"", Rule::ControlCharacter, 2),
        (b"\"a\nb\"", Rule::ControlCharacter, 2),
        (br#""\x""#, Rule::InvalidEscape, 1),
        (br#""\u12g4""#, Rule::InvalidEscape, 1),
        (b"[1,]", Rule::Syntax, 3),
        (b"{\"a\":1,}", Rule::Syntax, 7),
        (b"{'a':1}", Rule::Syntax, 1),
        (b"[NaN]", Rule::Syntax, 1),
        (b"[Infinity]", Rule::Syntax, 1),
        (b"// c\n1", Rule::Syntax, 0),
        (b"[1 2]", Rule::Syntax, 3),
        (b"{\"a\" 1}", Rule::Syntax, 5),
        (b"tru", Rule::UnexpectedEnd, 3),
        (b"[nul", Rule::UnexpectedEnd, 4),
        (b"[nulx]", Rule::Syntax, 1),
        (b"-", Rule::UnexpectedEnd, 1),
        (b"[1.", Rule::UnexpectedEnd, 3),
        (b"[1e+", Rule::UnexpectedEnd, 4),
        // Cut off inside an escape, the string is never closed; a bad digit is a bad escape,
        // whatever follows it.
        (br#""abc\"#, Rule::UnexpectedEnd, 0),
        (br#""\u12"#, Rule::UnexpectedEnd, 0),
        (br#"["\ud800"#, Rule::UnexpectedEnd, 1),
        (br#""\ud800\"#, Rule::UnexpectedEnd, 0),
        (br#""\ud800\udc"#, Rule::UnexpectedEnd, 0),
        (br#""\u12""#, Rule::InvalidEscape, 1),
        (br#""\u12" "#, Rule::InvalidEscape, 1),
        (br#"["\u12"]"#, Rule::InvalidEscape, 2),
        (br#""\u1" "#, Rule::InvalidEscape, 1),
        (br#""\ud800""#, Rule::UnpairedSurrogate, 1),
        (b"[+1]", Rule::Syntax, 1),
        (b"[.5]", Rule::Syntax, 1),
        (b"[01]", Rule::InvalidNumber, 1),
        (b"[-01]", Rule::InvalidNumber, 1),
        (b"[1.]", Rule::InvalidNumber, 1),
        (b"[1.e3]", Rule::InvalidNumber, 1),
        (b"[1e]", Rule::InvalidNumber, 1),
        (b"[1e+]", Rule::InvalidNumber, 1),
        (b"[-]", Rule::InvalidNumber, 1),
        (b"\x0c1", Rule::Syntax, 0),
    ];
    for (input, rule, offset) in cases {
        assert_eq!(
            refused(input),
            (*rule, *offset),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn messages_name_the_rule_and_byte_and_never_echo_controls() {
    let e = json::parse(b"{\"a\x1b[2J\":1,\"a\x1b[2J\":2}", Limits::default());
    // A raw ESC inside a string is itself refused, before any repeat is seen.
    assert_eq!(e.unwrap_err().rule, Rule::ControlCharacter);
    let e = json::parse(
        br#"{"a\u001b[2J\u202e":1,"a\u001b[2J\u202e":2}"#,
        Limits::default(),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert_eq!(
        msg,
        "duplicate-member: member name \"a<U+001B>[2J<U+202E>\" is repeated in one object at byte 22"
    );
}

#[test]
fn depth_limit_is_exact_and_a_million_brackets_are_refused_cleanly() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(json::parse(ok.as_bytes(), Limits::default()).is_ok());
    let objects = format!("{}1{}", "{\"a\":".repeat(MAX_DEPTH), "}".repeat(MAX_DEPTH));
    assert!(json::parse(objects.as_bytes(), Limits::default()).is_ok());

    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(refused(deep.as_bytes()), (Rule::TooDeep, MAX_DEPTH));

    let million = "[".repeat(1_000_000);
    assert_eq!(refused(million.as_bytes()), (Rule::TooDeep, MAX_DEPTH));
    let million_objects = "{\"a\":".repeat(1_000_000);
    assert_eq!(refused(million_objects.as_bytes()).0, Rule::TooDeep);

    let shallow = Limits {
        max_bytes: 1 << 20,
        max_depth: 2,
    };
    assert!(json::parse(b"[[1]]", shallow).is_ok());
    assert_eq!(
        json::parse(b"[[[1]]]", shallow).unwrap_err().rule,
        Rule::TooDeep
    );
}

#[test]
fn size_limit_is_exact() {
    let limits = Limits::with_max_bytes(8);
    assert!(json::parse(b"[1,2,33]", limits).is_ok());
    let e = json::parse(b"[1,2,333]", limits).unwrap_err();
    assert_eq!((e.rule, e.offset), (Rule::TooLarge, 8));
}

#[test]
fn accepts_exactly_what_rfc_8259_allows() {
    for input in [
        "0",
        "-0",
        "1.5e-7",
        "1E+2",
        "-12.0e00",
        "\"\"",
        "[]",
        "{}",
        " \t\r\n[ 1 , {\"a\" : [ ] } ]\n",
        r#""\u0000\b\f\n\r\t\/\\\"""#,
        "\"\u{7f}\u{80}\u{2028}\u{10ffff}\"",
        "[true,false,null]",
        r#"{"a":{"a":{"a":1}}}"#,
        r#"{"\ud83d\ude00":"\uD83D\uDE00"}"#,
    ] {
        json::parse(input.as_bytes(), Limits::default())
            .unwrap_or_else(|e| panic!("{input:?}: {e}"));
    }
}

#[test]
fn strings_are_decoded_exactly_and_numbers_keep_their_text() {
    let v = json::parse(
        br#"["a\u00e9\ud83d\ude00\n\/", 1.50E+3, {"k": -0.0}]"#,
        Limits::default(),
    )
    .unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items[0].as_str(), Some("a\u{e9}\u{1f600}\n/"));
    match &items[1] {
        Value::Number(n) => assert_eq!(n.literal(), "1.50E+3"),
        other => panic!("{other:?}"),
    }
    match items[2].as_object().unwrap().get("k") {
        Some(Value::Number(n)) => assert_eq!(n.literal(), "-0.0"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn large_objects_still_find_repeats() {
    let mut doc = String::from("{");
    for i in 0..1000 {
        doc.push_str(&format!("\"k{i}\":{i},"));
    }
    doc.push_str("\"k517\":0}");
    let e = json::parse(doc.as_bytes(), Limits::default()).unwrap_err();
    assert_eq!(e.rule, Rule::DuplicateMember);
    assert_eq!(&doc[e.offset..e.offset + 6], "\"k517\"");

    let mut nfc = String::from("{");
    for i in 0..100 {
        nfc.push_str(&format!("\"x{i}\":0,"));
    }
    nfc.push_str("\"\u{e9}\":0,\"e\u{301}\":1}");
    assert_eq!(refused(nfc.as_bytes()).0, Rule::NfcEqualMembers);

    // A name that NFC changes, met before and after the switch from scanning to a hash map.
    for before in [0, 5, 15, 16, 40] {
        let mut doc = String::from("{");
        for i in 0..before {
            doc.push_str(&format!("\"y{i}\":0,"));
        }
        doc.push_str("\"\u{212a}\":0,");
        for i in 0..30 {
            doc.push_str(&format!("\"z{i}\":0,"));
        }
        doc.push_str("\"K\":1}");
        let e = json::parse(doc.as_bytes(), Limits::default()).unwrap_err();
        assert_eq!(
            (e.rule, &doc[e.offset..e.offset + 3]),
            (Rule::NfcEqualMembers, "\"K\""),
            "{before}"
        );
    }
}

#[test]
fn array_items_streams_and_applies_the_same_rules() {
    let items: Vec<_> = array_items(b" [ {\"a\":1} , [2] , \"x\" ] ", Limits::default())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(array_items(b"[]", Limits::default()).unwrap().count(), 0);

    let refusal = |input: &[u8]| {
        let r: Result<Vec<_>, _> = match array_items(input, Limits::default()) {
            Ok(it) => it.collect(),
            Err(e) => Err(e),
        };
        let e = r.expect_err(&String::from_utf8_lossy(input));
        (e.rule, e.offset)
    };
    assert_eq!(refusal(b"{}"), (Rule::Syntax, 0));
    assert_eq!(refusal(b"[1] 2"), (Rule::TrailingData, 4));
    assert_eq!(refusal(b"[] x"), (Rule::TrailingData, 3));
    assert_eq!(refusal(b"[1,"), (Rule::UnexpectedEnd, 3));
    assert_eq!(refusal(b"[1"), (Rule::UnexpectedEnd, 2));
    assert_eq!(refusal(b"[{\"a\":1,\"a\":2}]"), (Rule::DuplicateMember, 8));
    // The top-level array counts as one level.
    let deep = format!("[{}{}]", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(refusal(deep.as_bytes()), (Rule::TooDeep, MAX_DEPTH));
}

#[test]
fn a_depth_limit_above_256_reads_as_256() {
    let limits = Limits {
        max_bytes: 1 << 30,
        max_depth: usize::MAX,
    };
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(
        json::parse(deep.as_bytes(), limits).unwrap_err().rule,
        Rule::TooDeep
    );
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(json::to_canonical(&json::parse(ok.as_bytes(), limits).unwrap()).is_ok());
}

#[test]
fn objects_out_of_order_at_every_level_are_put_in_order_once() {
    // Found in review: each level copied its members again, so deep out-of-order nesting around a
    // large value cost depth x size (now each byte is copied once). Both writers must agree.
    let big = "x".repeat(4 << 20);
    let mut doc = format!("\"{big}\"");
    for _ in 0..MAX_DEPTH - 1 {
        doc = format!("{{\"b\":{doc},\"a\":0}}");
    }
    let streamed = json::canonicalize(doc.as_bytes(), Limits::default())
        .unwrap()
        .unwrap();
    let tree =
        json::to_canonical(&json::parse(doc.as_bytes(), Limits::default()).unwrap()).unwrap();
    assert_eq!(streamed, tree);
    assert!(streamed.starts_with(b"{\"a\":0,\"b\":{\"a\":0,\"b\":"));
}
