//! Every text format the log reads from outside, fed arbitrary bytes: signed notes, checkpoints,
//! keys, receipts, entries, surface blobs, entry bundles. None may panic; each that accepts must
//! write back exactly what it read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinlog_log::checkpoint::Checkpoint;
use pinlog_log::cosignature::{verify_cosignatures, WitnessKey};
use pinlog_log::entry::{Entry, SurfaceSummary, Timestamp};
use pinlog_log::note::{Note, SignerKey, VerifierKey};
use pinlog_log::proof::Receipt;
use pinlog_log::tiles::{bundle_entries, push_entry};

fuzz_target!(|data: &[u8]| {
    let Some((&which, input)) = data.split_first() else {
        return;
    };
    let text = std::str::from_utf8(input).ok();
    match which % 8 {
        0 => {
            if let Ok(note) = Note::parse(input) {
                assert_eq!(
                    note.to_text().as_bytes(),
                    input,
                    "a note writes back as read"
                );
                let log = SignerKey::from_seed("example.com/log", [1; 32]).verifier();
                let witness =
                    VerifierKey::parse(&WitnessKey::from_seed("w.example", [2; 32]).vkey())
                        .unwrap();
                let _ = note.verify(&[log]);
                let _ = verify_cosignatures(&note, &[witness]);
            }
        }
        1 => {
            if let Some(c) = text.and_then(|t| Checkpoint::parse(t).ok()) {
                assert_eq!(
                    c.to_text(),
                    text.unwrap(),
                    "a checkpoint writes back as read"
                );
            }
        }
        2 => {
            if let Some(k) = text.and_then(|t| VerifierKey::parse(t).ok()) {
                assert_eq!(VerifierKey::parse(&k.to_string()).unwrap(), k);
            }
            if let Some(k) = text.and_then(|t| SignerKey::parse(t).ok()) {
                assert_eq!(
                    k.to_private_text(),
                    text.unwrap().trim_end_matches(['\n', '\r'])
                );
            }
        }
        3 => {
            if let Ok(r) = Receipt::parse(input) {
                assert_eq!(Receipt::parse(r.to_text().as_bytes()).unwrap(), r);
            }
        }
        4 => {
            if let Ok(e) = Entry::read(input) {
                assert_eq!(e.to_bytes().unwrap(), input, "an entry has one encoding");
            }
        }
        5 => {
            let _ = SurfaceSummary::read(input);
        }
        6 => {
            // The first byte after the selector is the width the bundle's name claims.
            if let Some((&w, bundle)) = input.split_first() {
                if let Ok(entries) = bundle_entries(bundle, u16::from(w).max(1)) {
                    let mut again = Vec::new();
                    entries.iter().for_each(|e| push_entry(&mut again, e));
                    assert_eq!(again, bundle, "a bundle writes back as read");
                }
            }
        }
        _ => {
            if let Some(t) = text.and_then(Timestamp::parse) {
                assert_eq!(t.as_str(), text.unwrap());
            }
        }
    }
});
