//! A plugin's slash commands: Claude Code command files (`commands/NAME.md`) — front matter
//! `description`, `argument-hint` and `allowed-tools`, then the prompt, in which `$ARGUMENTS`
//! is the arguments' whole text and `$0`, `$1`, … each of their words from the first (Claude
//! Code's numbering since its 2.1.19) — named by the file, from the plugin (`plugin:NAME` where
//! two commands share a name).
//!
//! As in Claude Code, a shell line (`` !`git status` `` where a word starts, or a block fenced
//! ```` ```! ````) runs before the prompt is sent, its output in its place, and a file
//! reference (`@src/lib.rs`) brings the file's text along: the prompt asks the session for a
//! `Bash` call and a `Read` call ([`PromptPart::Call`]), which run as the session's rules and
//! the command's `allowed-tools` allow, never asking. A shell line that fails or is not allowed
//! stops the command; a file that cannot be read is said in its place.

use super::error::ManifestError;
use agentry::commands::{CommandArgument, CommandCall, CommandPrompt, PromptPart, SlashCommand};
use agentry::permission::{PermissionRule, RuleAction};
use agentry::tool::ContentBlock;
use agentry_front_matter::ToolList;
use futures::future::BoxFuture;
use regex::Regex;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The front matter a command file may have (Claude Code's other keys are read and unused).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct FrontMatter {
    description: Option<String>,
    argument_hint: Option<String>,
    allowed_tools: Option<ToolList>,
}

/// A plugin's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCommand {
    name: String,
    plugin: String,
    path: PathBuf,
    description: Option<String>,
    arguments: Vec<CommandArgument>,
    body: String,
    allowed_tools: Vec<String>,
}

/// The one argument a command takes: all that follows its name.
const ARGUMENTS: &str = "arguments";

/// What takes a file's place when it cannot be read.
const UNREAD: &str = "(the file could not be read)";

impl PluginCommand {
    /// The command in `path`, of the plugin `plugin`.
    pub fn read(path: &Path, plugin: &str) -> Result<Self, ManifestError> {
        let invalid = |message: String| ManifestError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (front, body): (FrontMatter, &str) = agentry_front_matter::read(&text)
            .map_err(|e| invalid(format!("invalid front matter: {e}")))?;
        let name = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .filter(|name| {
                !name.is_empty() && !name.contains(|c: char| c.is_whitespace() || c == ':')
            })
            .ok_or_else(|| invalid("the file's name is not a usable command name".to_owned()))?;
        let description = front.description.or_else(|| {
            body.lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(str::to_owned)
        });
        Ok(Self {
            name: name.to_owned(),
            plugin: plugin.to_owned(),
            path: path.to_path_buf(),
            description,
            arguments: vec![CommandArgument {
                name: ARGUMENTS.to_owned(),
                description: front.argument_hint,
                required: false,
            }],
            body: body.to_owned(),
            allowed_tools: front.allowed_tools.map(ToolList::items).unwrap_or_default(),
        })
    }

    /// The permission rules its `allowed-tools` writes, allowing their calls while its chat
    /// runs.
    pub fn allowed_tools(&self) -> &[String] {
        &self.allowed_tools
    }

