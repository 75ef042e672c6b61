//! [`PermissionPolicy`]: a session's mode and rules, and the decision they make of one call.

use crate::permission::path_pattern::{PathPattern, PatternBase};
use crate::permission::{
    PermissionMode, PermissionRule, RememberedAnswers, RuleAction, RuleTarget,
};
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
}

impl PermissionPolicy {
    /// A policy of `mode` and `rules`, with no additional directories.
    pub fn new(mode: PermissionMode, rules: Vec<PermissionRule>) -> Self {
        Self {
            mode,
            rules,
            additional_directories: Vec::new(),
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
        let parts = CallParts::of(call, home.as_deref());
        let rules = |action| {
            self.rules
                .iter()
                .filter(move |rule| rule.action == action && applies(rule, call))
        };
        if let Some(rule) = rules(RuleAction::Deny).find(|rule| parts.any_match(rule)) {
            return Decision::Deny(format!(
                "{} is denied by the permission rule {rule}",
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
        // What a deny or ask rule cannot see (an `eval`, a command that does not parse) might
        // be what it is there to stop: the user decides.
        let guarded = rules(RuleAction::Deny)
            .chain(rules(RuleAction::Ask))
            .any(|rule| rule.target.pattern().is_some());
        if parts.subjects.hidden.is_some() && guarded {
            return Decision::Ask;
        }
        // A call that asks for more than its tool's confinement is the user's to allow.
        if rules(RuleAction::Ask).any(|rule| parts.any_match(rule))
            || (call.call.escalation().is_some() && self.mode != PermissionMode::Bypass)
        {
            return Decision::Ask;
        }
        let allowed_outright = rules(RuleAction::Allow).any(|rule| rule.target.pattern().is_none())
            || remembered.allowed.contains(call.tool_name);
        if allowed_outright || parts.all_covered(rules(RuleAction::Allow)) {
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
                PathPattern::resolve(pattern, pattern_base(rule, cwd, home.as_deref())).ok()
            })
            .collect();
        ReadDenials { patterns }
    }
}

/// Rules that would allow exactly `call`, as a user would write them: `Bash(git status:*)` for
/// each command of a command line, `Write(src/lib.rs)` (or `Read(//etc/hosts)` outside the
/// working directory) for each file, the tool's name for a tool without patterns. None for a
/// call part of which no rule can see.
pub fn allow_rules(call: &CallSubject<'_>) -> Vec<String> {
    let tool = call.tool_name;
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
            rules.dedup();
            rules
        }
        RulePatterns::None => vec![tool.to_owned()],
        RulePatterns::ReadsFiles | RulePatterns::EditsFiles | RulePatterns::Paths => {
            let cwd = crate::paths::canonical_path(call.cwd);
            let rules: Vec<String> = call
                .locations
                .iter()
                .map(|location| match location.path.strip_prefix(&cwd) {
                    Ok(inside) if !inside.as_os_str().is_empty() => {
                        format!("{tool}(./{})", inside.display())
                    }
                    _ => format!("{tool}(/{})", location.path.display()),
                })
                .collect();
            if rules.is_empty() {
                vec![tool.to_owned()]
            } else {
                rules
            }
        }
    }
}

/// The paths a search must leave out: those the session's deny rules keep from being read.
/// The executor offers it to each call of a tool that reads files (in its context's
/// extensions), so that Grep and Glob skip what `Read(…)` deny rules cover.
#[derive(Debug, Clone, Default)]
pub struct ReadDenials {
    patterns: Vec<PathPattern>,
}

impl ReadDenials {
    /// The denials offered to the running call, if any.
    pub fn of(ctx: &crate::tool::ToolContext) -> Option<std::sync::Arc<ReadDenials>> {
        ctx.extensions
            .get::<ReadDenials>()
            .filter(|denials| !denials.is_empty())
    }

