//! [`PermissionPolicy`]: a session's mode and rules, and the decision they make of one call.

use crate::permission::path_pattern::{PatternBase, resolve};
use crate::permission::protected::protected;
use crate::permission::{
    PermissionMode, PermissionRule, RememberedAnswers, RuleAction, RuleTarget,
};
use crate::tool::ReadDenials;
use crate::tool::{PreparedCall, RulePatterns, RuleSubjects, ToolCallLocation, ToolKind};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The call a decision is about.
pub struct CallSubject<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// The tool's kind.
    pub kind: ToolKind,
    /// What the tool's rule patterns mean.
    pub patterns: RulePatterns,
    /// The prepared call (for rule patterns of the tool's own language).
    pub call: &'a dyn PreparedCall,
    /// The call's locations, canonicalised.
    pub locations: &'a [ToolCallLocation],
    /// Whether any location is outside the session's workspace roots.
    pub outside_workspace: bool,
    /// The session's working directory, where relative path patterns start.
    pub cwd: &'a Path,
    /// The digest of the tool's definition (see
    /// [`definition_digest`](crate::permission::definition_digest)): an "always allow" given
    /// for another definition does not hold.
    pub definition: &'a str,
}

/// What the policy decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run the call.
    Allow,
    /// Refuse it, for this reason (the model reads it).
    Deny(String),
    /// Ask the user.
    Ask,
}

/// A session's permission settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionPolicy {
    /// The mode.
    pub mode: PermissionMode,
    /// The rules, from configuration and flags.
    pub rules: Vec<PermissionRule>,
    /// Folders besides the working directory the session may work in (Claude Code's
    /// `additionalDirectories`); sessions add them to their workspace roots.
    #[serde(default)]
    pub additional_directories: Vec<PathBuf>,
    /// Where relative path patterns (`secret/**`) start, when not the session's working
    /// directory: a server whose clients may start sessions in other folders of its workspace
    /// keeps its rules meaning what they meant in its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<PathBuf>,
    /// Files and folders protected besides the built-in ones (see [`protected`]): the agent's
    /// data folder, and the files a trusted project's settings run (a hook's script, a plugin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_paths: Vec<PathBuf>,
}

impl PermissionPolicy {
    /// A policy of `mode` and `rules`, with no additional directories.
    pub fn new(mode: PermissionMode, rules: Vec<PermissionRule>) -> Self {
        Self {
            mode,
            rules,
            additional_directories: Vec::new(),
            relative_to: None,
            protected_paths: Vec::new(),
        }
    }

    /// A policy of `mode` and rules written as users write them, given in code:
    /// `PermissionPolicy::with_rules(PermissionMode::Default, &[(RuleAction::Deny, "Bash(rm:*)")])`.
    pub fn with_rules(
        mode: PermissionMode,
        rules: &[(RuleAction, &str)],
    ) -> Result<Self, crate::permission::PermissionError> {
        let rules = rules
            .iter()
            .map(|(action, target)| PermissionRule::parse(*action, target))
            .collect::<Result<_, _>>()?;
        Ok(Self::new(mode, rules))
    }

