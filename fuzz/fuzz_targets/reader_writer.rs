//! The strict reader and both canonical writers, on any bytes.
//!
//! Properties: nothing panics or hangs; reading into a tree and writing canonical bytes while
//! reading accept and refuse the same documents with the same error; both writers write the same
//! bytes and name the same undecidable literals; canonical bytes read back strictly and are their
//! own canonical form; a listing digests the same through both writers; and the items of an array
//! split in two and read on two threads are the items of one reading.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinlog_core::digest::{Listing, ListingError};
use pinlog_core::json::{self, array_items, Limits, ReadError, Value};

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
                assert_eq!(
                    again, canonical,
                    "canonical bytes are their own canonical form"
                );
            }
        }
        _ => panic!("the two readings disagree: {tree:?} / {streamed:?}"),
    }
    if data.first() == Some(&b'[') {
        // Items handed over as values carry no byte offsets; the rest must agree.
        let read = Listing::read(data, limits).map_err(without_offset);
        let items = array_items(data, limits)
            .map_err(Into::into)
            .and_then(Listing::from_items);
        assert_eq!(read, items);
        check_split(data, limits);
    }
});

fn without_offset(e: ListingError) -> ListingError {
    match e {
        ListingError::NoStringName { index, found, .. } => ListingError::NoStringName {
            index,
            found,
            offset: None,
        },
        other => other,
    }
}

/// Splits the array at its middle as large listings are split, reads the parts on two threads,
/// and compares with one reading.
fn check_split(data: &[u8], limits: Limits) {
    let whole: Result<Vec<Value<'_>>, ReadError> =
        array_items(data, limits).and_then(|items| items.collect());
    let Ok(mut first) = array_items(data, limits) else {
        return;
    };
    let Some(second) = first.split_near(data.len() / 2) else {
        return;
    };
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(|| {
            second
                .items()
                .map(|items| items.collect::<Result<Vec<_>, _>>())
        });
        let mine = first.collect::<Result<Vec<_>, _>>();
        (mine, other.join().expect("the second part does not panic"))
    });
    match (a, b) {
        (Ok(mut a), Some(Ok(b))) => {
            a.extend(b);
            assert_eq!(Ok(a), whole, "two parts read as one");
        }
        // No boundary: the first part read everything.
        (a, None) => assert_eq!(a, whole),
        // A refusal in either part: the whole is refused too.
        _ => assert!(whole.is_err(), "a part was refused, the whole was not"),
    }
}
