//! `CountWords`: one complete tool, shown whole in `docs/book/src/writing-a-plugin.md`.

use agentry_plugin::tool::{
    Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolProgress,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

/// Counts the words of a text file, reporting how far it got.
pub struct CountWords;

/// CountWords' input. Its doc comments are the JSON Schema the model reads.
#[derive(Deserialize, JsonSchema)]
pub struct CountWordsInput {
    /// The file, absolute or relative to the working directory.
    pub file: String,
}

impl Tool for CountWords {
    type Input = CountWordsInput;
    type Output = String;

    fn name(&self) -> &str {
        "CountWords"
    }
    fn description(&self) -> String {
        "Counts the words of a text file.".to_owned()
    }
    /// Read-kind calls run without asking, as long as their locations are in the workspace.
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    /// What the user sees for this call.
    fn title(&self, input: &CountWordsInput) -> String {
        format!("Count words in {}", input.file)
    }
    /// The files the call touches. Editors follow them, and they are what the permission check
    /// sees: a location outside the workspace makes the call ask first. A read-kind tool that
    /// touches files and declares none is never asked about, wherever they are.
    fn locations(&self, input: &CountWordsInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::path(cwd.join(&input.file))]
    }
    async fn call(&self, input: CountWordsInput, ctx: ToolContext) -> Result<String, ToolError> {
        // Relative paths are the session's working directory's, not the process's.
        let path = ctx.resolve_path(&input.file);
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
        let mut words = 0;
        for (index, line) in text.lines().enumerate() {
            // Stop when the user cancels: the call then ends as cancelled.
            if ctx.cancel.is_cancelled() {
                return Err(ToolError::Cancelled);
            }
            words += line.split_whitespace().count();
            if (index + 1) % 10_000 == 0 {
                // Progress shows in the front-end while the call runs.
                let so_far = format!("{words} words in the first {} lines", index + 1);
                ctx.progress
                    .report(ToolProgress::Content(vec![ToolContent::text(so_far)]));
                tokio::task::yield_now().await;
            }
        }
        // What a call returns is what the model reads.
        Ok(format!("{} has {words} words.", path.display()))
    }
}