    /// Decides one call; `remembered` holds the session's "always" answers.
    pub fn decide(&self, call: &CallSubject<'_>, remembered: &RememberedAnswers) -> Decision {
        let home = dirs::home_dir();
        let parts = CallParts::of(call, self.rules_cwd(call.cwd), home.as_deref());
        let rules = |action| {
            self.rules
                .iter()
                .filter(move |rule| rule.action == action && applies(rule, call))
        };
        // `Edit(…)` rules judge the files a command line writes.
        let write_rules = |action| {
            self.rules
                .iter()
                .filter(move |rule| rule.action == action && judges_writes(rule))
        };
        if let Some(rule) = rules(RuleAction::Deny).find(|rule| parts.any_match(rule)) {
            return Decision::Deny(format!(
                "{} is denied by the permission rule {rule}",
                call.tool_name
            ));
        }
        if let Some(rule) = write_rules(RuleAction::Deny).find(|rule| parts.any_write_match(rule)) {
            return Decision::Deny(format!(
                "{} writes a file the permission rule {rule} denies",
                call.tool_name
            ));
        }
        if self.mode == PermissionMode::Plan && !call.kind.is_read_only() {
            return Decision::Deny(format!(
                "{} is not available in plan mode, which allows only read-only tools: finish the plan first",
                call.tool_name
            ));
        }
        if remembered.rejected.contains(call.tool_name) {
            return Decision::Deny(format!(
                "the user rejected {} for the rest of this session",
                call.tool_name
            ));
        }
        // What a deny or ask rule cannot see (an `eval`, a command that does not parse, a
        // word a program may run) might be what it is there to stop: the user decides.
        let guards = || {
            rules(RuleAction::Deny)
                .chain(rules(RuleAction::Ask))
                .filter(|rule| rule.target.pattern().is_some())
        };
        // So might a write no `Edit(…)` rule can name, for a tool whose writes they judge.
        let write_guards = || write_rules(RuleAction::Deny).chain(write_rules(RuleAction::Ask));
        let writes_judged = parts.subjects.locations_are_writes;
        if parts.subjects.hidden.is_some()
            && (guards().next().is_some() || (writes_judged && write_guards().next().is_some()))
        {
            return Decision::Ask;
        }
        if guards().any(|rule| parts.possible_match(rule))
            || (parts.subjects.arguments_unseen.is_some() && guards().next().is_some())
        {
            return Decision::Ask;
        }
        // Files that configure what runs are the user's to change, whatever allows the call.
        // A file written that cannot be named, or that has other names, might be one of them.
        if self.mode != PermissionMode::Bypass
            && (parts.subjects.writes_unseen
                || parts.writes_hard_linked()
                || parts.writes_protected(home.as_deref(), &self.protected_paths))
        {
            return Decision::Ask;
        }
        // A call that asks for more than its tool's confinement is the user's to allow.
        if rules(RuleAction::Ask).any(|rule| parts.any_match(rule))
            || write_rules(RuleAction::Ask).any(|rule| parts.any_write_match(rule))
            || (call.call.escalation().is_some() && self.mode != PermissionMode::Bypass)
        {
            return Decision::Ask;
        }
        let answered = remembered.rules();
        let allow_rules =
            || rules(RuleAction::Allow).chain(answered.iter().filter(|rule| applies(rule, call)));
        let allowed_outright = rules(RuleAction::Allow).any(|rule| rule.target.pattern().is_none())
            || remembered.allows_tool(call.tool_name, call.definition);
        let writes_allowed = || {
            let by_mode = matches!(
                self.mode,
                PermissionMode::AcceptEdits | PermissionMode::Bypass
            ) && !call.outside_workspace;
            by_mode
                || parts.writes_covered(
                    write_rules(RuleAction::Allow)
                        .chain(answered.iter().filter(|rule| judges_writes(rule))),
                )
        };
        if allowed_outright || (parts.all_covered(allow_rules()) && writes_allowed()) {
            return Decision::Allow;
        }
        if call.outside_workspace && self.mode != PermissionMode::Bypass {
            return Decision::Ask;
        }
        let allowed_by_mode = match self.mode {
            PermissionMode::Bypass => true,
            PermissionMode::AcceptEdits => call.kind.runs_unasked() || call.kind.is_file_edit(),
            PermissionMode::Default | PermissionMode::Plan => call.kind.runs_unasked(),
        };
        if allowed_by_mode {
            Decision::Allow
        } else {
            Decision::Ask
        }
    }

