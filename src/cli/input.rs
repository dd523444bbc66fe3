//! The input of `canon` and `digest`: a JSON file or standard input, and how it is read and shown.

use std::path::PathBuf;

use clap::Args;
use pinlog_core::json::Limits;

use crate::io::Render;

#[derive(Args)]
pub struct InputArgs {
    /// The JSON file to read; `-` or nothing reads standard input
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
    /// Refuse a document larger than this many bytes
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    pub max_bytes: usize,
    /// Write every non-ASCII character of names and messages as <U+XXXX>
    #[arg(long)]
    pub ascii: bool,
}

impl InputArgs {
    pub fn limits(&self) -> Limits {
        Limits::with_max_bytes(self.max_bytes)
    }

    pub fn render(&self) -> Render {
        Render { ascii: self.ascii }
    }
}
