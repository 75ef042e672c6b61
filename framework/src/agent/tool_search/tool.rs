//! The `ToolSearch` tool: finds the tools held back from a session's requests and has them
//! sent from the next request on.

use super::DeferredTools;
use crate::provider::SimpleProvider;
use crate::tool::{Tool, ToolContext, ToolError, ToolKind};
use schemars::JsonSchema;
use serde::Deserialize;
use std::fmt::Write as _;

/// The tool's name.
pub const TOOL_SEARCH: &str = "ToolSearch";

/// How many tools a search returns unless it asks for another number, and the most it may.
const DEFAULT_RESULTS: usize = 5;
const MOST_RESULTS: usize = 20;

/// `ToolSearch`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// Words saying what the tool does (`create issue`), or a regular expression over the
    /// tools' names and descriptions (`^mcp__github__`, `pull.*request`).
    pub query: String,
    /// How many tools to return at the most (5 unless given, 20 at the most).
    #[serde(default)]
    pub max_results: Option<usize>,
}

/// Finds held-back tools by words or a regular expression.
struct ToolSearch;

impl Tool for ToolSearch {
    type Input = ToolSearchInput;
    type Output = String;

    fn name(&self) -> &str {
        TOOL_SEARCH
    }

    fn description(&self) -> String {
        "Finds tools that are available but not yet offered (the system prompt names their \
         servers): give words saying what the tool does, or a regular expression over tool names \
         and descriptions. The tools found can be called from your next response on."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn title(&self, input: &ToolSearchInput) -> String {
        format!("Search tools: {}", input.query)
    }

    async fn call(&self, input: ToolSearchInput, ctx: ToolContext) -> Result<String, ToolError> {
        let deferred = DeferredTools::of(&ctx.state);
        if !deferred.any() {
            return Ok(
                "No tool is held back in this session: every tool is offered already.".to_owned(),
            );
        }
        let most = input
            .max_results
            .unwrap_or(DEFAULT_RESULTS)
            .clamp(1, MOST_RESULTS);
        let found = deferred
            .search(&input.query, most)
            .map_err(ToolError::failed)?;
        if found.is_empty() {
            return Ok(format!(
                "No tool matches `{}`: try other words, or a regular expression.",
                input.query
            ));
        }
        let mut answer = format!(
            "{} tool{} found, offered from your next response on:\n",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        );
        for tool in found {
            let summary = tool.description.lines().next().unwrap_or_default();
            let _ = writeln!(answer, "- {}: {summary}", tool.name);
        }
        Ok(answer)
    }
}

/// The provider of `ToolSearch`, which an agent gets unless its tool search is
/// [off](super::ToolSearchMode::Never). The tool is offered only while tools are held back.
pub struct ToolSearchProvider;

impl ToolSearchProvider {
    /// The provider, as an agent registers it.
    pub fn provider() -> SimpleProvider {
        SimpleProvider::new(
            "tool_search",
            "Finds the tools held back from requests when a session's tools are many.",
        )
        .with_tool(ToolSearch)
    }
}
