//! How a tool answers: an [`Out`] of fixed members, a name from outside made safe to show, and
//! the arguments read strictly.

use pinlog_core::json::{Object, Value};
use pinlog_mcp::server::ToolResult;

use crate::safe::{safe_name, Out, SafeStr};

/// The longest argument read.
const MAX_ARGUMENT: usize = 600;

pub(super) fn obj(members: Vec<(&'static str, Out)>) -> Out {
    Out::Obj(members)
}

pub(super) fn s(text: &'static str) -> Out {
    Out::fixed(text)
}

pub(super) fn answer(out: Out, is_error: bool) -> ToolResult {
    ToolResult::structured(out.to_json(), is_error)
}

pub(super) fn invalid(message: &'static str) -> ToolResult {
    answer(
        obj(vec![
            ("status", s("invalid-arguments")),
            ("message", s(message)),
        ]),
        true,
    )
}

/// A name from outside, and a flag when it had to be changed to be shown.
pub(super) fn name_members(
    field: &'static str,
    altered: &'static str,
    name: &str,
) -> Vec<(&'static str, Out)> {
    let (shown, changed) = safe_name(name);
    let mut m = vec![(field, Out::Str(SafeStr::name(&shown)))];
    if changed {
        m.push((altered, Out::Bool(true)));
    }
    m
}

/// Checks that `arguments` has only the members `allowed`, and returns the string member `name`
/// (at most [`MAX_ARGUMENT`] bytes); `Ok(None)` when absent.
pub(super) fn string_arg<'a>(
    arguments: &'a Object<'_>,
    allowed: &[&str],
    name: &str,
) -> Result<Option<&'a str>, ToolResult> {
    if arguments.iter().any(|(k, _)| !allowed.contains(&k)) {
        return Err(invalid("an argument this tool does not take was given"));
    }
    match arguments.get(name) {
        None => Ok(None),
        Some(Value::String(v)) if !v.is_empty() && v.len() <= MAX_ARGUMENT => Ok(Some(v)),
        Some(Value::String(_)) => Err(invalid("the argument is empty or too long")),
        Some(_) => Err(invalid("the argument must be a string")),
    }
}