    /// The path patterns of the deny rules that apply to reading files with the tool
    /// `tool_name` (`Read(…)` rules, and rules naming the tool): what a search through folders
    /// leaves out.
    pub fn read_denials(&self, tool_name: &str, cwd: &Path) -> ReadDenials {
        let home = dirs::home_dir();
        let cwd = self.rules_cwd(cwd);
        let patterns = self
            .rules
            .iter()
            .filter(|rule| rule.action == RuleAction::Deny)
            .filter(|rule| match &rule.target {
                RuleTarget::Tool { name, .. } => name == "Read" || name == tool_name,
                _ => false,
            })
            .filter_map(|rule| {
                let pattern = rule.target.pattern()?;
                resolve(pattern, pattern_base(rule, cwd, home.as_deref())).ok()
            })
            .collect();
        ReadDenials::new(patterns)
    }

    /// This policy judging by its rules alone: what no rule decides is allowed, the mode's
    /// asking left out. For a call a hook answered the asking for, whose rewritten input deny
    /// and ask rules still judge.
    pub fn rules_only(&self) -> Self {
        Self {
            mode: PermissionMode::Bypass,
            ..self.clone()
        }
    }

    /// Whether `rule` matches `call` as a hook's `if` filter reads it: the rule is about the
    /// call's tool and its pattern matches a part of the call (a command of a command line, a
    /// path by any of its spellings), or might (a part no rule can see, a command that may
    /// run). A filter fails open, as Claude Code's does: it selects which hooks run, it
    /// guards nothing.
    pub fn filter_matches(&self, rule: &PermissionRule, call: &CallSubject<'_>) -> bool {
        if !applies(rule, call) {
            return false;
        }
        let home = dirs::home_dir();
        let parts = CallParts::of(call, self.rules_cwd(call.cwd), home.as_deref());
        let unseen = parts.subjects.hidden.is_some() || parts.subjects.arguments_unseen.is_some();
        parts.any_match(rule)
            || parts.possible_match(rule)
            || (rule.target.pattern().is_some() && unseen)
    }

    /// Where relative path patterns start for a session in `cwd`.
    fn rules_cwd<'a>(&'a self, cwd: &'a Path) -> &'a Path {
        self.relative_to.as_deref().unwrap_or(cwd)
    }
}

/// Rules that would allow exactly `call`, as a user would write them: `Bash(git status:*)` for
/// each command of a command line (and `Edit(./out.txt)` for each file it writes),
/// `Write(src/lib.rs)` (or `Read(//etc/hosts)` outside the working directory) for each file,
/// the tool's name for a tool without patterns. None for a call part of which no rule can see.
pub fn allow_rules(call: &CallSubject<'_>) -> Vec<String> {
    let tool = call.tool_name;
    let cwd = agentry_plugin::paths::canonical_path(call.cwd);
    let path_rule = |tool: &str, location: &ToolCallLocation| match location.path.strip_prefix(&cwd)
    {
        Ok(inside) if !inside.as_os_str().is_empty() => {
            format!("{tool}(./{})", inside.display())
        }
        _ => format!("{tool}(/{})", location.path.display()),
    };
    match call.patterns {
        RulePatterns::Own => {
            let subjects = call.call.rule_subjects();
            if subjects.hidden.is_some() {
                return Vec::new();
            }
            let mut rules: Vec<String> = subjects
                .suggestions
                .iter()
                .map(|pattern| format!("{tool}({pattern})"))
                .collect();
            if subjects.locations_are_writes {
                rules.extend(
                    call.locations
                        .iter()
                        .map(|location| path_rule("Edit", location)),
                );
            }
            rules.dedup();
            rules
        }
        RulePatterns::None => vec![tool.to_owned()],
        RulePatterns::ReadsFiles | RulePatterns::EditsFiles | RulePatterns::Paths => {
            let rules: Vec<String> = call
                .locations
                .iter()
                .map(|location| path_rule(tool, location))
                .collect();
            if rules.is_empty() {
                vec![tool.to_owned()]
            } else {
                rules
            }
        }
    }
}

