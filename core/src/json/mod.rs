//! Strict JSON in, canonical JSON out.

mod canonical;
mod error;
mod number;
mod reader;
mod scan;
mod value;

pub use canonical::{cmp_utf16, to_canonical, write_canonical, Undecidable, UndecidableLiteral};
pub use error::{ReadError, Rule};
pub use number::{to_f64, write_es, Undecidability};
pub use reader::{array_items, parse, ArrayItems, Limits, SecondPart, MAX_DEPTH};
pub use value::{Number, Object, Value};
