//! The strict JSON reader: whole documents, and the items of a top-level array one at a time.
//!
//! It accepts exactly RFC 8259 JSON and refuses, with the rule and the byte offset, everything two
//! honest parsers could read differently: repeated member names (also after NFC), unpaired
//! surrogate escapes, invalid UTF-8, trailing data. Nesting is tracked on an explicit stack, so a
//! document of a million `[` is refused at the limit without growing the call stack. The grammar
//! itself is in `parser.rs`.

use std::sync::mpsc;

use super::build::{Builder, TreeBuilder};
use super::canonical::Undecidable;
use super::canonical_builder::CanonicalBuilder;
use super::error::{ReadError, Rule};
use super::parser::Parser;
use super::scan;
use super::value::Value;

/// Bounds on what the reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest document, in bytes.
    pub max_bytes: usize,
    /// The deepest nesting of arrays and objects; the outermost container is depth 1. At most
    /// [`MAX_DEPTH`]: a larger limit reads as `MAX_DEPTH`, which every pinlog input is held to
    /// and every writer relies on.
    pub max_depth: usize,
}

/// The nesting limit every pinlog input is held to.
pub const MAX_DEPTH: usize = 256;

impl Limits {
    /// The default depth limit with the given size limit.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        Limits {
            max_bytes,
            max_depth: MAX_DEPTH,
        }
    }
}

impl Default for Limits {
    /// 64 MiB and a depth of 256.
    fn default() -> Self {
        Limits::with_max_bytes(64 << 20)
    }
}

/// Reads one JSON document.
pub fn parse(input: &[u8], limits: Limits) -> Result<Value<'_>, ReadError> {
    let mut p = Parser::new(input, limits)?;
    let value = p.drive(&mut TreeBuilder, 0)?;
    p.end()?;
    Ok(value)
}

/// Reads one JSON document and returns its canonical bytes, or its undecidable literals; the same
/// bytes as [`to_canonical`](super::to_canonical) of [`parse`], without building the tree.
pub fn canonicalize(
    input: &[u8],
    limits: Limits,
) -> Result<Result<Vec<u8>, Undecidable>, ReadError> {
    let mut p = Parser::new(input, limits)?;
    let mut builder = CanonicalBuilder::default();
    // Canonical input is as long as its canonical bytes: written without growing the buffer.
    builder.reserve(input.len());
    p.drive(&mut builder, 0)?;
    p.end()?;
    Ok(builder.into_result())
}

/// Reads a document that must be one top-level array, yielding its items one at a time.
///
/// The whole document is held to the same rules as [`parse`]; only one item is materialised at a
/// time, so a listing of any size is digested in memory proportional to its largest item.
pub fn array_items(input: &[u8], limits: Limits) -> Result<ArrayItems<'_>, ReadError> {
    let mut p = Parser::new(input, limits)?;
    p.skip_ws();
    match p.peek() {
        Some(b'[') => {}
        Some(_) => return Err(p.error(Rule::Syntax, "expected a JSON array at the top level")),
        None => return Err(p.error(Rule::UnexpectedEnd, "empty document")),
    }
    p.pos += 1;
    p.skip_ws();
    let state = if p.peek() == Some(b']') {
        p.pos += 1;
        p.end()?;
        ItemsState::Done
    } else {
        ItemsState::First
    };
    Ok(ArrayItems {
        p,
        state,
        item_offset: 0,
        stop: Stop::End,
    })
}

/// The items of a top-level array; see [`array_items`].
pub struct ArrayItems<'a> {
    p: Parser<'a>,
    state: ItemsState,
    /// Where the item read last starts.
    item_offset: usize,
    /// Where these items end.
    stop: Stop,
}

/// Where the items of a (possibly split) array end.
enum Stop {
    /// At the closing bracket.
    End,
    /// At the comma the other part's scan finds, the first item boundary at or after `at`; it is
    /// sent once found, and `None` (or a closed channel) means the array was not split after all.
    Split {
        at: usize,
        boundary: mpsc::Receiver<Option<usize>>,
    },
    /// At this comma.
    Comma(usize),
}

/// The second part of a split array, before its start is known; see [`ArrayItems::split_near`].
pub struct SecondPart<'a> {
    p: Parser<'a>,
    at: usize,
    boundary: mpsc::Sender<Option<usize>>,
}

