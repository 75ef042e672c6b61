//! `[permissions]` as written in a configuration file (or the `permissions` of a Claude Code
//! settings file), each rule remembering the file it came from.

use agentry::permission::{PermissionError, PermissionRule, RuleAction, RuleOrigin};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One rule as written (`Read(secret/**)`), and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
pub struct WrittenRule {
    /// The rule's text.
    pub text: String,
    /// Where it came from (set when its file is read).
    pub origin: RuleOrigin,
}

impl From<String> for WrittenRule {
    fn from(text: String) -> Self {
        Self {
            text,
            origin: RuleOrigin::default(),
        }
    }
}

impl WrittenRule {
    /// The rule, or why it does not parse (naming its file).
    pub fn parse(&self, action: RuleAction) -> Result<PermissionRule, PermissionError> {
        PermissionRule::parse(action, &self.text)
            .map(|rule| rule.from_origin(self.origin.clone()))
            .map_err(|e| PermissionError::new(format!("{e} (in {})", self.origin)))
    }
}

/// Permission rules as written in configuration.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionRules {
    /// Rules that allow.
    #[serde(default)]
    pub allow: Vec<WrittenRule>,
    /// Rules that deny.
    #[serde(default)]
    pub deny: Vec<WrittenRule>,
    /// Rules that ask.
    #[serde(default)]
    pub ask: Vec<WrittenRule>,
    /// Folders besides the working directory that sessions may work in (relative ones start
    /// from the file's root, `~/` from the home folder).
    #[serde(default)]
    pub additional_directories: Vec<PathBuf>,
}

impl PermissionRules {
    /// These rules followed by `other`'s.
    pub fn merged(mut self, other: PermissionRules) -> Self {
        self.allow.extend(other.allow);
        self.deny.extend(other.deny);
        self.ask.extend(other.ask);
        self.additional_directories
            .extend(other.additional_directories);
        self
    }

    /// The same rules, marked as coming from `file`; its relative folders resolved.
    pub fn from_file(mut self, file: &Path) -> Self {
        let root = rule_root(file);
        let origin = RuleOrigin::file(file, &root);
        for rule in self
            .allow
            .iter_mut()
            .chain(&mut self.deny)
            .chain(&mut self.ask)
        {
            rule.origin = origin.clone();
        }
        for folder in &mut self.additional_directories {
            *folder = resolve_folder(folder, &root);
        }
        self
    }

    /// Every rule, with its action: deny rules first, then ask, then allow.
    pub fn rules(&self) -> impl Iterator<Item = (RuleAction, &WrittenRule)> {
        [
            (RuleAction::Deny, &self.deny),
            (RuleAction::Ask, &self.ask),
            (RuleAction::Allow, &self.allow),
        ]
        .into_iter()
        .flat_map(|(action, rules)| rules.iter().map(move |rule| (action, rule)))
    }
}

/// Where the `/path` patterns of a file's rules start: the project root for a project's file
/// (one in `.agentry/` or `.claude/`), the file's own folder otherwise.
pub fn rule_root(file: &Path) -> PathBuf {
    let folder = file.parent().unwrap_or(Path::new("/"));
    let in_project = matches!(
        folder.file_name().and_then(|name| name.to_str()),
        Some(".agentry" | ".claude")
    );
    match (in_project, folder.parent()) {
        (true, Some(project)) => project.to_path_buf(),
        _ => folder.to_path_buf(),
    }
}

/// A configured folder as an absolute path: `~/x` from the home folder, relative ones from
/// `root`.
fn resolve_folder(folder: &Path, root: &Path) -> PathBuf {
    match (folder.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => root.join(folder),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_remember_their_file_and_start_from_its_project() {
        let rules: PermissionRules = toml::from_str(
            "deny = [\"Read(/secret/**)\"]\nadditional_directories = [\"../docs\", \"/abs\"]",
        )
        .unwrap();
        let rules = rules.from_file(Path::new("/p/.agentry/config.toml"));
        let rule = rules.deny[0].parse(RuleAction::Deny).unwrap();
        assert_eq!(rule.origin.root.as_deref(), Some(Path::new("/p")));
        assert_eq!(
            rule.origin.file.as_deref(),
            Some(Path::new("/p/.agentry/config.toml"))
        );
        assert_eq!(
            rules.additional_directories,
            [PathBuf::from("/p/../docs"), PathBuf::from("/abs")]
        );
        assert_eq!(
            rule_root(Path::new("/home/u/.config/agentry/config.toml")),
            Path::new("/home/u/.config/agentry")
        );
        let broken = WrittenRule {
            text: "Bash(oops".to_owned(),
            origin: RuleOrigin::file("/p/.claude/settings.json", "/p"),
        };
        let error = broken.parse(RuleAction::Allow).unwrap_err().to_string();
        assert!(error.contains("/p/.claude/settings.json"), "{error}");
    }
}
