//! `[web_search]` in agentry's configuration: which back-end, where, and with which key.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The `[web_search]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchSettings {
    /// `searxng`, `brave`, `tavily` or `json`.
    pub backend: BackendName,
    /// The back-end's address: a SearXNG instance's base URL (required for it), the JSON API's
    /// URL with `{query}` and `{count}` where they go (required for it), or another address for
    /// Brave's or Tavily's API.
    pub url: Option<String>,
    /// The API key (Brave, Tavily), `${ENV}` allowed.
    pub api_key: Option<String>,
    /// Results asked for (10 by default).
    pub max_results: Option<usize>,
    /// Seconds a search may take (20 by default).
    pub timeout_secs: Option<u64>,
    /// The JSON back-end: how its answer is read.
    pub json: Option<JsonFields>,
}

/// The back-ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendName {
    /// A SearXNG instance (`/search?format=json`).
    Searxng,
    /// The Brave Search API.
    Brave,
    /// The Tavily search API.
    Tavily,
    /// Any JSON API, read through [`JsonFields`].
    Json,
}

/// Where the JSON back-end's request and answer put things.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonFields {
    /// `GET` (default) or `POST` (the body is `{"query": …, "count": …}`).
    #[serde(default)]
    pub method: Option<String>,
    /// Headers sent, `${ENV}` allowed in values.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The dotted path to the list of results in the answer (`data.items`; empty: the answer
    /// is the list).
    pub results: String,
    /// Each result's title field (dotted path).
    pub title: String,
    /// Each result's URL field.
    pub url: String,
    /// Each result's snippet field.
    pub snippet: Option<String>,
}

/// What to say when no back-end is configured.
pub const HOW_TO_CONFIGURE: &str = "WebSearch has no search back-end: add one to agentry's config.toml, for example\n\
[web_search]\nbackend = \"searxng\"   # or \"brave\", \"tavily\", \"json\"\nurl = \"http://localhost:8888\"   # your SearXNG instance\n\
# api_key = \"${BRAVE_API_KEY}\" for brave or tavily";
