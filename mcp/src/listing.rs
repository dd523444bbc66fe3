//! Reading a paginated listing (`tools/list`, `prompts/list`) to its end, and reading it again.

use std::collections::HashSet;

use pinlog_core::json::{self, Value};

use crate::client::Client;
use crate::error::WireError;
use crate::jsonrpc::Out;

/// One complete reading of a listing: every item of every page, in order.
pub type Items = Vec<Value<'static>>;

/// Reads `method` page by page until a page has no `nextCursor`. `key` is the member holding the
/// items (`tools`, `prompts`); `meta` is written into every request's params as `_meta` (the
/// stateless era needs it), or nothing.
///
/// An empty-string cursor is a cursor, not the end. A cursor seen before, or more pages than the
/// caps allow, is an error: a list is never returned cut short.
pub async fn read_all(
    client: &mut Client,
    method: &str,
    key: &str,
    meta: Option<&[u8]>,
) -> Result<Items, WireError> {
    let max_pages = client.caps().max_pages;
    let max_items = client.caps().max_items;
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..max_pages {
        let mut params = Out::default().raw("{");
        let mut first = true;
        if let Some(m) = meta {
            params = params
                .raw("\"_meta\":")
                .raw(std::str::from_utf8(m).expect("UTF-8 meta"));
            first = false;
        }
        if let Some(c) = &cursor {
            if !first {
                params = params.raw(",");
            }
            params = params.raw("\"cursor\":").string(c);
        }
        let params = params.raw("}").into_bytes();
        let result = client.call(method, &params).await?;
        let page = result
            .as_object()
            .ok_or_else(|| WireError::Malformed(format!("the {method} result is not an object")))?;
        crate::surface::check_result_type(page, method)?;
        let page_items = page.get(key).and_then(Value::as_array).ok_or_else(|| {
            WireError::Malformed(format!("the {method} result has no \"{key}\" array"))
        })?;
        if items.len() + page_items.len() > max_items {
            return Err(WireError::TooLarge(format!(
                "{method} lists more than {max_items} items"
            )));
        }
        items.extend(page_items.iter().cloned());
        match page.get("nextCursor") {
            None | Some(Value::Null) => return Ok(items),
            Some(Value::String(next)) => {
                if !seen.insert(next.to_string()) {
                    return Err(WireError::Pagination(format!(
                        "{method} gave the cursor {} a second time",
                        pinlog_core::render::quoted(next, 64)
                    )));
                }
                cursor = Some(next.to_string());
            }
            Some(other) => {
                return Err(WireError::Malformed(format!(
                    "{method}: nextCursor is {}, not a string",
                    other.kind()
                )))
            }
        }
    }
    Err(WireError::Pagination(format!(
        "{method} has more than {max_pages} pages"
    )))
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
