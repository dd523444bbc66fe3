//! pinlog's own vectors (docs/digest-vectors.json): every case, through both canonical writers.

use pinlog_core::digest::{instructions_digest, Listing, ListingError};
use pinlog_core::json::{self, Limits};
use pinlog_testkit::vectors::{load_json, strings};
use serde_json::Value as J;

fn vectors() -> J {
    load_json(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/digest-vectors.json"),
    )
}

fn input(case: &J) -> Vec<u8> {
    match (case["input"].as_str(), case["input_hex"].as_str()) {
        (Some(text), None) => text.as_bytes().to_vec(),
        (None, Some(hex)) => (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect(),
        _ => panic!("a case has input or input_hex: {case}"),
    }
}

fn cases<'a>(v: &'a J, section: &str) -> &'a [J] {
    let cases = v[section].as_array().unwrap();
    assert!(!cases.is_empty(), "{section}");
    cases
}

#[test]
fn canonical_cases() {
    let v = vectors();
    for case in cases(&v, "canonical") {
        let about = case["about"].as_str().unwrap();
        let bytes = input(case);
        let want = case["canonical"].as_str().unwrap().as_bytes();
        let streamed = json::canonicalize(&bytes, Limits::default())
            .unwrap()
            .unwrap();
        assert_eq!(streamed, want, "{about}");
        let tree = json::to_canonical(&json::parse(&bytes, Limits::default()).unwrap()).unwrap();
        assert_eq!(tree, want, "{about}");
        let digest = pinlog_core::Digest::of(want).to_string();
        assert_eq!(digest, case["digest"].as_str().unwrap(), "{about}");
    }
}

#[test]
fn undecidable_cases() {
    let v = vectors();
    for case in cases(&v, "undecidable") {
        let about = case["about"].as_str().unwrap();
        let bytes = input(case);
        let e = json::canonicalize(&bytes, Limits::default())
            .unwrap()
            .unwrap_err();
        let tree =
            json::to_canonical(&json::parse(&bytes, Limits::default()).unwrap()).unwrap_err();
        assert_eq!(e, tree, "{about}");
        let got: Vec<(String, &str, &str)> = e
            .literals
            .iter()
            .map(|l| (l.pointer.to_string(), l.literal.as_str(), l.reason.name()))
            .collect();
        let want: Vec<(String, &str, &str)> = case["literals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["pointer"].as_str().unwrap().to_string(),
                    l["literal"].as_str().unwrap(),
                    l["reason"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{about}");
    }
}

#[test]
fn refused_cases() {
    let v = vectors();
    for case in cases(&v, "refused") {
        let about = case["about"].as_str().unwrap();
        let e = json::canonicalize(&input(case), Limits::default()).unwrap_err();
        assert_eq!(
            e.rule.name(),
            case["rule"].as_str().unwrap(),
            "{about}: {e}"
        );
        assert_eq!(
            e.offset as u64,
            case["offset"].as_u64().unwrap(),
            "{about}: {e}"
        );
        assert_eq!(
            json::parse(&input(case), Limits::default()).unwrap_err(),
            e,
            "{about}"
        );
    }
}

#[test]
fn listing_cases() {
    let v = vectors();
    for case in cases(&v, "listings") {
        let about = case["about"].as_str().unwrap();
        let bytes = input(case);
        let read = Listing::read(&bytes, Limits::default());
        if let Some(refused) = case.get("refused") {
            match read {
                Err(ListingError::NoStringName {
                    index,
                    found,
                    offset,
                }) => {
                    assert_eq!(index as u64, refused["index"].as_u64().unwrap(), "{about}");
                    assert_eq!(found, refused["found"].as_str().unwrap(), "{about}");
                    assert_eq!(
                        offset.map(|o| o as u64),
                        refused["offset"].as_u64(),
                        "{about}"
                    );
                }
                other => panic!("{about}: {other:?}"),
            }
            continue;
        }
        let tree = Listing::from_items(json::array_items(&bytes, Limits::default()).unwrap());
        assert_eq!(read, tree, "{about}");
        let listing = read.unwrap();
        let lines: Vec<String> = listing
            .items()
            .map(|l| match &l.digest {
                Ok(d) => format!("{}\t{d}", l.name),
                Err(_) => format!("{}\tundecidable", l.name),
            })
            .collect();
        assert_eq!(lines, strings(&case["lines"]), "{about}");
        assert_eq!(
            listing.set_hash().map(|d| d.hex()).as_deref(),
            case["set"].as_str(),
            "{about}"
        );
    }
}

#[test]
fn instruction_cases() {
    let v = vectors();
    for case in cases(&v, "instructions") {
        let got = instructions_digest(case["instructions"].as_str()).map(|d| d.to_string());
        assert_eq!(got.as_deref(), case["digest"].as_str(), "{}", case["about"]);
    }
}
