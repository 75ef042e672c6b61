//! Rules as users write them (`Bash(git status:*)`, `Read(secret/**)`, `kind:fetch`, `*`), and
//! where each came from.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A malformed mode or rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PermissionError(String);

impl PermissionError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleAction {
    /// Run without asking.
    Allow,
    /// Refuse.
    Deny,
    /// Ask the user.
    Ask,
}

impl RuleAction {
    /// The configuration key rules of this action are listed under.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleAction::Allow => "allow",
            RuleAction::Deny => "deny",
            RuleAction::Ask => "ask",
        }
    }
}

/// What a rule matches, written as users write it: `Write`, `Edit(src/**)`, `kind:execute`, `*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum RuleTarget {
    /// Every tool.
    Any,
    /// A tool by name (or, for `Read` and `Edit`, every tool that reads or edits files),
    /// optionally only calls matching a pattern: a path for file tools, the tool's own
    /// language for others (`Bash(npm run:*)`, `WebFetch(domain:example.com)`).
    Tool {
        /// The tool's name.
        name: String,
        /// The pattern inside the parentheses.
        pattern: Option<String>,
    },
    /// Every tool of a kind.
    Kind(crate::tool::ToolKind),
}

impl RuleTarget {
    /// The pattern, for a rule that has one.
    pub fn pattern(&self) -> Option<&str> {
        match self {
            RuleTarget::Tool {
                pattern: Some(pattern),
                ..
            } => Some(pattern),
            _ => None,
        }
    }
}

impl FromStr for RuleTarget {
    type Err = PermissionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s == "*" {
            return Ok(RuleTarget::Any);
        }
        if let Some(kind) = s.strip_prefix("kind:") {
            return kind
                .parse()
                .map(RuleTarget::Kind)
                .map_err(|e| PermissionError(e.to_string()));
        }
        let (name, pattern) = match s.split_once('(') {
            Some((name, rest)) => {
                let pattern = rest.strip_suffix(')').ok_or_else(|| {
                    PermissionError(format!("rule `{s}` opens a parenthesis it does not close"))
                })?;
                // `Bash()` and `Bash(*)` are the whole tool, as in Claude Code.
                let pattern = Some(pattern.trim()).filter(|p| !p.is_empty() && *p != "*");
                (name, pattern.map(str::to_owned))
            }
            None => (s, None),
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(PermissionError(format!(
                "rule `{s}` does not name a tool (expected `Tool`, `Tool(pattern)`, `kind:KIND` or `*`)"
            )));
        }
        Ok(RuleTarget::Tool {
            name: name.to_owned(),
            pattern,
        })
    }
}

impl TryFrom<String> for RuleTarget {
    type Error = PermissionError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<RuleTarget> for String {
    fn from(target: RuleTarget) -> String {
        target.to_string()
    }
}

impl fmt::Display for RuleTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleTarget::Any => f.write_str("*"),
            RuleTarget::Tool {
                name,
                pattern: None,
            } => f.write_str(name),
            RuleTarget::Tool {
                name,
                pattern: Some(p),
            } => write!(f, "{name}({p})"),
            RuleTarget::Kind(kind) => write!(f, "kind:{kind}"),
        }
    }
}

/// Where a rule came from: the file it is written in (none for a flag or code), and the folder
/// its `/path` patterns start from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleOrigin {
    /// The file the rule is written in; `None` for the command line or code.
    pub file: Option<PathBuf>,
    /// Where `/path` patterns start: the project root for a project's files and the command
    /// line, the file's folder for a user's; `None` for the session's working directory.
    pub root: Option<PathBuf>,
}

impl RuleOrigin {
    /// A rule of the file `file`, whose `/path` patterns start at `root`.
    pub fn file(file: impl Into<PathBuf>, root: impl Into<PathBuf>) -> Self {
        Self {
            file: Some(file.into()),
            root: Some(root.into()),
        }
    }

    /// A rule given on the command line in `project`.
    pub fn command_line(project: &Path) -> Self {
        Self {
            file: None,
            root: Some(project.to_path_buf()),
        }
    }
}

impl fmt::Display for RuleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, &self.root) {
            (Some(file), _) => write!(f, "{}", file.display()),
            (None, Some(_)) => f.write_str("the command line"),
            (None, None) => f.write_str("the agent's code"),
        }
    }
}

/// One rule of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRule {
    /// What it does.
    pub action: RuleAction,
    /// What it matches.
    pub target: RuleTarget,
    /// Where it came from.
    #[serde(default)]
    pub origin: RuleOrigin,
}

impl PermissionRule {
    /// A rule from its action and its target as written, given in code (its `/path` patterns
    /// start at the session's working directory).
    pub fn parse(action: RuleAction, target: &str) -> Result<Self, PermissionError> {
        Ok(Self {
            action,
            target: target.parse()?,
            origin: RuleOrigin::default(),
        })
    }

    /// The same rule, from `origin`.
    pub fn from_origin(mut self, origin: RuleOrigin) -> Self {
        self.origin = origin;
        self
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` (from {})", self.target, self.origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_targets_parse_and_print_as_written() {
        for text in [
            "*",
            "Bash",
            "Bash(git status:*)",
            "kind:switch_mode",
            "Read(//etc/**)",
        ] {
            assert_eq!(text.parse::<RuleTarget>().unwrap().to_string(), text);
        }
        for bad in ["Bash(oops", "kind:write", "", "two words"] {
            assert!(bad.parse::<RuleTarget>().is_err(), "{bad}");
        }
        for whole in ["Bash()", "Bash(*)"] {
            assert_eq!(whole.parse::<RuleTarget>().unwrap().to_string(), "Bash");
        }
    }
}
