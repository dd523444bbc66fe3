//! `pinlog digest`: the digest of a document, or of every item of a listing and its set hash.

use std::io::Write;

use pinlog_core::digest::{Digest, Listing};
use pinlog_core::json::{self, Limits};

use crate::exit::Exit;
use crate::io::{self, Render};
use crate::DigestArgs;

pub fn run(args: DigestArgs) -> Exit {
    let render = Render {
        ascii: args.input.ascii,
    };
    let input = match io::read_input(args.input.file.as_deref(), args.input.max_bytes) {
        Ok(b) => b,
        Err(e) => {
            render.error(&e);
            return Exit::Unreadable;
        }
    };
    let limits = Limits::with_max_bytes(args.input.max_bytes);
    let mut out = io::stdout_buffered();
    let outcome = if args.listing {
        match Listing::read(&input, limits) {
            Ok(listing) => write_listing(&mut out, &listing, render),
            Err(e) => {
                render.error(&e.to_string());
                return Exit::Unreadable;
            }
        }
    } else {
        match json::canonicalize(&input, limits) {
            Ok(Ok(canonical)) => writeln!(out, "{}", Digest::of(&canonical)).map(|()| Exit::Ok),
            Err(e) => {
                render.error(&e.to_string());
                return Exit::Unreadable;
            }
            Ok(Err(e)) => {
                render.error(&e.to_string());
                return Exit::Undecidable;
            }
        }
    };
    match outcome.and_then(|exit| out.flush().map(|()| exit)) {
        Ok(exit) => exit,
        Err(e) => {
            render.error(&format!("cannot write to standard output: {e}"));
            Exit::Unreadable
        }
    }
}

/// One line per item, `set` last when every item has a digest; each undecidable item is named on
/// standard error.
fn write_listing(out: &mut impl Write, listing: &Listing, render: Render) -> std::io::Result<Exit> {
    let mut exit = Exit::Ok;
    for item in listing.items() {
        let name = render.text(&item.name);
        match &item.digest {
            Ok(d) => {
                out.write_all(name.as_bytes())?;
                writeln!(out, "\t{d}")?;
            }
            Err(e) => {
                render.error(&format!("item \"{}\": {e}", item.name));
                exit = Exit::Undecidable;
                writeln!(out, "{name}\tundecidable")?;
            }
        }
    }
    if let Some(set) = listing.set_hash() {
        writeln!(out, "set\t{}", set.hex())?;
    }
    Ok(exit)
}