/// Whether `rule` judges the files a command line writes: an `Edit(…)` or `Write(…)` rule.
fn judges_writes(rule: &PermissionRule) -> bool {
    matches!(&rule.target, RuleTarget::Tool { name, .. } if name == "Edit" || name == "Write")
}

/// Whether `rule` is about the call's tool: every tool, its kind, its name, (`Read`, `Edit`)
/// the family of tools it belongs to, or (`mcp__server`, `mcp__server__*`) the MCP server it
/// comes from.
fn applies(rule: &PermissionRule, call: &CallSubject<'_>) -> bool {
    match &rule.target {
        RuleTarget::Any => true,
        RuleTarget::Kind(kind) => *kind == call.kind,
        RuleTarget::Tool { name, .. } => {
            name == call.tool_name
                || call.patterns.family() == Some(name.as_str())
                || names_its_server(name, call.tool_name)
        }
    }
}

/// Whether `rule_name` is `mcp__SERVER` or `mcp__SERVER__*` for the MCP tool `tool_name`
/// (`mcp__SERVER__TOOL`), as in Claude Code.
fn names_its_server(rule_name: &str, tool_name: &str) -> bool {
    let server = rule_name.strip_suffix("__*").unwrap_or(rule_name);
    server.starts_with("mcp__")
        && !server["mcp__".len()..].contains("__")
        && tool_name
            .strip_prefix(server)
            .is_some_and(|rest| rest.starts_with("__"))
}

/// Where the path patterns of `rule` start in a session in `cwd`.
fn pattern_base<'a>(
    rule: &'a PermissionRule,
    cwd: &'a Path,
    home: Option<&'a Path>,
) -> PatternBase<'a> {
    PatternBase {
        cwd,
        root: rule.origin.root.as_deref(),
        home,
    }
}

/// What rule patterns are matched against in one call: its locations for path patterns, its
/// subjects for patterns of the tool's own language.
struct CallParts<'a> {
    call: &'a CallSubject<'a>,
    /// Where relative path patterns start.
    cwd: &'a Path,
    home: Option<&'a Path>,
    subjects: RuleSubjects,
}

impl<'a> CallParts<'a> {
    fn of(call: &'a CallSubject<'a>, cwd: &'a Path, home: Option<&'a Path>) -> Self {
        let subjects = match call.patterns {
            RulePatterns::Own => call.call.rule_subjects(),
            _ => RuleSubjects::default(),
        };
        Self {
            call,
            cwd,
            home,
            subjects,
        }
    }

    /// How many parts there are.
    fn len(&self) -> usize {
        if self.call.patterns.are_paths() {
            self.call.locations.len()
        } else {
            self.subjects.parts.len()
        }
    }

    /// Which parts the pattern of `rule` matches (none when the rule has no pattern).
    fn matching(&self, rule: &PermissionRule) -> Vec<bool> {
        if rule.target.pattern().is_none() {
            return vec![false; self.len()];
        }
        match self.call.patterns {
            RulePatterns::ReadsFiles | RulePatterns::EditsFiles | RulePatterns::Paths => {
                self.paths_matching(rule, self.call.locations)
            }
            RulePatterns::Own => self
                .subjects
                .parts
                .iter()
                .map(|part| self.matches_own(rule, part))
                .collect(),
            RulePatterns::None => Vec::new(),
        }
    }

    /// Whether the pattern of `rule` (of the tool's own language) matches `subject`.
    fn matches_own(&self, rule: &PermissionRule, subject: &str) -> bool {
        rule.target
            .pattern()
            .is_some_and(|pattern| self.call.call.matches_rule(pattern, subject))
    }

    /// Which of `locations` the path pattern of `rule` matches.
    fn paths_matching(&self, rule: &PermissionRule, locations: &[ToolCallLocation]) -> Vec<bool> {
        let Some(pattern) = rule.target.pattern() else {
            return vec![true; locations.len()];
        };
        let base = pattern_base(rule, self.cwd, self.home);
        match resolve(pattern, base) {
            Ok(pattern) => locations
                .iter()
                .map(|location| pattern.matches(&location.path))
                .collect(),
            Err(_) => vec![false; locations.len()],
        }
    }

