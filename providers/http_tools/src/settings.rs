//! `[[http_tools]]` in agentry's configuration: each entry a plain HTTP endpoint or a LangServe
//! base.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One `[[http_tools]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpToolEntry {
    /// The tool's name (for a LangServe entry, the runnable's last path segment by default;
    /// with several tools behind one base, a prefix for their names).
    pub name: Option<String>,
    /// What the tool does, for the model (a LangServe runnable's schema title by default).
    pub description: Option<String>,
    /// A plain endpoint: its URL, `${ENV}` allowed.
    pub url: Option<String>,
    /// A plain endpoint's method: `POST` (the input is the JSON body; default) or `GET` (the
    /// input's fields are the query).
    pub method: Option<String>,
    /// Headers sent with every call, `${ENV}` allowed in values.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A plain endpoint's input schema (JSON Schema; an object with no properties by default).
    pub input_schema: Option<Value>,
    /// A LangServe runnable's base URL (`{base}/input_schema`, `{base}/invoke`), or a base with
    /// several runnables under it (see `tools`).
    pub langserve: Option<String>,
    /// The runnables under a LangServe base, by path (`["add", "multiply"]`); `["*"]` finds them
    /// in the base's `openapi.json`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The tool's kind: `fetch` (default), `read`, `search`, `execute`, `edit` or `other`.
    pub kind: Option<String>,
    /// Seconds a call may take (60 by default).
    pub timeout_secs: Option<u64>,
}
