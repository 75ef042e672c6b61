//! The system prompt: a base prompt, the tools, the environment and the project's `AGENTS.md`.

use crate::model::ToolDefinition;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The base prompt of the stock agent.
pub const DEFAULT_BASE_PROMPT: &str = "You are agentry, an agent that helps the user with software \
engineering tasks in their project. Use the tools to inspect and change the project rather than \
guessing. Keep answers short and concrete. When a tool call fails, read the error, correct the \
call and go on.";

/// What the system prompt is made from.
#[derive(Debug, Clone)]
pub struct SystemPromptParts<'a> {
    /// The base prompt.
    pub base: &'a str,
    /// Instructions of the one session, after the base prompt.
    pub session_instructions: Option<&'a str>,
    /// The tools offered.
    pub tools: &'a [ToolDefinition],
    /// The session's working directory.
    pub cwd: &'a Path,
    /// The date to state (ISO 8601).
    pub date: String,
}

/// Builds the system prompt.
pub fn build_system_prompt(parts: &SystemPromptParts<'_>) -> String {
    let mut prompt = parts.base.trim_end().to_owned();
    if let Some(instructions) = parts.session_instructions {
        let _ = write!(
            prompt,
            "\n\n# Instructions for this session\n{}",
            instructions.trim_end()
        );
    }
    if !parts.tools.is_empty() {
        prompt.push_str("\n\n# Tools\n");
        for tool in parts.tools {
            let summary = tool.description.lines().next().unwrap_or_default();
            let _ = writeln!(prompt, "- {}: {summary}", tool.name);
        }
    }
    let _ = write!(
        prompt,
        "\n# Environment\nWorking directory: {}\nPlatform: {} ({})\nDate: {}\n",
        parts.cwd.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        parts.date
    );
    for (path, text) in project_instructions(parts.cwd) {
        let _ = write!(
            prompt,
            "\n# Project instructions ({})\n{}\n",
            path.display(),
            text.trim_end()
        );
    }
    prompt
}

/// The `AGENTS.md` files that apply to `cwd`: from the repository root (the nearest ancestor with
/// `.git`) down to `cwd`, outermost first; just `cwd`'s own outside a repository.
pub fn project_instructions(cwd: &Path) -> Vec<(PathBuf, String)> {
    let ancestors: Vec<&Path> = cwd.ancestors().collect();
    let root_index = ancestors
        .iter()
        .position(|dir| dir.join(".git").exists())
        .unwrap_or(0);
    ancestors[..=root_index]
        .iter()
        .rev()
        .filter_map(|dir| {
            let path = dir.join("AGENTS.md");
            std::fs::read_to_string(&path)
                .ok()
                .filter(|text| !text.trim().is_empty())
                .map(|text| (path, text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn includes_tools_environment_and_agents_md_from_repo_root_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("crate/src")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "Run cargo test.").unwrap();
        std::fs::write(root.join("crate/AGENTS.md"), "This crate is the parser.").unwrap();
        let cwd = root.join("crate/src");
        let tools = [ToolDefinition {
            name: "Read".into(),
            description: "Reads a file.\nMore detail.".into(),
            input_schema: json!({"type": "object"}),
        }];
        let mut parts = SystemPromptParts {
            base: "BASE",
            session_instructions: None,
            tools: &tools,
            cwd: &cwd,
            date: "2026-11-22".into(),
        };
        let prompt = build_system_prompt(&parts);
        assert!(prompt.starts_with("BASE\n\n# Tools\n- Read: Reads a file.\n"));
        parts.session_instructions = Some("Answer in French.");
        assert!(build_system_prompt(&parts).starts_with(
            "BASE\n\n# Instructions for this session\nAnswer in French.\n\n# Tools\n"
        ));
        assert!(prompt.contains(&format!("Working directory: {}", cwd.display())));
        assert!(prompt.contains("Date: 2026-11-22"));
        let outer = prompt.find("Run cargo test.").unwrap();
        let inner = prompt.find("This crate is the parser.").unwrap();
        assert!(outer < inner);
        assert!(!prompt.contains("More detail."));
    }

    #[test]
    fn outside_a_repository_only_cwds_own_agents_md_counts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "outer").unwrap();
        let cwd = dir.path().join("sub");
        std::fs::create_dir(&cwd).unwrap();
        assert!(project_instructions(&cwd).is_empty());
        std::fs::write(cwd.join("AGENTS.md"), "inner").unwrap();
        assert_eq!(project_instructions(&cwd).len(), 1);
    }
}
