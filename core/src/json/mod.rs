//! Strict JSON in, canonical JSON out.

mod build;
mod canonical;
mod canonical_builder;
mod error;
mod names;
mod number;
mod parser;
mod pretty;
mod reader;
mod scan;
mod value;

pub use canonical::{
    cmp_utf16, to_canonical, write_as_served, write_canonical, write_string, write_strings,
    Undecidable, UndecidableLiteral,
};
pub(crate) use canonical_builder::CanonicalBuilder;
pub use error::{ReadError, Rule};
pub use number::{to_f64, write_es, Undecidability};
pub use pretty::write_pretty;
pub use reader::{array_items, canonicalize, parse, ArrayItems, Limits, SecondPart, MAX_DEPTH};
pub use scan::next_item_separator;
pub use value::{Number, Object, Value};
