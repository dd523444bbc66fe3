//! The tools a server offers, as it lists them and as it calls them.

use pinlog_core::json::Object;

use super::Json;

/// One tool as `tools/list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// A JSON Schema object (`"type": "object"` at the root).
    pub input_schema: Json,
    /// Shown as the `readOnlyHint` annotation (with `destructiveHint` its opposite,
    /// `idempotentHint` the same, `openWorldHint` false).
    pub read_only: bool,
}

impl ToolDef {
    pub(crate) fn to_json(&self) -> Json {
        let mut t = Json::obj([("name", Json::str(&self.name))]);
        if let Some(title) = &self.title {
            t.push("title", Json::str(title));
        }
        t.push("description", Json::str(&self.description));
        t.push("inputSchema", self.input_schema.clone());
        let mut annotations = Json::obj([]);
        if let Some(title) = &self.title {
            annotations.push("title", Json::str(title));
        }
        annotations.push("readOnlyHint", Json::Bool(self.read_only));
        annotations.push("destructiveHint", Json::Bool(!self.read_only));
        annotations.push("idempotentHint", Json::Bool(self.read_only));
        annotations.push("openWorldHint", Json::Bool(false));
        t.push("annotations", annotations);
        t
    }
}

/// What a tool answered: `text` as its one text content block, `structured` as
/// `structuredContent` (revisions 2025-06-18 and later), `is_error` as `isError`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub text: String,
    pub structured: Option<Json>,
    pub is_error: bool,
}

impl ToolResult {
    /// A result whose text is the JSON of `value`, also given as structured content.
    pub fn structured(value: Json, is_error: bool) -> ToolResult {
        ToolResult {
            text: value.to_text(),
            structured: Some(value),
            is_error,
        }
    }
}

/// Why a call was not made: answered as a JSON-RPC error (-32602) rather than a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// No tool of that name.
    UnknownTool,
    /// The call cannot be made as asked; the message must be fixed text (it goes to the model).
    Invalid(&'static str),
}

/// The tools a server offers.
pub trait Tools {
    /// Every tool, in the order `tools/list` shows them.
    fn list(&self) -> Vec<ToolDef>;
    /// Calls tool `name` with `arguments` (an empty object when the request had none).
    fn call(&self, name: &str, arguments: &Object<'_>) -> Result<ToolResult, CallError>;
}