    /// Whether there is nothing to leave out.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether a deny rule covers `path` (canonical).
    pub fn covers(&self, path: &Path) -> bool {
        self.patterns.iter().any(|pattern| pattern.matches(path))
    }
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
    home: Option<&'a Path>,
    subjects: RuleSubjects,
}

impl<'a> CallParts<'a> {
    fn of(call: &'a CallSubject<'a>, home: Option<&'a Path>) -> Self {
        let subjects = match call.patterns {
            RulePatterns::Own => call.call.rule_subjects(),
            _ => RuleSubjects::default(),
        };
        Self {
            call,
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
        let Some(pattern) = rule.target.pattern() else {
            return vec![false; self.len()];
        };
        match self.call.patterns {
            RulePatterns::ReadsFiles | RulePatterns::EditsFiles | RulePatterns::Paths => {
                let base = pattern_base(rule, self.call.cwd, self.home);
                match PathPattern::resolve(pattern, base) {
                    Ok(pattern) => self
                        .call
                        .locations
                        .iter()
                        .map(|location| pattern.matches(&location.path))
                        .collect(),
                    Err(_) => vec![false; self.len()],
                }
            }
            RulePatterns::Own => self
                .subjects
                .parts
                .iter()
                .map(|part| self.call.call.matches_rule(pattern, part))
                .collect(),
            RulePatterns::None => Vec::new(),
        }
    }

    /// Whether `rule` matches the call: it has no pattern, or its pattern matches a part or
    /// another spelling of one.
    fn any_match(&self, rule: &PermissionRule) -> bool {
        let Some(pattern) = rule.target.pattern() else {
            return true;
        };
        self.matching(rule).into_iter().any(|m| m)
            || (self.call.patterns == RulePatterns::Own
                && self
                    .subjects
                    .variants
                    .iter()
                    .any(|variant| self.call.call.matches_rule(pattern, variant)))
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
mod tests {
    use super::*;
    use crate::permission::{PermissionOptionKind, RuleOrigin};
    use crate::tool::{ToolContext, ToolError, ToolOutput};
    use futures::future::BoxFuture;

    /// A call with locations, subjects of its own language (`word` patterns matching parts
    /// equal to them), or a request to leave its confinement.
    #[derive(Default)]
    struct Call {
        locations: Vec<ToolCallLocation>,
        subjects: RuleSubjects,
        escalated: bool,
    }

    impl PreparedCall for Call {
        fn title(&self) -> String {
            String::new()
        }
        fn locations(&self) -> Vec<ToolCallLocation> {
            self.locations.clone()
        }
        fn rule_subjects(&self) -> RuleSubjects {
            self.subjects.clone()
        }
        fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
            pattern == subject
        }
        fn escalation(&self) -> Option<String> {
            self.escalated.then(|| "run outside the sandbox".to_owned())
        }
        fn run(
            self: Box<Self>,
            _: ToolContext,
        ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::default()) })
        }
    }

    fn policy(mode: PermissionMode, rules: &[(RuleAction, &str)]) -> PermissionPolicy {
        PermissionPolicy::with_rules(mode, rules).unwrap()
    }

    /// A file tool's call of `path` (canonical), in a session in `/work`.
    fn decide(policy: &PermissionPolicy, name: &str, kind: ToolKind, path: &str) -> Decision {
        let patterns = match kind {
            ToolKind::Read | ToolKind::Search => RulePatterns::ReadsFiles,
            _ => RulePatterns::EditsFiles,
        };
        decide_with(policy, name, kind, patterns, path, "/work")
    }

    fn decide_with(
        policy: &PermissionPolicy,
        name: &str,
        kind: ToolKind,
        patterns: RulePatterns,
        path: &str,
        cwd: &str,
    ) -> Decision {
        let call = Call {
            locations: vec![ToolCallLocation::path(path)],
            ..Call::default()
        };
        policy.decide(
            &CallSubject {
                tool_name: name,
                kind,
                patterns,
                call: &call,
                locations: &call.locations,
                outside_workspace: !path.starts_with(cwd),
                cwd: Path::new(cwd),
            },
            &RememberedAnswers::default(),
        )
    }

