//! The prompt, in cache-friendly order: the system prompt holds what stays the same across
//! folders and days (the base prompt, the tools, the session's instructions); the environment
//! (working directory, platform, date, and the instruction files of the agent's
//! [`InstructionSource`], if it has one) comes after it and the tools' definitions, at the head
//! of the conversation, so that sessions in different folders share the model's cached prefix
//! up to it.

use crate::model::ToolDefinition;
use crate::tool::ReadDenials;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where an agent's instruction files come from: files its users keep beside their work that
/// the model should follow there (the stock agent reads `AGENTS.md` and `CLAUDE.md`, see
/// `agentry_stock::memory`). An agent without a source reads none.
pub trait InstructionSource: Send + Sync {
    /// The files that apply in `cwd`, most general first, each with its text; none that
    /// `denials` covers.
    fn instruction_files(&self, cwd: &Path, denials: &ReadDenials) -> Vec<(PathBuf, String)>;
}

/// What the system prompt is made from: what stays the same from folder to folder and day to
/// day, so that a model's prompt cache holds across sessions.
#[derive(Debug, Clone)]
pub struct SystemPromptParts<'a> {
    /// The base prompt.
    pub base: &'a str,
    /// The tools offered.
    pub tools: &'a [ToolDefinition],
    /// The groups of tools held back for `ToolSearch` to find (an MCP server's name, a
    /// provider's), with how many tools each has.
    pub deferred_tools: &'a [(String, usize)],
    /// Instructions of the one session, after the tools.
    pub session_instructions: Option<&'a str>,
}

/// Builds the system prompt: the base prompt, the tools, the session's instructions. What
/// varies with the folder and the day is the [`environment_block`], which the chat puts at the
/// head of the conversation, after the system prompt and the tools' definitions.
pub fn build_system_prompt(parts: &SystemPromptParts<'_>) -> String {
    let mut prompt = String::new();
    let base = parts.base.trim_end();
    if !base.is_empty() {
        let _ = writeln!(prompt, "{base}");
    }
    let section = |prompt: &mut String, heading: &str| {
        if !prompt.is_empty() {
            prompt.push('\n');
        }
        let _ = writeln!(prompt, "# {heading}");
    };
    if !parts.tools.is_empty() {
        section(&mut prompt, "Tools");
        for tool in parts.tools {
            let summary = tool.description.lines().next().unwrap_or_default();
            let _ = writeln!(prompt, "- {}: {summary}", tool.name);
        }
    }
    if !parts.deferred_tools.is_empty() {
        section(&mut prompt, "Tools to search for");
        let _ = writeln!(
            prompt,
            "These tools are available but not listed above: find them with ToolSearch (words or a \
             regular expression), then call them."
        );
        for (group, count) in parts.deferred_tools {
            let _ = writeln!(prompt, "- {group}: {count} tools");
        }
    }
    if let Some(instructions) = parts.session_instructions {
        section(&mut prompt, "Instructions for this session");
        let _ = writeln!(prompt, "{}", instructions.trim_end());
    }
    prompt
}

/// What the model is told of where and when it works: the working directory, the platform and
/// `date` (ISO 8601), then `instructions`, the instruction files that apply there (from the
/// agent's [`InstructionSource`]), most general first.
pub fn environment_block(cwd: &Path, date: &str, instructions: &[(PathBuf, String)]) -> String {
    let mut block = format!(
        "# Environment\nWorking directory: {}\nPlatform: {} ({})\nDate: {date}\n",
        cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    for (path, text) in instructions {
        let _ = write!(
            block,
            "\n# Instructions ({})\n{}\n",
            path.display(),
            text.trim_end()
        );
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_system_prompt_is_the_base_the_tools_then_the_sessions_instructions() {
        let tools = [ToolDefinition {
            name: "Read".into(),
            description: "Reads a file.\nMore detail.".into(),
            input_schema: json!({"type": "object"}),
        }];
        let mut parts = SystemPromptParts {
            base: "BASE",
            tools: &tools,
            deferred_tools: &[],
            session_instructions: None,
        };
        let prompt = build_system_prompt(&parts);
        assert_eq!(prompt, "BASE\n\n# Tools\n- Read: Reads a file.\n");
        parts.session_instructions = Some("Answer in French.");
        assert_eq!(
            build_system_prompt(&parts),
            "BASE\n\n# Tools\n- Read: Reads a file.\n\n# Instructions for this session\nAnswer in French.\n"
        );
        let deferred = [("github".to_owned(), 30), ("jira".to_owned(), 12)];
        parts.deferred_tools = &deferred;
        let prompt = build_system_prompt(&parts);
        assert!(
            prompt.contains("# Tools to search for\nThese tools are available but not listed above: find them with ToolSearch (words or a regular expression), then call them.\n- github: 30 tools\n- jira: 12 tools\n\n# Instructions"),
            "{prompt}"
        );
    }

    #[test]
    fn without_a_base_prompt_the_system_prompt_starts_with_the_tools() {
        let tools = [ToolDefinition {
            name: "Lookup".into(),
            description: "Looks up an order.".into(),
            input_schema: json!({"type": "object"}),
        }];
        let parts = SystemPromptParts {
            base: "",
            tools: &tools,
            deferred_tools: &[],
            session_instructions: Some("Be brief."),
        };
        assert_eq!(
            build_system_prompt(&parts),
            "# Tools\n- Lookup: Looks up an order.\n\n# Instructions for this session\nBe brief.\n"
        );
    }

    #[test]
    fn the_environment_has_the_folder_the_date_then_the_instruction_files_in_order() {
        let cwd = Path::new("/work/crate/src");
        let files = [
            (
                PathBuf::from("/work/AGENTS.md"),
                "Run cargo test.\n".to_owned(),
            ),
            (
                PathBuf::from("/work/crate/AGENTS.md"),
                "This crate is the parser.".to_owned(),
            ),
        ];
        let block = environment_block(cwd, "2026-11-22", &files);
        assert!(block.starts_with("# Environment\nWorking directory: /work/crate/src\n"));
        assert!(block.contains("Date: 2026-11-22"));
        assert!(block.ends_with(
            "\n# Instructions (/work/AGENTS.md)\nRun cargo test.\n\n# Instructions (/work/crate/AGENTS.md)\nThis crate is the parser.\n"
        ));
    }
}
