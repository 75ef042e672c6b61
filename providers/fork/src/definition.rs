//! Sub-agent definitions: Markdown files with YAML front matter, in the format Claude Code users
//! already have (`name`, `description`, `tools`, `model`, `maxTurns`, `permissionMode`; the body
//! is the system prompt).

use agentry::permission::PermissionMode;
use agentry_front_matter::{self as front_matter, ToolList};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The name of the sub-agent that always exists.
pub const GENERAL_PURPOSE: &str = "general-purpose";

/// A sub-agent the model may hand work to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgentDefinition {
    /// Its name (lowercase letters, digits and hyphens): the Agent tool's `subagent_type`.
    pub name: String,
    /// When to use it, for the model.
    pub description: String,
    /// The tools it may call; all the caller's when `None`.
    pub tools: Option<Vec<String>>,
    /// Its model (`PROVIDER/MODEL`, or Claude Code's `sonnet` / `opus` / `haiku`); the
    /// caller's when `None` (or `inherit`).
    pub model: Option<String>,
    /// The most model requests it may make.
    pub max_turns: Option<u32>,
    /// Its permission mode; the caller's when `None`.
    pub permission_mode: Option<PermissionMode>,
    /// Its system prompt.
    pub system_prompt: String,
    /// The file it came from (`None` for the built-in one).
    pub path: Option<PathBuf>,
}

impl SubAgentDefinition {
    /// The general-purpose sub-agent: every tool, the caller's model.
    pub fn general_purpose() -> Self {
        Self {
            name: GENERAL_PURPOSE.to_owned(),
            description: "A general-purpose agent for researching complex questions, searching \
                          for code and carrying out multi-step tasks on its own."
                .to_owned(),
            tools: None,
            model: None,
            max_turns: None,
            permission_mode: None,
            system_prompt: "You are a sub-agent: another agent handed you the task below. Do it \
                            thoroughly with the tools you have, then answer with a concise \
                            report of what you found or did — your answer is all the other \
                            agent will see, so include the details it needs (paths, names, \
                            results)."
                .to_owned(),
            path: None,
        }
    }

    /// Reads a definition from the text of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, DefinitionError> {
        let invalid = |line, message: String| DefinitionError::new(path, line, message);
        let (front, body): (FrontMatter, &str) = front_matter::read_document(path, text)?;
        let name = front
            .name
            .ok_or_else(|| invalid(Some(1), "a sub-agent needs a `name`".to_owned()))?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(invalid(
                front_matter::line_of(text, "name"),
                format!(
                    "`{name}` is not a sub-agent name: use lowercase letters, digits and hyphens"
                ),
            ));
        }
        let description = front
            .description
            .filter(|d| !d.trim().is_empty())
            .ok_or_else(|| {
                invalid(
                    Some(1),
                    format!("the sub-agent `{name}` needs a `description`"),
                )
            })?;
        let permission_mode = front
            .permission_mode
            .map(|mode| permission_mode(&mode))
            .transpose()
            .map_err(|message| invalid(front_matter::line_of(text, "permission"), message))?;
        let system_prompt = body.trim().to_owned();
        if system_prompt.is_empty() {
            return Err(invalid(
                None,
                format!(
                    "the sub-agent `{name}` has no system prompt (the text after the front matter)"
                ),
            ));
        }
        Ok(Self {
            name,
            description,
            tools: front.tools.map(ToolList::items),
            model: front.model.filter(|model| model != "inherit"),
            max_turns: front.max_turns,
            permission_mode,
            system_prompt,
            path: Some(path.to_path_buf()),
        })
    }
}

/// A definition that cannot be used: which file, which line, what is wrong.
pub type DefinitionError = front_matter::DocumentError;

/// The front matter, as written (Claude Code's camelCase keys or snake_case ones).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ToolList>,
    model: Option<String>,
    #[serde(alias = "maxTurns")]
    max_turns: Option<u32>,
    #[serde(alias = "permissionMode")]
    permission_mode: Option<String>,
    /// Claude Code's display colour: accepted, not used.
    #[allow(dead_code)]
    color: Option<String>,
}