    /// A call of a tool with its own pattern language.
    fn decide_own(
        policy: &PermissionPolicy,
        call: &Call,
        remembered: &RememberedAnswers,
    ) -> Decision {
        policy.decide(
            &CallSubject {
                tool_name: "Bash",
                kind: ToolKind::Execute,
                patterns: RulePatterns::Own,
                call,
                locations: &[],
                outside_workspace: false,
                cwd: Path::new("/work"),
            },
            remembered,
        )
    }

    fn commands(parts: &[&str]) -> Call {
        Call {
            subjects: RuleSubjects::visible(parts.iter().map(|p| p.to_string()).collect()),
            ..Call::default()
        }
    }

    #[test]
    fn fetch_calls_ask_unless_a_rule_or_bypass_allows_them_and_plan_mode_keeps_them() {
        let ask = |mode| decide(&policy(mode, &[]), "WebFetch", ToolKind::Fetch, "/work/x");
        assert_eq!(ask(PermissionMode::Default), Decision::Ask);
        assert_eq!(ask(PermissionMode::AcceptEdits), Decision::Ask);
        assert_eq!(ask(PermissionMode::Plan), Decision::Ask);
        assert_eq!(ask(PermissionMode::Bypass), Decision::Allow);
        let allowed = policy(
            PermissionMode::Default,
            &[(RuleAction::Allow, "kind:fetch")],
        );
        assert_eq!(
            decide(&allowed, "WebFetch", ToolKind::Fetch, "/work/x"),
            Decision::Allow
        );
    }

    #[test]
    fn paths_outside_the_workspace_ask_even_for_reads_except_in_bypass() {
        let default = PermissionPolicy::default();
        assert_eq!(
            decide(&default, "Read", ToolKind::Read, "/outside/x"),
            Decision::Ask
        );
        assert_eq!(
            decide(&default, "Read", ToolKind::Read, "/work/x"),
            Decision::Allow
        );
        let bypass = policy(PermissionMode::Bypass, &[]);
        assert_eq!(
            decide(&bypass, "Read", ToolKind::Read, "/outside/x"),
            Decision::Allow
        );
        let allowed = policy(
            PermissionMode::Default,
            &[(RuleAction::Allow, "Read(//outside/**)")],
        );
        assert_eq!(
            decide(&allowed, "Read", ToolKind::Read, "/outside/x"),
            Decision::Allow
        );
    }

    #[test]
    fn each_mode_has_its_defaults() {
        use Decision::*;
        let expectations = [
            (PermissionMode::Default, [Allow, Ask, Ask, Ask]),
            (PermissionMode::AcceptEdits, [Allow, Allow, Allow, Ask]),
            (PermissionMode::Bypass, [Allow, Allow, Allow, Allow]),
        ];
        let kinds = [
            ToolKind::Read,
            ToolKind::Edit,
            ToolKind::Move,
            ToolKind::Execute,
        ];
        for (mode, expected) in expectations {
            let policy = policy(mode, &[]);
            let got: Vec<_> = kinds
                .iter()
                .map(|&k| decide(&policy, "T", k, "/work/a"))
                .collect();
            assert_eq!(got, expected, "mode {mode}");
        }
        let plan = policy(PermissionMode::Plan, &[(RuleAction::Allow, "Write")]);
        assert_eq!(decide(&plan, "Read", ToolKind::Read, "/work/a"), Allow);
        assert!(
            matches!(decide(&plan, "Write", ToolKind::Edit, "/work/a"), Deny(m) if m.contains("plan mode"))
        );
    }