impl<'a> SecondPart<'a> {
    /// Finds the first item boundary at or after the place asked for, tells the first part, and
    /// returns the items after it; `None` if there is no such boundary, and then the first part
    /// reads to the end.
    pub fn items(self) -> Option<ArrayItems<'a>> {
        let comma = scan::next_item_separator(self.p.bytes, self.p.pos, self.at);
        // The first part may have stopped early on a refused item and gone; nothing waits then.
        let _ = self.boundary.send(comma);
        let mut p = self.p;
        p.pos = comma? + 1;
        Some(ArrayItems {
            p,
            state: ItemsState::First,
            item_offset: 0,
            stop: Stop::End,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemsState {
    First,
    Next,
    Done,
}

impl<'a> ArrayItems<'a> {
    /// Splits the items not yet read in two, at the first item boundary at or after byte `at`,
    /// so that two threads can read them: this one keeps the items before the boundary, the
    /// returned part finds the boundary (a quick scan that follows only strings and brackets) and
    /// reads the items after it.
    ///
    /// Reading this part strictly confirms the boundary: its items must end exactly there, or
    /// reading them fails (rule `syntax`). Only when this part reads without a refusal is the
    /// other part's reading the same as a reading of the whole.
    ///
    /// The parts are for two threads: once this part reaches the place asked for, it waits for
    /// the other part's [`SecondPart::items`] to say where the boundary is.
    pub fn split_near(&mut self, at: usize) -> Option<SecondPart<'a>> {
        if self.state != ItemsState::First || !matches!(self.stop, Stop::End) {
            return None;
        }
        let (tell, boundary) = mpsc::channel();
        self.stop = Stop::Split { at, boundary };
        Some(SecondPart {
            p: self.p.clone(),
            at,
            boundary: tell,
        })
    }

    /// Whether the comma just read at `comma` ends this part: `Some(Ok)` to stop there,
    /// `Some(Err)` when it lies past the boundary this part had to stop at.
    fn stops_at(&mut self, comma: usize) -> Option<Result<(), ReadError>> {
        if let Stop::Split { at, boundary } = &self.stop {
            if comma < *at {
                return None;
            }
            self.stop = match boundary.recv() {
                Ok(Some(b)) => Stop::Comma(b),
                _ => Stop::End,
            };
        }
        match self.stop {
            Stop::Comma(b) if comma == b => Some(Ok(())),
            Stop::Comma(b) if comma > b => Some(Err(self.p.error_at(
                Rule::Syntax,
                comma,
                "the listing was split at a place that is not between two items",
            ))),
            _ => None,
        }
    }
}

impl<'a> Iterator for ArrayItems<'a> {
    type Item = Result<Value<'a>, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(&mut TreeBuilder)
    }
}

impl<'a> ArrayItems<'a> {
    /// Reads the next item into `builder`.
    pub(crate) fn next_with<B: Builder<'a>>(
        &mut self,
        builder: &mut B,
    ) -> Option<Result<B::Value, ReadError>> {
        match self.state {
            ItemsState::Done => None,
            ItemsState::First => {
                self.state = ItemsState::Next;
                Some(self.item(builder))
            }
            ItemsState::Next => match self.p.after_item() {
                Ok(true) => match self.stops_at(self.p.pos - 1) {
                    None => Some(self.item(builder)),
                    Some(stop) => {
                        self.state = ItemsState::Done;
                        stop.err().map(Err)
                    }
                },
                Ok(false) if matches!(self.stop, Stop::Comma(_)) => {
                    self.state = ItemsState::Done;
                    Some(Err(self.p.error(
                        Rule::Syntax,
                        "the listing was split at a place that is not between two items",
                    )))
                }
                Ok(false) => {
                    self.state = ItemsState::Done;
                    self.p.end().err().map(Err)
                }
                Err(e) => {
                    self.state = ItemsState::Done;
                    Some(Err(e))
                }
            },
        }
    }

    /// The byte offset where the item read last starts.
    pub fn item_offset(&self) -> usize {
        self.item_offset
    }

    fn item<B: Builder<'a>>(&mut self, builder: &mut B) -> Result<B::Value, ReadError> {
        self.p.skip_ws();
        self.item_offset = self.p.pos;
        let item = self.p.drive(builder, 1);
        if item.is_err() {
            self.state = ItemsState::Done;
        }
        item
    }
}