    /// The files the call writes: an editing tool's locations, or a command line's
    /// redirections.
    fn written(&self) -> &[ToolCallLocation] {
        let writes = match self.call.patterns {
            RulePatterns::Own => self.subjects.locations_are_writes,
            RulePatterns::EditsFiles => true,
            RulePatterns::Paths => matches!(
                self.call.kind,
                ToolKind::Edit | ToolKind::Delete | ToolKind::Move
            ),
            RulePatterns::ReadsFiles | RulePatterns::None => false,
        };
        if writes { self.call.locations } else { &[] }
    }

    /// The files a command line writes, which `Edit(…)` rules judge.
    fn command_writes(&self) -> &[ToolCallLocation] {
        if self.call.patterns == RulePatterns::Own && self.subjects.locations_are_writes {
            self.call.locations
        } else {
            &[]
        }
    }

    /// Whether `rule` (an `Edit(…)` rule) matches a file the command line writes.
    fn any_write_match(&self, rule: &PermissionRule) -> bool {
        self.paths_matching(rule, self.command_writes())
            .into_iter()
            .any(|m| m)
    }

    /// Whether `rules` together cover every file the command line writes.
    fn writes_covered<'r>(&self, rules: impl Iterator<Item = &'r PermissionRule>) -> bool {
        let writes = self.command_writes();
        let mut covered = vec![false; writes.len()];
        for rule in rules {
            for (covered, matched) in covered.iter_mut().zip(self.paths_matching(rule, writes)) {
                *covered |= matched;
            }
        }
        covered.into_iter().all(|c| c)
    }

    /// Whether a file the command line writes in place has other names (`ln .git/config
    /// notes.txt` makes `>> notes.txt` write `.git/config`). The file tools replace a file
    /// rather than write into it, so only a command line's writes are in question.
    fn writes_hard_linked(&self) -> bool {
        self.command_writes()
            .iter()
            .any(|location| agentry_plugin::paths::has_other_names(&location.path))
    }

    /// Whether the call writes a protected file (see [`protected`]).
    fn writes_protected(&self, home: Option<&Path>, protected_paths: &[PathBuf]) -> bool {
        self.written()
            .iter()
            .any(|location| protected(&location.path, home, protected_paths).is_some())
    }

    /// Whether the pattern of `rule` matches a command the call may run, though that cannot be
    /// told.
    fn possible_match(&self, rule: &PermissionRule) -> bool {
        self.call.patterns == RulePatterns::Own
            && self
                .subjects
                .possible
                .iter()
                .any(|subject| self.matches_own(rule, subject))
    }

    /// Whether `rule` matches the call: it has no pattern, or its pattern matches a part or
    /// another spelling of one.
    fn any_match(&self, rule: &PermissionRule) -> bool {
        if rule.target.pattern().is_none() {
            return true;
        }
        self.matching(rule).into_iter().any(|m| m)
            || (self.call.patterns == RulePatterns::Own
                && self
                    .subjects
                    .variants
                    .iter()
                    .any(|variant| self.matches_own(rule, variant)))
    }

    /// Whether the patterns of `rules` together cover every part of the call (and nothing of
    /// it is hidden).
    fn all_covered<'r>(&self, rules: impl Iterator<Item = &'r PermissionRule>) -> bool {
        if self.len() == 0 || self.subjects.hidden.is_some() {
            return false;
        }
        let mut covered = vec![false; self.len()];
        for rule in rules.filter(|rule| rule.target.pattern().is_some()) {
            for (covered, matched) in covered.iter_mut().zip(self.matching(rule)) {
                *covered |= matched;
            }
        }
        covered.into_iter().all(|c| c)
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