    #[test]
    fn rules_match_by_name_pattern_and_kind_with_deny_first() {
        let policy = policy(
            PermissionMode::Default,
            &[
                (RuleAction::Allow, "Write(src/**)"),
                (RuleAction::Deny, "Write(src/secret/**)"),
                (RuleAction::Ask, "kind:fetch"),
            ],
        );
        assert_eq!(
            decide(&policy, "Write", ToolKind::Edit, "/work/src/a.rs"),
            Decision::Allow
        );
        assert!(matches!(
            decide(&policy, "Write", ToolKind::Edit, "/work/src/secret/k"),
            Decision::Deny(m) if m.contains("`Write(src/secret/**)` (from the agent's code)")
        ));
        assert_eq!(
            decide(&policy, "Write", ToolKind::Edit, "/work/lib/x"),
            Decision::Ask
        );
        assert_eq!(
            decide(&policy, "Fetch", ToolKind::Fetch, "/work/x"),
            Decision::Ask
        );
    }

    #[test]
    fn relative_path_rules_start_at_the_sessions_folder_and_root_rules_at_their_files() {
        let deny = policy(
            PermissionMode::Bypass,
            &[(RuleAction::Deny, "Read(secret/**)")],
        );
        let read = |policy: &PermissionPolicy, path, cwd| {
            decide_with(
                policy,
                "Read",
                ToolKind::Read,
                RulePatterns::ReadsFiles,
                path,
                cwd,
            )
        };
        assert!(matches!(
            read(&deny, "/work/secret/key.txt", "/work"),
            Decision::Deny(_)
        ));
        assert_eq!(
            read(&deny, "/elsewhere/secret/key.txt", "/work"),
            Decision::Allow
        );
        assert!(matches!(
            read(&deny, "/other/secret/key.txt", "/other"),
            Decision::Deny(_)
        ));
        let mut from_file = deny.clone();
        from_file.rules = vec![
            PermissionRule::parse(RuleAction::Deny, "Read(/secret/**)")
                .unwrap()
                .from_origin(RuleOrigin::file(
                    "/project/.agentry/config.toml",
                    "/project",
                )),
        ];
        assert!(matches!(
            read(&from_file, "/project/secret/key.txt", "/project/sub"),
            Decision::Deny(m) if m.contains("/project/.agentry/config.toml")
        ));
        assert_eq!(
            read(&from_file, "/project/sub/secret/key.txt", "/project/sub"),
            Decision::Allow
        );
    }

    #[test]
    fn read_and_edit_rules_apply_to_every_tool_that_reads_or_edits_files() {
        let policy = policy(
            PermissionMode::Bypass,
            &[
                (RuleAction::Deny, "Read(secrets/**)"),
                (RuleAction::Deny, "Edit(locked/**)"),
            ],
        );
        for tool in ["Read", "Grep", "Glob"] {
            assert!(
                matches!(
                    decide(&policy, tool, ToolKind::Search, "/work/secrets"),
                    Decision::Deny(_)
                ),
                "{tool} of the folder itself"
            );
            assert_eq!(
                decide(&policy, tool, ToolKind::Search, "/work"),
                Decision::Allow
            );
        }
        for tool in ["Write", "Edit", "MultiEdit", "NotebookEdit"] {
            assert!(
                matches!(
                    decide(&policy, tool, ToolKind::Edit, "/work/locked/a.txt"),
                    Decision::Deny(_)
                ),
                "{tool}"
            );
        }
        // A tool outside the families answers only to its own name.
        let other = decide_with(
            &policy,
            "Upload",
            ToolKind::Read,
            RulePatterns::Paths,
            "/work/secrets/x",
            "/work",
        );
        assert_eq!(other, Decision::Allow);
    }

    #[test]
    fn a_deny_rule_matches_any_part_and_allow_rules_must_cover_every_part() {
        let rules = [
            (RuleAction::Allow, "git status"),
            (RuleAction::Allow, "echo"),
            (RuleAction::Deny, "rm"),
        ]
        .map(|(action, part)| (action, format!("Bash({part})")));
        let rules: Vec<_> = rules.iter().map(|(a, t)| (*a, t.as_str())).collect();
        let policy = policy(PermissionMode::Default, &rules);
        let none = RememberedAnswers::default();
        assert_eq!(
            decide_own(&policy, &commands(&["git status", "echo"]), &none),
            Decision::Allow
        );
        assert_eq!(
            decide_own(&policy, &commands(&["git status", "ls"]), &none),
            Decision::Ask
        );
        assert!(matches!(
            decide_own(&policy, &commands(&["echo", "rm"]), &none),
            Decision::Deny(m) if m.contains("`Bash(rm)`")
        ));
        assert_eq!(decide_own(&policy, &commands(&[]), &none), Decision::Ask);
    }

