//! `Summarize`: a tool that uses what the host offers, as WebFetch and Read do, shown whole in
//! `docs/book/src/writing-a-plugin.md`: the editor's own view of a file, and a side question to the
//! session's model.

use agentry_plugin::tool::{
    SideQuestion, Tool, ToolCallLocation, ToolContext, ToolError, ToolKind,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

/// Summarises a text file with the session's model.
pub struct Summarize;

/// Summarize's input.
#[derive(Deserialize, JsonSchema)]
pub struct SummarizeInput {
    /// The file, absolute or relative to the working directory.
    pub file: String,
}

impl Tool for Summarize {
    type Input = SummarizeInput;
    type Output = String;

    fn name(&self) -> &str {
        "Summarize"
    }
    fn description(&self) -> String {
        "Summarises a text file in a few sentences.".to_owned()
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Read
    }
    fn title(&self, input: &SummarizeInput) -> String {
        format!("Summarise {}", input.file)
    }
    fn locations(&self, input: &SummarizeInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::path(cwd.join(&input.file))]
    }
    async fn call(&self, input: SummarizeInput, ctx: ToolContext) -> Result<String, ToolError> {
        let path = ctx.resolve_path(&input.file);
        // An editor offers its own view of the files (unsaved changes included): read through
        // it when it does, else from the disk.
        let text = match &ctx.client.files {
            Some(editor) => editor.read_text_file(path.clone()).await,
            None => tokio::fs::read_to_string(&path)
                .await
                .map_err(|e| e.to_string()),
        }
        .map_err(|e| ToolError::failed(format!("cannot read {}: {e}", path.display())))?;
        // A side question goes to the session's model with no tools and no history; the host
        // counts its tokens with the session's.
        let model =
            ctx.host.side_questions.as_ref().ok_or_else(|| {
                ToolError::failed("this agent offers no side questions to its tools")
            })?;
        let question = SideQuestion::new(
            "You summarise files in at most three sentences.",
            format!("Summarise this file:\n\n{text}"),
        );
        let answer = model.ask(question).await.map_err(ToolError::failed)?;
        Ok(answer.text)
    }
}
