//! The written form of a digest, `sha256:` and 64 lowercase hex digits, is read back exactly and
//! nothing else is accepted: lockfiles and log entries carry digests in this form.

use pinlog_core::Digest;

const EMPTY: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

#[test]
fn the_written_form_reads_back() {
    // SHA-256 of the empty string, a value from outside this project.
    let d = Digest::of(b"");
    assert_eq!(d.to_string(), EMPTY);
    assert_eq!(EMPTY.parse::<Digest>(), Ok(d));
    assert_eq!(d.hex(), &EMPTY[7..]);
    assert_eq!(&d.hex_bytes()[..], &EMPTY.as_bytes()[7..]);
}

#[test]
fn anything_else_is_refused() {
    let upper = EMPTY.replace('e', "E");
    for text in [
        "",
        "sha256:",
        &EMPTY[7..],
        &EMPTY[..70],
        &format!("{EMPTY}0"),
        &upper,
        &EMPTY.replace("sha256:", "SHA256:"),
        &EMPTY.replace("sha256:", "sha512:"),
        &EMPTY.replace('e', "g"),
        &format!(" {EMPTY}"),
    ] {
        assert!(text.parse::<Digest>().is_err(), "{text:?} is refused");
    }
}
