//! **Write**: creates or replaces a file, atomically, reporting a diff.

use crate::files::TextFiles;
use crate::state::ReadFiles;
use agentry_plugin::tool::{
    RulePatterns, Tool, ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

/// Writes a whole file.
#[derive(Debug, Clone, Copy, Default)]
pub struct Write;

/// Write's input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The file to write (absolute, or relative to the working directory).
    pub file_path: String,
    /// The whole new content of the file.
    pub content: String,
}

impl Tool for Write {
    type Input = WriteInput;
    type Output = ToolOutput;

    fn name(&self) -> &str {
        "Write"
    }

    fn description(&self) -> String {
        "Writes a file, replacing it if it exists (creating missing directories). An existing file \
         must have been read in this session first, and must not have changed since. Prefer Edit \
         for changing part of a file."
            .to_owned()
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    /// `Edit(…)` rules apply to it too.
    fn rule_patterns(&self) -> RulePatterns {
        RulePatterns::EditsFiles
    }

    fn title(&self, input: &WriteInput) -> String {
        format!("Write {}", input.file_path)
    }

    fn locations(&self, input: &WriteInput, cwd: &Path) -> Vec<ToolCallLocation> {
        vec![ToolCallLocation::line(cwd.join(&input.file_path), 1)]
    }

    async fn call(&self, input: WriteInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let read_files = ReadFiles::of(&ctx);
        let files = TextFiles::of(&ctx);
        let path = files.path_for(&ctx, &input.file_path)?;
        let old_text = match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_dir() => {
                return Err(ToolError::failed(format!(
                    "{} is a directory: give the path of a file.",
                    path.display()
                )));
            }
            Ok(_) => {
                let current = files.read(&path).await?;
                files.check_fresh(&read_files, &path, &current)?;
                Some(current)
            }
            Err(_) => None,
        };
        files.write(&path, input.content.clone()).await?;
        files.saw(&read_files, &path, &input.content);
        let lines = input.content.lines().count();
        let summary = match &old_text {
            None => format!("Created {} ({lines} lines).", path.display()),
            Some(_) => format!("Wrote {} ({lines} lines).", path.display()),
        };
        Ok(ToolOutput {
            raw_output: Some(serde_json::json!({
                "path": path,
                "created": old_text.is_none(),
                "bytes": input.content.len(),
            })),
            content: vec![ToolContent::Diff {
                path: path.clone(),
                old_text,
                new_text: input.content,
            }],
            for_model: Some(summary),
        })
    }
}