    /// The commands of its shell lines, as written (before the arguments fill them).
    pub fn shell_lines(&self) -> Vec<String> {
        pieces(self.body.trim())
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Shell(command) => Some(command.trim().to_owned()),
                Piece::Text(_) => None,
            })
            .collect()
    }

    /// What is wrong with the command file that stops it from running, each said as a
    /// sentence: its `allowed-tools` that are not permission rules.
    pub fn problems(&self) -> Vec<String> {
        self.allowed_tools
            .iter()
            .filter_map(|target| {
                PermissionRule::parse(RuleAction::Allow, target)
                    .err()
                    .map(|error| {
                        format!("its allowed-tools `{target}` is not a permission rule: {error}")
                    })
            })
            .collect()
    }

    /// `text` with the arguments (`text`) in it.
    fn fill(&self, template: &str, text: &str) -> String {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut filled = template.replace("$ARGUMENTS", text);
        // Highest first, so that `$1` does not take the start of `$10`.
        for (index, word) in words.iter().enumerate().rev() {
            filled = filled.replace(&format!("${index}"), word);
        }
        filled
    }

    /// The prompt with `text` (the arguments) in it: its text, a `Bash` call for each shell
    /// line, and a `Read` call for each file it references, after the text.
    pub fn render(&self, text: &str) -> CommandPrompt {
        let mut parts = Vec::new();
        let mut references = Vec::new();
        for piece in pieces(self.body.trim()) {
            match piece {
                Piece::Text(template) => {
                    let filled = self.fill(template, text);
                    for reference in file_references(&filled) {
                        if !references.contains(&reference) {
                            references.push(reference);
                        }
                    }
                    parts.push(PromptPart::Content(ContentBlock::text(filled)));
                }
                Piece::Shell(command) => parts.push(PromptPart::Call(CommandCall {
                    tool: "Bash".to_owned(),
                    input: json!({"command": self.fill(command.trim(), text)}),
                    if_failed: None,
                })),
            }
        }
        for reference in references {
            parts.push(PromptPart::Content(ContentBlock::text(format!(
                "\n\n@{reference}:\n"
            ))));
            parts.push(PromptPart::Call(CommandCall {
                tool: "Read".to_owned(),
                input: json!({"file_path": reference}),
                if_failed: Some(UNREAD.to_owned()),
            }));
        }
        CommandPrompt {
            parts,
            allowed_tools: self.allowed_tools.clone(),
            source: Some(self.path.clone()),
        }
    }
}

/// A piece of a command file's body.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    /// Text, as written.
    Text(&'a str),
    /// A shell line's command: `` !`COMMAND` `` where a word starts, or the lines of a block
    /// fenced ```` ```! ````.
    Shell(&'a str),
}

/// A shell line: inline (its command the first group) or fenced (the second).
static SHELL_LINE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)(?:^|[ \t])!`([^`\n]+)`|^```!\n((?s:.*?))^```[ \t]*$").ok());

/// A file reference: `@` where a word starts, then a path with a `/` or a `.` in it.
static FILE_REFERENCE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)(?:^|\s)@([\w.-]*[/.][\w./-]*\w)").ok());

/// The body's text and shell lines, in order.
fn pieces(body: &str) -> Vec<Piece<'_>> {
    let Some(shell) = SHELL_LINE.as_ref() else {
        return vec![Piece::Text(body)];
    };
    let mut pieces = Vec::new();
    let mut at = 0;
    for found in shell.captures_iter(body) {
        let (Some(whole), Some(command)) = (found.get(0), found.get(1).or_else(|| found.get(2)))
        else {
            continue;
        };
        // The space before an inline line stays with the text.
        let start = whole.start() + whole.as_str().find(['!', '`']).unwrap_or(0);
        if start > at {
            pieces.push(Piece::Text(&body[at..start]));
        }
        pieces.push(Piece::Shell(command.as_str()));
        at = whole.end();
    }
    if at < body.len() {
        pieces.push(Piece::Text(&body[at..]));
    }
    pieces
}

/// The files `text` references (`@src/lib.rs`, `@README.md`: a word starting with `@` with a
/// `/` or a `.` in it), in order.
fn file_references(text: &str) -> Vec<String> {
    let Some(reference) = FILE_REFERENCE.as_ref() else {
        return Vec::new();
    };
    reference
        .captures_iter(text)
        .filter_map(|found| found.get(1).map(|path| path.as_str().to_owned()))
        .collect()
}

impl SlashCommand for PluginCommand {
    fn name(&self) -> &str {
        &self.name
    }

    fn origin(&self) -> Option<&str> {
        Some(&self.plugin)
    }

    fn kind_label(&self) -> Option<&str> {
        Some("plugin command")
    }

    fn description(&self) -> Option<String> {
        self.description.clone()
    }

    fn arguments(&self) -> &[CommandArgument] {
        &self.arguments
    }

