//! The strict reader and both canonical writers, on any bytes.
//!
//! Properties: nothing panics or hangs; reading into a tree and writing canonical bytes while
//! reading accept and refuse the same documents with the same error; both writers write the same
//! bytes and name the same undecidable literals; canonical bytes read back strictly and are their
//! own canonical form; a listing digests the same on one thread as item by item.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinlog_core::digest::Listing;
use pinlog_core::json::{self, array_items, Limits};

fuzz_target!(|data: &[u8]| {
    let limits = Limits::with_max_bytes(1 << 20);
    let tree = json::parse(data, limits);
    let streamed = json::canonicalize(data, limits);
    match (&tree, &streamed) {
        (Err(a), Err(b)) => assert_eq!(a, b),
        (Ok(value), Ok(bytes)) => {
            let written = json::to_canonical(value);
            assert_eq!(&written, bytes);
            if let Ok(canonical) = written {
                let again = json::canonicalize(&canonical, limits)
                    .expect("canonical bytes read back strictly")
                    .expect("canonical bytes have a canonical form");
                assert_eq!(again, canonical, "canonical bytes are their own canonical form");
            }
        }
        _ => panic!("the two readings disagree: {tree:?} / {streamed:?}"),
    }
    if data.first() == Some(&b'[') {
        let read = Listing::read(data, limits);
        let items = array_items(data, limits).map_err(Into::into).and_then(Listing::from_items);
        assert_eq!(read, items);
    }
});
