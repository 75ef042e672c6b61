//! The `WebSearch` tool.

use crate::backend::{Backend, SearchError};
use crate::hit::{filter, numbered};
use agentry_plugin::tool::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// The `WebSearch` tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchInput {
    /// What to search for.
    pub query: String,
    /// Only results from these domains (and their subdomains).
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Never results from these domains (and their subdomains).
    #[serde(default)]
    pub blocked_domains: Vec<String>,
}

/// The `WebSearch` tool, over a back-end (or none, which each call says how to fix).
pub struct WebSearch {
    backend: Result<Backend, String>,
}

impl WebSearch {
    /// WebSearch over `backend`; an error (no back-end, an unusable one) is what each call says.
    pub fn new(backend: Result<Backend, SearchError>) -> Self {
        Self {
            backend: backend.map_err(|e| e.to_string()),
        }
    }
}

impl Tool for WebSearch {
    type Input = WebSearchInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "WebSearch"
    }

    fn description(&self) -> String {
        "Searches the web and returns results as a numbered list of title, URL and snippet.\n\
         - Use it for information beyond what you know, or newer than it.\n\
         - allowed_domains keeps results to those domains; blocked_domains leaves domains out.\n\
         - Read a result's page with WebFetch when the snippet is not enough."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Fetch
    }

    fn title(&self, input: &WebSearchInput) -> String {
        format!("Search the web: {}", input.query)
    }

    async fn call(&self, input: WebSearchInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let backend = self.backend.as_ref().map_err(ToolError::failed)?;
        if input.query.trim().is_empty() {
            return Err(ToolError::InvalidInput("`query` is empty".to_owned()));
        }
        let search = backend.search(&input.query, &input.allowed_domains, &input.blocked_domains);
        let searched = ctx.cancel.run_until_cancelled(search).await;
        let hits = searched
            .ok_or(ToolError::Cancelled)?
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let hits = filter(hits, &input.allowed_domains, &input.blocked_domains);
        let mut output = ToolOutput::text(numbered(&input.query, &hits));
        output.raw_output = Some(json!({
            "query": input.query,
            "backend": backend.label(),
            "results": hits,
        }));
        Ok(output)
    }
}
