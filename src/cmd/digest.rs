//! `pinlog digest`: the digest of a document, or of every item of a listing and its set hash.

use std::io::Write;

use pinlog_core::digest::{Digest, Listing};
use pinlog_core::json;

use crate::exit::{Exit, Failure};
use crate::io::{self, Render};
use crate::DigestArgs;

pub fn run(args: DigestArgs, render: Render) -> Result<Exit, Failure> {
    let input = io::read_input(&args.input)?;
    let mut out = io::stdout_buffered();
    let exit = if args.listing {
        let listing = Listing::read(&input, args.input.limits())?;
        write_listing(&mut out, &listing, render)?
    } else {
        let canonical = json::canonicalize(&input, args.input.limits())??;
        writeln!(out, "{}", Digest::of(&canonical))?;
        Exit::Ok
    };
    out.flush()?;
    Ok(exit)
}

/// One line per item, `set` last when every item has a digest; each undecidable item is named on
/// standard error.
fn write_listing(out: &mut impl Write, listing: &Listing, render: Render) -> std::io::Result<Exit> {
    let mut exit = Exit::Ok;
    for item in listing.items() {
        let name = render.text(item.name);
        match &item.digest {
            Ok(d) => {
                out.write_all(name.as_bytes())?;
                out.write_all(b"\tsha256:")?;
                out.write_all(&d.hex_bytes())?;
                out.write_all(b"\n")?;
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