/// A permission mode as either agentry or Claude Code spells it.
fn permission_mode(text: &str) -> Result<PermissionMode, String> {
    match text {
        "acceptEdits" => Ok(PermissionMode::AcceptEdits),
        "bypassPermissions" => Ok(PermissionMode::Bypass),
        other => other
            .parse()
            .map_err(|e: agentry::permission::PermissionError| e.to_string()),
    }
}

/// The sub-agents of `folders` (`*.md`), the general-purpose one first; a later folder's
/// definition replaces an earlier one of the same name. Unusable files come back as errors.
pub fn load(folders: &[PathBuf]) -> (Vec<SubAgentDefinition>, Vec<DefinitionError>) {
    let files = folders.iter().flat_map(|folder| {
        let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        files.sort();
        files
    });
    let (mut found, errors) =
        front_matter::load_named(files, SubAgentDefinition::parse, |d| d.name.as_str());
    let general = SubAgentDefinition::general_purpose();
    found.entry(general.name.clone()).or_insert(general);
    let mut definitions: Vec<SubAgentDefinition> = found.into_values().collect();
    definitions.sort_by_key(|d| (d.name != GENERAL_PURPOSE, d.name.clone()));
    (definitions, errors)
}

/// Where definitions are read from, lowest precedence first: the user's
/// (`~/.config/agentry/agents/`), then the project's `.claude/agents/` (so existing definitions
/// work unchanged) and `.agentry/agents/`.
pub fn folders(project: &Path, user_config: Option<&Path>) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = user_config
        .map(|dir| dir.join("agents"))
        .into_iter()
        .collect();
    folders.push(project.join(".claude/agents"));
    folders.push(project.join(".agentry/agents"));
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    const REVIEWER: &str = "---\nname: code-reviewer\ndescription: Reviews code for bugs.\ntools: Read, Grep, Glob\nmodel: inherit\nmaxTurns: 5\npermissionMode: acceptEdits\ncolor: blue\n---\nYou review code.\n";

    #[test]
    fn claude_codes_format_reads_unchanged() {
        let definition = SubAgentDefinition::parse(Path::new("/p/reviewer.md"), REVIEWER).unwrap();
        assert_eq!(definition.name, "code-reviewer");
        assert_eq!(definition.description, "Reviews code for bugs.");
        assert_eq!(
            definition.tools.as_deref(),
            Some(&["Read".to_owned(), "Grep".to_owned(), "Glob".to_owned()][..])
        );
        assert_eq!(definition.model, None);
        assert_eq!(definition.max_turns, Some(5));
        assert_eq!(
            definition.permission_mode,
            Some(PermissionMode::AcceptEdits)
        );
        assert_eq!(definition.system_prompt, "You review code.");
    }

    #[test]
    fn bad_definitions_say_which_file_and_line() {
        let bad_name = "---\nname: Code Reviewer\ndescription: x\n---\nBody\n";
        let error = SubAgentDefinition::parse(Path::new("/p/a.md"), bad_name).unwrap_err();
        assert_eq!(
            error.to_string(),
            "/p/a.md:2: `Code Reviewer` is not a sub-agent name: use lowercase letters, digits and hyphens"
        );
        let bad_yaml = "---\nname: a\ndescription: x\nmaxTurns: lots\n---\nBody\n";
        let error = SubAgentDefinition::parse(Path::new("/p/b.md"), bad_yaml).unwrap_err();
        assert_eq!(error.line, Some(4), "{error}");
        let unknown = "---\nname: a\ndescription: x\nmood: happy\n---\nBody\n";
        assert!(SubAgentDefinition::parse(Path::new("/p/c.md"), unknown).is_err());
        let no_body = "---\nname: a\ndescription: x\n---\n\n";
        assert!(
            SubAgentDefinition::parse(Path::new("/p/d.md"), no_body)
                .unwrap_err()
                .message
                .contains("no system prompt")
        );
    }
}
