//! Every vector of mcp-pin's "tool definition hash v1" (../shared/vectors), byte for byte, except
//! where pinlog's reader is deliberately stricter: there the stricter outcome is asserted.

use pinlog_core::digest::{instructions_digest, value_digest, Listing, ListingError};
use pinlog_core::json::{self, Limits, ReadError, Rule, Undecidability, Value};
use pinlog_testkit::vectors::{load_json, shared_dir, strings};
use serde_json::Value as J;

fn vectors() -> J {
    load_json(&shared_dir().join("vectors/tool-definition-hash-v1.json"))
}

fn section<'a>(v: &'a J, name: &str) -> &'a [J] {
    v[name]
        .as_array()
        .unwrap_or_else(|| panic!("no {name} in the vectors"))
}

fn text<'a>(v: &'a J, name: &str) -> &'a str {
    v[name]
        .as_str()
        .unwrap_or_else(|| panic!("no string {name} in {v}"))
}

/// The cases pinlog reads more strictly than hash v1, by the vector's `about`, with what must
/// happen instead.
enum Stricter {
    Undecidable(&'static str),
    Refused(Rule),
}

fn stricter(about: &str) -> Option<Stricter> {
    if about.starts_with("An integer past 2^53") {
        Some(Stricter::Undecidable("12345678901234567890"))
    } else if about.starts_with("RFC 8785 section 3.2.2") {
        // RFC 8785's own example writes 1E30: an integral value past 2^53 in exponent form.
        Some(Stricter::Undecidable("1E30"))
    } else if about.starts_with("An unpaired surrogate") {
        Some(Stricter::Refused(Rule::UnpairedSurrogate))
    } else {
        None
    }
}

#[test]
fn definitions_canonicalise_and_hash_byte_for_byte() {
    let v = vectors();
    let mut matched = 0;
    let mut strict = 0;
    for case in section(&v, "definitions") {
        let about = text(case, "about");
        let input = text(case, "input");
        let parsed = json::parse(input.as_bytes(), Limits::default());
        match stricter(about) {
            None => {
                let value = parsed.unwrap_or_else(|e| panic!("{about}: refused: {e}"));
                let canonical =
                    json::to_canonical(&value).unwrap_or_else(|e| panic!("{about}: {e}"));
                assert_eq!(
                    String::from_utf8(canonical).unwrap(),
                    text(case, "canonical"),
                    "{about}"
                );
                let streamed = json::canonicalize(input.as_bytes(), Limits::default()).unwrap();
                assert_eq!(
                    streamed.unwrap(),
                    text(case, "canonical").as_bytes(),
                    "{about}"
                );
                let digest = value_digest(&value).unwrap();
                assert_eq!(digest.hex(), text(case, "hash"), "{about}");
                matched += 1;
            }
            Some(Stricter::Undecidable(literal)) => {
                let value = parsed.unwrap_or_else(|e| panic!("{about}: refused: {e}"));
                let err = json::to_canonical(&value).expect_err(about);
                assert_eq!(err.literals.len(), 1, "{about}: {err}");
                assert_eq!(err.literals[0].literal, literal, "{about}");
                assert_eq!(err.literals[0].reason, Undecidability::Beyond2Pow53);
                assert!(
                    value_digest(&value).is_err(),
                    "{about}: an undecidable value has no digest"
                );
                let streamed = json::canonicalize(input.as_bytes(), Limits::default()).unwrap();
                assert_eq!(streamed.unwrap_err(), err, "{about}");
                strict += 1;
            }
            Some(Stricter::Refused(rule)) => {
                let err: ReadError = parsed.expect_err(about);
                assert_eq!(err.rule, rule, "{about}: {err}");
                strict += 1;
            }
        }
    }
    assert_eq!(
        (matched, strict),
        (5, 3),
        "every definition vector is accounted for"
    );
}

#[test]
fn sets_hash_byte_for_byte_across_pages() {
    let v = vectors();
    let cases = section(&v, "sets");
    assert!(!cases.is_empty());
    for case in cases {
        let about = text(case, "about");
        let pages: Vec<Value<'_>> = case["pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| json::parse(p.as_str().unwrap().as_bytes(), Limits::default()).unwrap())
            .collect();
        let items = pages.iter().flat_map(|p| {
            p.as_array()
                .unwrap()
                .iter()
                .cloned()
                .map(Ok::<_, ReadError>)
        });
        let listing = Listing::from_items(items).unwrap_or_else(|e| panic!("{about}: {e}"));
        if let [page] = case["pages"].as_array().unwrap().as_slice() {
            let read = Listing::read(page.as_str().unwrap().as_bytes(), Limits::default());
            assert_eq!(read.as_ref(), Ok(&listing), "{about}");
        }
        let lines: Vec<String> = listing
            .items()
            .map(|l| format!("{}:{}", l.name, l.digest.as_ref().unwrap().hex()))
            .collect();
        assert_eq!(lines, strings(&case["lines"]), "{about}");
        assert_eq!(
            listing.set_hash().unwrap().hex(),
            text(case, "setHash"),
            "{about}"
        );
    }
}

#[test]
fn instructions_hash_as_utf8_or_not_at_all() {
    let v = vectors();
    for case in section(&v, "instructions") {
        let about = text(case, "about");
        let got = instructions_digest(case["instructions"].as_str()).map(|d| d.hex());
        assert_eq!(got.as_deref(), case["hash"].as_str(), "{about}");
    }
}

#[test]
fn invalid_inputs_are_refused_with_the_rule_named() {
    let v = vectors();
    let cases = section(&v, "invalid");
    assert_eq!(cases.len(), 4);
    for case in cases {
        let about = text(case, "about");
        match text(case, "reason") {
            "repeated member name" => {
                let err = json::parse(text(case, "input").as_bytes(), Limits::default())
                    .expect_err(about);
                assert_eq!(err.rule, Rule::DuplicateMember, "{about}: {err}");
            }
            "no string name" => {
                let page = case["pages"][0].as_str().unwrap();
                let err = Listing::read(page.as_bytes(), Limits::default()).expect_err(about);
                assert!(
                    matches!(err, ListingError::NoStringName { index: 0, .. }),
                    "{about}: {err}"
                );
            }
            other => panic!("{about}: a reason this test does not know: {other}"),
        }
    }
}
