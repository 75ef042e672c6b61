//! A plugin's slash commands: Claude Code command files (`commands/NAME.md`) — front matter
//! `description` and `argument-hint`, then the prompt, in which `$ARGUMENTS` is the arguments'
//! whole text and `$0`, `$1`, … each of their words from the first (Claude Code's numbering
//! since its 2.1.19) — named by the file, from the plugin (`plugin:NAME` where two commands
//! share a name). What a command file asks that agentry does not do — shell lines
//! (`` !`git status` ``) run before the prompt is sent, files (`@src/lib.rs`) read into it — is
//! said when the command is loaded ([`PluginCommand::unsupported`]); the model reads them as
//! written.

use super::manifest::ManifestError;
use agentry::commands::{CommandArgument, SlashCommand};
use agentry::tool::ContentBlock;
use futures::future::BoxFuture;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The front matter a command file may have (Claude Code's other keys are read and unused).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct FrontMatter {
    description: Option<String>,
    argument_hint: Option<String>,
}

/// A plugin's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginCommand {
    name: String,
    plugin: String,
    description: Option<String>,
    arguments: Vec<CommandArgument>,
    body: String,
    unsupported: Vec<String>,
}

/// The one argument a command takes: all that follows its name.
const ARGUMENTS: &str = "arguments";

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
            .filter(|name| !name.is_empty() && !name.contains(char::is_whitespace))
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
            description,
            arguments: vec![CommandArgument {
                name: ARGUMENTS.to_owned(),
                description: front.argument_hint,
                required: false,
            }],
            body: body.to_owned(),
            unsupported: unsupported(body),
        })
    }

    /// What the command file asks that agentry does not do, each said as a sentence.
    pub fn unsupported(&self) -> &[String] {
        &self.unsupported
    }

    /// The prompt with `text` (the arguments) in it.
    pub fn render(&self, text: &str) -> String {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut prompt = self.body.replace("$ARGUMENTS", text);
        // Highest first, so that `$1` does not take the start of `$10`.
        for (index, word) in words.iter().enumerate().rev() {
            prompt = prompt.replace(&format!("${index}"), word);
        }
        prompt.trim().to_owned()
    }
}

/// What of Claude Code's command file language `body` uses that agentry does not carry out:
/// shell lines (`` !`COMMAND` `` where a word starts, or a ```` ```! ```` block) and file
/// references (`@PATH`).
fn unsupported(body: &str) -> Vec<String> {
    let found = |pattern: &str| {
        regex::Regex::new(pattern)
            .ok()
            .and_then(|re| re.find(body).map(|found| found.as_str().trim().to_owned()))
    };
    let mut said = Vec::new();
    if found(r"(?m)(^|\s)!`[^`]+`|^```!").is_some() {
        said.push(
            "its shell lines (!`…`) are not run before the prompt is sent: the model reads them \
             as written"
                .to_owned(),
        );
    }
    if let Some(reference) = found(r"(?m)(^|\s)@[\w.-]*[/.][\w./-]*\w") {
        said.push(format!(
            "its file references ({reference}) are not read into the prompt: the model reads \
             them as written"
        ));
    }
    said
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
        Box::pin(async move { Ok(vec![ContentBlock::text(self.render(&text))]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_fill_the_whole_and_each_word() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("deploy.md");
        std::fs::write(
            &path,
            "---\ndescription: Deploy a service\nargument-hint: SERVICE ENV\nallowed-tools: Bash\n---\nDeploy $0 to $1 ($ARGUMENTS).\n",
        )
        .unwrap();
        let command = PluginCommand::read(&path, "ops").unwrap();
        assert_eq!(command.name(), "deploy");
        assert_eq!(command.origin(), Some("ops"));
        assert_eq!(command.description().as_deref(), Some("Deploy a service"));
        assert_eq!(
            command.arguments()[0].description.as_deref(),
            Some("SERVICE ENV")
        );
        assert_eq!(
            command.render("api staging"),
            "Deploy api to staging (api staging)."
        );
        assert!(command.unsupported().is_empty());
    }

    #[test]
    fn shell_lines_and_file_references_are_said_not_dropped() {
        let said = unsupported("Status: !`git status`\nReview @src/utils/helpers.js please.\n");
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains("shell lines"), "{said:?}");
        assert!(said[1].contains("(@src/utils/helpers.js)"), "{said:?}");
        assert_eq!(unsupported("```!\nnpm test\n```\n").len(), 1);
        // Neither an address nor a backtick after a word is either.
        assert!(unsupported("Mail ops@example.com if `x` fails!`y`\n").is_empty());
    }
}
