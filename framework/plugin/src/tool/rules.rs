//! What the patterns of a tool's permission rules (`Tool(pattern)`) are about, and what one call
//! offers them to match.

use crate::tool::ToolKind;
use serde::{Deserialize, Serialize};

/// What a tool's rule patterns mean. The host reads path patterns itself (in Claude Code's four
/// forms, against the call's canonical locations); a tool with a pattern language of its own
/// (Bash's command prefixes, WebFetch's `domain:`) matches its [`RuleSubjects`] itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RulePatterns {
    /// Paths the tool reads: `Read(…)` rules apply to it as well as rules naming it.
    ReadsFiles,
    /// Paths the tool changes: `Edit(…)` rules apply to it as well as rules naming it.
    EditsFiles,
    /// Other paths, matched against the call's locations.
    Paths,
    /// The tool's own pattern language, matched against the call's [`RuleSubjects`].
    Own,
    /// Calls have nothing a pattern could match: `Tool(…)` matches no call (and is reported).
    None,
}

impl RulePatterns {
    /// The default for a tool of `kind`: paths for the kinds that work on files, none for the
    /// rest.
    pub fn for_kind(kind: ToolKind) -> RulePatterns {
        match kind {
            ToolKind::Read
            | ToolKind::Search
            | ToolKind::Edit
            | ToolKind::Delete
            | ToolKind::Move => RulePatterns::Paths,
            _ => RulePatterns::None,
        }
    }

    /// Whether patterns are paths the host matches against the call's locations.
    pub fn are_paths(self) -> bool {
        matches!(
            self,
            RulePatterns::ReadsFiles | RulePatterns::EditsFiles | RulePatterns::Paths
        )
    }

    /// The name of the rules that apply to every tool of this family (`Read`, `Edit`), if any.
    pub fn family(self) -> Option<&'static str> {
        match self {
            RulePatterns::ReadsFiles => Some("Read"),
            RulePatterns::EditsFiles => Some("Edit"),
            _ => None,
        }
    }
}

/// What one call of a tool with its own pattern language does, in the parts its rules are
/// matched against one by one: a command line's simple commands, a URL's host.
///
/// A deny or ask rule matches the call when it matches any part or variant (and asks when it
/// matches a `possible` one); allow rules cover the call only when each part is matched by one
/// of them, and nothing is `hidden`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSubjects {
    /// The parts.
    pub parts: Vec<String>,
    /// Other spellings of the parts that deny and ask rules match too, and allow rules need not
    /// cover (a wrapper's whole command line, `nohup rm x` beside `rm x`).
    #[serde(default)]
    pub variants: Vec<String>,
    /// What the call may also run, though it cannot be told (a word of a program not known to
    /// leave its arguments alone: `setsid rm x`, `watch 'rm x'`): a deny or ask rule that
    /// matches one asks the user, and never denies.
    #[serde(default)]
    pub possible: Vec<String>,
    /// Patterns that would allow exactly what the call does (`git status:*` for each of a
    /// command line's commands, `domain:docs.rs`): what a front-end that cannot ask suggests.
    #[serde(default)]
    pub suggestions: Vec<String>,
    /// Why some of what the call does cannot be seen (a command line that does not parse, an
    /// `eval`): such a call is never allowed by a rule with a pattern, and asks when a deny or
    /// ask rule with a pattern could have matched what is hidden.
    pub hidden: Option<String>,
    /// Whether the call's locations are files it writes (a command line's redirections):
    /// `Edit(…)` rules and the protected paths judge them as they judge the file tools' edits,
    /// and an allow rule or the mode must cover each.
    #[serde(default)]
    pub locations_are_writes: bool,
    /// Whether the call may write a file that cannot be named before it runs (a redirection to
    /// `$f`, one after a `cd`): no `Edit(…)` rule or protected path can judge it, so the user
    /// is asked, in every mode but bypass.
    #[serde(default)]
    pub writes_unseen: bool,
    /// Why a program's arguments may run a command no rule can see, if they may (`vim -c
    /// '!x=r; ${x}m …'`): allow rules still judge the program, and a deny or ask rule with a
    /// pattern asks, as it does for what is `hidden`.
    #[serde(default)]
    pub arguments_unseen: Option<String>,
}

impl RuleSubjects {
    /// Subjects that are all in view.
    pub fn visible(parts: Vec<String>) -> Self {
        Self {
            parts,
            ..Self::default()
        }
    }
}