    fn content(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<Vec<ContentBlock>, String>> {
        let text = arguments.get(ARGUMENTS).cloned().unwrap_or_default();
        let content: Vec<ContentBlock> = self.render(&text).content().cloned().collect();
        Box::pin(async move { Ok(content) })
    }

    fn prompt(
        &self,
        arguments: BTreeMap<String, String>,
    ) -> BoxFuture<'_, Result<CommandPrompt, String>> {
        let text = arguments.get(ARGUMENTS).cloned().unwrap_or_default();
        let prompt = self.render(&text);
        Box::pin(async move { Ok(prompt) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(file: &str) -> PluginCommand {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("deploy.md");
        std::fs::write(&path, file).unwrap();
        PluginCommand::read(&path, "ops").unwrap()
    }

    fn text(part: &PromptPart) -> &str {
        match part {
            PromptPart::Content(ContentBlock::Text { text }) => text,
            other => panic!("not text: {other:?}"),
        }
    }

    fn call(part: &PromptPart) -> &CommandCall {
        match part {
            PromptPart::Call(call) => call,
            other => panic!("not a call: {other:?}"),
        }
    }

    #[test]
    fn arguments_fill_the_whole_and_each_word() {
        let command = command(
            "---\ndescription: Deploy a service\nargument-hint: SERVICE ENV\nallowed-tools: Bash\n---\nDeploy $0 to $1 ($ARGUMENTS).\n",
        );
        assert_eq!(command.name(), "deploy");
        assert_eq!(command.origin(), Some("ops"));
        assert_eq!(command.description().as_deref(), Some("Deploy a service"));
        assert_eq!(
            command.arguments()[0].description.as_deref(),
            Some("SERVICE ENV")
        );
        let prompt = command.render("api staging");
        assert_eq!(prompt.parts.len(), 1, "{prompt:?}");
        assert_eq!(
            text(&prompt.parts[0]),
            "Deploy api to staging (api staging)."
        );
        assert_eq!(prompt.allowed_tools, ["Bash"]);
        assert!(prompt.source.unwrap().ends_with("deploy.md"));
        assert!(command.problems().is_empty());
    }

    #[test]
    fn shell_lines_become_bash_calls_in_their_place() {
        let command = command(
            "---\nallowed-tools: Bash(git status:*), Bash(git diff HEAD:*) Read\n---\n## Context\n- Status: !`git status --short`\n- Diff of $0:\n```!\ngit diff HEAD -- $0\n```\nMail ops@example.com if `x` fails!`y`\n",
        );
        let prompt = command.render("src/lib.rs");
        assert_eq!(
            prompt.allowed_tools,
            ["Bash(git status:*)", "Bash(git diff HEAD:*)", "Read"]
        );
        let parts = &prompt.parts;
        assert_eq!(parts.len(), 5, "{parts:?}");
        assert_eq!(text(&parts[0]), "## Context\n- Status: ");
        assert_eq!(call(&parts[1]).tool, "Bash");
        assert_eq!(call(&parts[1]).input["command"], "git status --short");
        assert_eq!(call(&parts[1]).if_failed, None);
        assert_eq!(text(&parts[2]), "\n- Diff of src/lib.rs:\n");
        // The arguments reach a shell line too: the rules judge the command as it runs.
        assert_eq!(
            call(&parts[3]).input["command"],
            "git diff HEAD -- src/lib.rs"
        );
        // Neither an address nor a backtick after a word is a shell line or a file.
        assert_eq!(text(&parts[4]), "\nMail ops@example.com if `x` fails!`y`");
    }

    #[test]
    fn file_references_are_read_after_the_text_once_each() {
        let command =
            command("Review @src/utils/helpers.js and @README.md, then @src/utils/helpers.js.\n");
        let parts = command.render("").parts;
        assert_eq!(parts.len(), 5, "{parts:?}");
        assert!(text(&parts[0]).starts_with("Review @src/utils/helpers.js and"));
        assert_eq!(text(&parts[1]), "\n\n@src/utils/helpers.js:\n");
        assert_eq!(call(&parts[2]).tool, "Read");
        assert_eq!(call(&parts[2]).input["file_path"], "src/utils/helpers.js");
        assert_eq!(call(&parts[2]).if_failed.as_deref(), Some(UNREAD));
        assert_eq!(call(&parts[4]).input["file_path"], "README.md");
    }

    #[test]
    fn allowed_tools_that_are_not_rules_are_said() {
        let command =
            command("---\nallowed-tools:\n  - Bash(git add:*)\n  - Bash(unclosed\n---\nGo.\n");
        assert_eq!(command.render("").allowed_tools.len(), 2);
        let problems = command.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("`Bash(unclosed`"), "{problems:?}");
    }
}
