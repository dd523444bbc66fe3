//! `pinlog digest`: the digest of a document, or of every item of a listing and its set hash.

use std::io::Write;

use clap::Args;
use pinlog_core::digest::{Digest, Listing};
use pinlog_core::exit::{Exit, Failure};
use pinlog_core::json;

use crate::cli::input::InputArgs;
use crate::io::{self, Render};

#[derive(Args)]
pub struct DigestArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Read a JSON array of tools or prompts and print each digest and the set hash
    #[arg(long)]
    pub listing: bool,
}

pub fn run(args: DigestArgs, render: Render) -> Result<Exit, Failure> {
    let input = io::read_input(args.input.file.as_deref(), args.input.max_bytes)?;
    let mut out = io::stdout_buffered();
    let exit = if args.listing {
        let listing = Listing::read(&input, args.input.limits())?;
        write_listing(&mut out, &listing, render).map_err(crate::io::stdout_failed)?
    } else {
        let canonical = json::canonicalize(&input, args.input.limits())??;
        writeln!(out, "{}", Digest::of(&canonical)).map_err(crate::io::stdout_failed)?;
        Exit::Ok
    };
    out.flush().map_err(crate::io::stdout_failed)?;
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
