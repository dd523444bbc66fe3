//! `pinlog canon`: the canonical bytes of one document.

use pinlog_core::json::{self, Limits};

use crate::exit::Exit;
use crate::io::{self, Render};
use crate::CanonArgs;

pub fn run(args: CanonArgs) -> Exit {
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
    let canonical = match json::canonicalize(&input, Limits::with_max_bytes(args.input.max_bytes)) {
        Ok(Ok(c)) => c,
        Err(e) => {
            render.error(&e.to_string());
            return Exit::Unreadable;
        }
        Ok(Err(e)) => {
            render.error(&e.to_string());
            return Exit::Undecidable;
        }
    };
    let written = match &args.output {
        Some(path) => io::write_atomic(path, &canonical),
        None if io::stdout_is_terminal() => {
            let text = String::from_utf8_lossy(&canonical);
            let shown = render.text(&text);
            if shown.len() != text.len() {
                eprintln!(
                    "note: characters written as <U+XXXX> for the terminal; pipe the output or use -o for the exact bytes"
                );
            }
            io::write_stdout(shown.as_bytes())
        }
        None => io::write_stdout(&canonical),
    };
    match written {
        Ok(()) => Exit::Ok,
        Err(e) => {
            render.error(&e);
            Exit::Unreadable
        }
    }
}