    #[test]
    fn what_no_rule_can_see_is_never_allowed_by_a_rule_while_a_pattern_guards_the_tool() {
        let hidden = Call {
            subjects: RuleSubjects {
                parts: vec!["echo".to_owned()],
                hidden: Some("eval".to_owned()),
                ..RuleSubjects::default()
            },
            ..Call::default()
        };
        let none = RememberedAnswers::default();
        let guarded = policy(
            PermissionMode::Bypass,
            &[(RuleAction::Allow, "Bash"), (RuleAction::Deny, "Bash(rm)")],
        );
        assert_eq!(decide_own(&guarded, &hidden, &none), Decision::Ask);
        let always = RememberedAnswers {
            allowed: ["Bash".to_owned()].into(),
            ..RememberedAnswers::default()
        };
        assert_eq!(decide_own(&guarded, &hidden, &always), Decision::Ask);
        let by_pattern = policy(
            PermissionMode::Default,
            &[(RuleAction::Allow, "Bash(echo)")],
        );
        assert_eq!(decide_own(&by_pattern, &hidden, &none), Decision::Ask);
        let outright = policy(PermissionMode::Default, &[(RuleAction::Allow, "Bash")]);
        assert_eq!(decide_own(&outright, &hidden, &none), Decision::Allow);
    }

    #[test]
    fn remembered_answers_override_the_mode_but_not_deny_rules() {
        let mut remembered = RememberedAnswers::default();
        remembered.remember("Bash", PermissionOptionKind::AllowAlways);
        remembered.remember("Write", PermissionOptionKind::RejectAlways);
        remembered.remember("Edit", PermissionOptionKind::AllowOnce);
        let deny_bash = policy(PermissionMode::Bypass, &[(RuleAction::Deny, "Bash")]);
        let call = Call::default();
        let subject = |tool_name, kind| CallSubject {
            tool_name,
            kind,
            patterns: RulePatterns::for_kind(kind),
            call: &call,
            locations: &[],
            outside_workspace: false,
            cwd: Path::new("/work"),
        };
        assert!(matches!(
            deny_bash.decide(&subject("Bash", ToolKind::Execute), &remembered),
            Decision::Deny(_)
        ));
        assert!(
            matches!(deny_bash.decide(&subject("Write", ToolKind::Edit), &remembered), Decision::Deny(m) if m.contains("rest of this session"))
        );
        let default = PermissionPolicy::default();
        let allowed = RememberedAnswers {
            allowed: ["Bash".to_owned()].into(),
            ..RememberedAnswers::default()
        };
        assert_eq!(
            default.decide(&subject("Bash", ToolKind::Execute), &allowed),
            Decision::Allow
        );
        assert_eq!(
            default.decide(&subject("Edit", ToolKind::Edit), &remembered),
            Decision::Ask
        );
    }

