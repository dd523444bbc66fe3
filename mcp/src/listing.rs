//! Reading a paginated listing (`tools/list`, `prompts/list`) to its end, and reading it again.

use std::collections::HashSet;

use pinlog_core::json::{self, Value};

use crate::caps::Caps;
use crate::client::Client;
use crate::error::WireError;
use crate::jsonrpc::Out;

/// One complete reading of a listing: every item of every page, in order.
pub type Items = Vec<Value<'static>>;

/// One listing being read, page by page, without I/O: the client and the proxy read listings
/// with it. Ask for the first page with no cursor; hand each page's result to [`Pages::page`],
/// which says which cursor to ask for next, or gives every item once a page has no `nextCursor`.
///
/// An empty-string cursor is a cursor, not the end. A page is refused when it is not an object,
/// says a `resultType` other than `complete`, or has no array under `key`; a cursor seen before,
/// more pages or items than the caps allow, are errors: a list is never returned cut short.
#[derive(Debug)]
pub struct Pages {
    method: String,
    key: String,
    max_pages: usize,
    max_items: usize,
    pages: usize,
    seen: HashSet<String>,
    items: Items,
}

/// What to do after a page.
#[derive(Debug)]
pub enum Next {
    /// Ask for the page at this cursor.
    More(String),
    /// The listing is read: every item of every page, in order.
    Done(Items),
}

impl Pages {
    /// `method` is the listing (`tools/list`, `prompts/list`); `key` the member holding its
    /// items (`tools`, `prompts`).
    pub fn new(method: &str, key: &str, caps: &Caps) -> Pages {
        Pages {
            method: method.to_string(),
            key: key.to_string(),
            max_pages: caps.max_pages,
            max_items: caps.max_items,
            pages: 0,
            seen: HashSet::new(),
            items: Vec::new(),
        }
    }

    /// Reads one page's result.
    pub fn page(&mut self, result: Value<'static>) -> Result<Next, WireError> {
        let method = &self.method;
        let Value::Object(mut page) = result else {
            return Err(WireError::Malformed(format!(
                "the {method} result is not an object"
            )));
        };
        crate::surface::check_result_type(&page, method)?;
        let Some(Value::Array(page_items)) = page.remove(&self.key) else {
            return Err(WireError::Malformed(format!(
                "the {method} result has no \"{}\" array",
                self.key
            )));
        };
        if self.items.len() + page_items.len() > self.max_items {
            return Err(WireError::TooLarge(format!(
                "{method} lists more than {} items",
                self.max_items
            )));
        }
        self.items.extend(page_items);
        self.pages += 1;
        match page.get("nextCursor") {
            None | Some(Value::Null) => Ok(Next::Done(std::mem::take(&mut self.items))),
            Some(Value::String(next)) => {
                if self.pages >= self.max_pages {
                    return Err(WireError::Pagination(format!(
                        "{method} has more than {} pages",
                        self.max_pages
                    )));
                }
                if !self.seen.insert(next.to_string()) {
                    return Err(WireError::Pagination(format!(
                        "{method} gave the cursor {} a second time",
                        pinlog_core::render::quoted(next, 64)
                    )));
                }
                Ok(Next::More(next.to_string()))
            }
            Some(other) => Err(WireError::Malformed(format!(
                "{method}: nextCursor is {}, not a string",
                other.kind()
            ))),
        }
    }
}

/// Reads `method` to its end with [`Pages`]. `meta` is written into every request's params as
/// `_meta` (the stateless era needs it), or nothing.
pub async fn read_all(
    client: &mut Client,
    method: &str,
    key: &str,
    meta: Option<&[u8]>,
) -> Result<Items, WireError> {
    let mut pages = Pages::new(method, key, client.caps());
    let mut cursor: Option<String> = None;
    loop {
        let params = page_params(meta, cursor.as_deref());
        let result = client.call(method, &params).await?;
        match pages.page(result)? {
            Next::More(next) => cursor = Some(next),
            Next::Done(items) => return Ok(items),
        }
    }
}

/// A listing request's params: `_meta` (raw JSON, or nothing) and the cursor, if any.
pub fn page_params(meta: Option<&[u8]>, cursor: Option<&str>) -> Vec<u8> {
    let mut params = Out::default().raw("{");
    if let Some(m) = meta {
        params = params
            .raw("\"_meta\":")
            .raw(std::str::from_utf8(m).expect("UTF-8 meta"));
    }
    if let Some(c) = cursor {
        if meta.is_some() {
            params = params.raw(",");
        }
        params = params.raw("\"cursor\":").string(c);
    }
    params.raw("}").into_bytes()
}

/// Whether two readings hold the same items, whatever their order: each item is compared by its
/// canonical bytes (or, for an item with an undecidable number, by its value as read).
pub fn same_items(a: &Items, b: &Items) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let key =
        |v: &Value<'_>| json::to_canonical(v).unwrap_or_else(|_| format!("{v:?}").into_bytes());
    let mut ka: Vec<Vec<u8>> = a.iter().map(key).collect();
    let mut kb: Vec<Vec<u8>> = b.iter().map(key).collect();
    ka.sort();
    kb.sort();
    ka == kb
}