    #[test]
    fn an_escalated_call_asks_despite_allow_rules_and_answers_unless_denied_or_bypassed() {
        let allowed = RememberedAnswers {
            allowed: ["Bash".to_owned()].into(),
            ..RememberedAnswers::default()
        };
        let escalated = Call {
            escalated: true,
            ..commands(&["make"])
        };
        let decide = |policy: PermissionPolicy| decide_own(&policy, &escalated, &allowed);
        assert_eq!(
            decide(policy(
                PermissionMode::AcceptEdits,
                &[(RuleAction::Allow, "Bash")]
            )),
            Decision::Ask
        );
        assert_eq!(decide(policy(PermissionMode::Bypass, &[])), Decision::Allow);
        assert!(matches!(
            decide(policy(
                PermissionMode::Bypass,
                &[(RuleAction::Deny, "Bash")]
            )),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn the_rules_suggested_allow_exactly_the_call() {
        let in_cwd = Call {
            locations: vec![ToolCallLocation::path("/work/src/lib.rs")],
            ..Call::default()
        };
        fn subject<'a>(
            call: &'a Call,
            patterns: RulePatterns,
            locations: &'a [ToolCallLocation],
        ) -> CallSubject<'a> {
            CallSubject {
                tool_name: "Write",
                kind: ToolKind::Edit,
                patterns,
                call,
                locations,
                outside_workspace: false,
                cwd: Path::new("/work"),
            }
        }
        let rules = allow_rules(&subject(
            &in_cwd,
            RulePatterns::EditsFiles,
            &in_cwd.locations,
        ));
        assert_eq!(rules, ["Write(./src/lib.rs)"]);
        let outside = [ToolCallLocation::path("/etc/hosts")];
        let rules = allow_rules(&subject(&in_cwd, RulePatterns::EditsFiles, &outside));
        assert_eq!(rules, ["Write(//etc/hosts)"]);
        let policy = PermissionPolicy::new(
            PermissionMode::Default,
            rules
                .iter()
                .map(|rule| PermissionRule::parse(RuleAction::Allow, rule).unwrap())
                .collect(),
        );
        assert_eq!(
            policy.decide(
                &subject(&in_cwd, RulePatterns::EditsFiles, &outside),
                &RememberedAnswers::default()
            ),
            Decision::Allow
        );
        let commands = Call {
            subjects: RuleSubjects {
                suggestions: vec!["git status:*".to_owned(), "git status:*".to_owned()],
                ..RuleSubjects::default()
            },
            ..Call::default()
        };
        let mut bash = subject(&commands, RulePatterns::Own, &[]);
        bash.tool_name = "Bash";
        assert_eq!(allow_rules(&bash), ["Bash(git status:*)"]);
    }

    #[test]
    fn a_rule_naming_an_mcp_server_covers_its_tools_and_no_other() {
        let policy = policy(
            PermissionMode::Default,
            &[
                (RuleAction::Deny, "mcp__github"),
                (RuleAction::Allow, "mcp__docs__*"),
            ],
        );
        let call = Call::default();
        let decide = |tool_name| {
            policy.decide(
                &CallSubject {
                    tool_name,
                    kind: ToolKind::Other,
                    patterns: RulePatterns::None,
                    call: &call,
                    locations: &[],
                    outside_workspace: false,
                    cwd: Path::new("/work"),
                },
                &RememberedAnswers::default(),
            )
        };
        assert!(matches!(
            decide("mcp__github__create_issue"),
            Decision::Deny(_)
        ));
        assert_eq!(decide("mcp__githubx__create_issue"), Decision::Ask);
        assert_eq!(decide("mcp__docs__search"), Decision::Allow);
        assert_eq!(decide("mcp__docsearch__x"), Decision::Ask);
    }

    #[test]
    fn read_denials_cover_what_read_deny_rules_and_the_tools_own_deny_rules_name() {
        let policy = policy(
            PermissionMode::Default,
            &[
                (RuleAction::Deny, "Read(secrets/**)"),
                (RuleAction::Deny, "Grep(*.key)"),
                (RuleAction::Deny, "Write(x/**)"),
                (RuleAction::Ask, "Read(asked/**)"),
            ],
        );
        let denials = policy.read_denials("Grep", Path::new("/work"));
        assert!(denials.covers(Path::new("/work/secrets/a.txt")));
        assert!(denials.covers(Path::new("/work/deep/id.key")));
        assert!(!denials.covers(Path::new("/work/x/a")));
        assert!(!denials.covers(Path::new("/work/asked/a")));
        assert!(
            !policy
                .read_denials("Glob", Path::new("/work"))
                .covers(Path::new("/work/id.key"))
        );
    }
}
