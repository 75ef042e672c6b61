//! Permissions: the session's [`PermissionPolicy`] (mode + rules + remembered answers) decides
//! whether a call runs, is refused, or needs the user's answer through a [`PermissionHandler`].
//!
//! The order a decision is made in:
//! 1. a matching `deny` rule refuses;
//! 2. plan mode refuses every tool that is not read-only;
//! 3. a tool the user rejected "always" this session is refused;
//! 4. a matching `ask` rule asks;
//! 5. a matching `allow` rule, or a tool the user allowed "always", runs;
//! 6. a call that touches a path outside the session's workspace roots asks (even a read),
//!    except in `bypass` mode;
//! 7. otherwise the mode decides: `bypass` runs everything; `accept_edits` runs read-only and
//!    file-editing kinds and asks for the rest; `default` runs read-only kinds and asks for the rest.

use crate::event::ToolCallSnapshot;
use crate::ids::SessionId;
use crate::tool::{PreparedCall, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::str::FromStr;

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionMode {
    /// Read-only tools run; everything else asks.
    #[default]
    Default,
    /// File edits run too; commands and other tools ask.
    AcceptEdits,
    /// Only read-only tools run (planning, no changes).
    Plan,
    /// Everything runs without asking (deny rules still apply).
    Bypass,
}

impl PermissionMode {
    /// Every mode.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Bypass,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept_edits",
            PermissionMode::Plan => "plan",
            PermissionMode::Bypass => "bypass",
        }
    }

    /// Its name for people (a front-end's mode picker).
    pub fn title(self) -> &'static str {
        match self {
            PermissionMode::Default => "Default",
            PermissionMode::AcceptEdits => "Accept edits",
            PermissionMode::Plan => "Plan",
            PermissionMode::Bypass => "Bypass permissions",
        }
    }

    /// What it lets tools do, in a sentence.
    pub fn description(self) -> &'static str {
        match self {
            PermissionMode::Default => "Read-only tools run; edits and commands ask first",
            PermissionMode::AcceptEdits => {
                "File edits in the workspace run without asking; commands still ask"
            }
            PermissionMode::Plan => "Read-only: the agent looks and plans, and changes nothing",
            PermissionMode::Bypass => "Every tool runs without asking",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = PermissionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s || m.as_str().replace('_', "-") == s)
            .ok_or_else(|| {
                PermissionError(format!(
                    "unknown permission mode `{s}` (expected default, accept_edits, plan or bypass)"
                ))
            })
    }
}

/// A malformed mode or rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PermissionError(String);

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

/// What a rule matches, written as users write it: `Write`, `Write(src/**)`, `kind:execute`, `*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum RuleTarget {
    /// Every tool.
    Any,
    /// A tool by name, optionally only calls matching a pattern (a path glob by default; the
    /// tool decides what its pattern means).
    Tool {
        /// The tool's name.
        name: String,
        /// The pattern inside the parentheses.
        pattern: Option<String>,
    },
    /// Every tool of a kind.
    Kind(ToolKind),
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
                (name, Some(pattern.to_owned()))
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

/// One rule of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRule {
    /// What it does.
    pub action: RuleAction,
    /// What it matches.
    pub target: RuleTarget,
}

impl PermissionRule {
    /// A rule from its action and its target as written.
    pub fn parse(action: RuleAction, target: &str) -> Result<Self, PermissionError> {
        Ok(Self {
            action,
            target: target.parse()?,
        })
    }

    fn matches(&self, call: &CallSubject<'_>) -> bool {
        match &self.target {
            RuleTarget::Any => true,
            RuleTarget::Kind(kind) => *kind == call.kind,
            RuleTarget::Tool { name, pattern } => {
                name == call.tool_name
                    && pattern
                        .as_deref()
                        .is_none_or(|pattern| call.call.matches_rule(pattern, call.locations))
            }
        }
    }
}

/// The answers "always allow" / "always reject" a user gave in a session, by tool name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RememberedAnswers {
    /// Tools the user always allows.
    pub allowed: BTreeSet<String>,
    /// Tools the user always rejects.
    pub rejected: BTreeSet<String>,
}

impl RememberedAnswers {
    /// Records an answer; the `*_once` kinds leave nothing to remember.
    pub fn remember(&mut self, tool_name: &str, answer: PermissionOptionKind) {
        match answer {
            PermissionOptionKind::AllowAlways => {
                self.rejected.remove(tool_name);
                self.allowed.insert(tool_name.to_owned());
            }
            PermissionOptionKind::RejectAlways => {
                self.allowed.remove(tool_name);
                self.rejected.insert(tool_name.to_owned());
            }
            PermissionOptionKind::AllowOnce | PermissionOptionKind::RejectOnce => {}
        }
    }
}

/// The call a decision is about.
pub struct CallSubject<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// The tool's kind.
    pub kind: ToolKind,
    /// The prepared call (for rule patterns).
    pub call: &'a dyn PreparedCall,
    /// The call's locations, canonicalised.
    pub locations: &'a [crate::tool::ToolCallLocation],
    /// Whether any location is outside the session's workspace roots.
    pub outside_workspace: bool,
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
}

impl PermissionPolicy {
    /// Decides one call; `remembered` holds the session's "always" answers.
    pub fn decide(&self, call: &CallSubject<'_>, remembered: &RememberedAnswers) -> Decision {
        let matching = |action| {
            self.rules
                .iter()
                .find(|rule| rule.action == action && rule.matches(call))
        };
        if let Some(rule) = matching(RuleAction::Deny) {
            return Decision::Deny(format!(
                "{} is denied by the permission rule `{}`",
                call.tool_name, rule.target
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
        // A call that asks for more than its tool's confinement is the user's to allow.
        if matching(RuleAction::Ask).is_some()
            || (call.call.escalation().is_some() && self.mode != PermissionMode::Bypass)
        {
            return Decision::Ask;
        }
        if matching(RuleAction::Allow).is_some() || remembered.allowed.contains(call.tool_name) {
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
}

/// The kinds of answer a permission request offers, as ACP's `PermissionOptionKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    /// Allow this call.
    AllowOnce,
    /// Allow this call and every later call of the tool in this session.
    AllowAlways,
    /// Reject this call.
    RejectOnce,
    /// Reject this call and every later call of the tool in this session.
    RejectAlways,
}

impl PermissionOptionKind {
    /// Whether the answer lets the call run.
    pub fn allows(self) -> bool {
        matches!(
            self,
            PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
        )
    }

    /// The wire name, also used as the option's id.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionOptionKind::AllowOnce => "allow_once",
            PermissionOptionKind::AllowAlways => "allow_always",
            PermissionOptionKind::RejectOnce => "reject_once",
            PermissionOptionKind::RejectAlways => "reject_always",
        }
    }
}

/// One option offered to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    /// The option's id.
    pub option_id: String,
    /// Its label.
    pub name: String,
    /// Its kind.
    pub kind: PermissionOptionKind,
}

impl PermissionOption {
    /// The four options offered for a call of `tool_name`.
    pub fn standard_set(tool_name: &str) -> Vec<PermissionOption> {
        let option = |kind: PermissionOptionKind, name: String| PermissionOption {
            option_id: kind.as_str().to_owned(),
            name,
            kind,
        };
        vec![
            option(PermissionOptionKind::AllowOnce, "Allow once".to_owned()),
            option(
                PermissionOptionKind::AllowAlways,
                format!("Always allow {tool_name}"),
            ),
            option(PermissionOptionKind::RejectOnce, "Reject".to_owned()),
            option(
                PermissionOptionKind::RejectAlways,
                format!("Always reject {tool_name}"),
            ),
        ]
    }
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// The user picked an option.
    Selected {
        /// The option's kind.
        kind: PermissionOptionKind,
    },
    /// The turn was cancelled while asking.
    Cancelled,
}

/// A question to the user about one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// The session.
    pub session_id: SessionId,
    /// The call, as announced.
    pub tool_call: ToolCallSnapshot,
    /// The options offered.
    pub options: Vec<PermissionOption>,
}

/// The front-end's side of permissions: shows the question and returns the answer.
#[async_trait::async_trait]
pub trait PermissionHandler: Send + Sync {
    /// Asks the user. The executor stops waiting (and reports `Cancelled`) when the turn is cancelled.
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome;
}

/// A handler made from an async function of the request: see [`handler_fn`].
pub struct FnPermissionHandler<F>(F);

/// A permission handler from an async function, for front-ends that ask their own way (a
/// terminal prompt, a dialog, a policy of their own):
///
/// ```
/// use agentry::permission::{PermissionOptionKind, PermissionOutcome, handler_fn};
///
/// let allow_reads = handler_fn(|request| async move {
///     let kind = if request.tool_call.kind.is_read_only() {
///         PermissionOptionKind::AllowOnce
///     } else {
///         PermissionOptionKind::RejectOnce
///     };
///     PermissionOutcome::Selected { kind }
/// });
/// # let _: std::sync::Arc<dyn agentry::permission::PermissionHandler> = std::sync::Arc::new(allow_reads);
/// ```
pub fn handler_fn<F, Fut>(answer: F) -> FnPermissionHandler<F>
where
    F: Fn(PermissionRequest) -> Fut + Send + Sync,
    Fut: Future<Output = PermissionOutcome> + Send,
{
    FnPermissionHandler(answer)
}

#[async_trait::async_trait]
impl<F, Fut> PermissionHandler for FnPermissionHandler<F>
where
    F: Fn(PermissionRequest) -> Fut + Send + Sync,
    Fut: Future<Output = PermissionOutcome> + Send,
{
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        (self.0)(request).await
    }
}

/// A handler for runs with nobody to ask: every question is answered "reject once".
#[derive(Debug, Clone, Copy, Default)]
pub struct RejectWhenAsked;

#[async_trait::async_trait]
impl PermissionHandler for RejectWhenAsked {
    async fn request_permission(&self, _request: PermissionRequest) -> PermissionOutcome {
        PermissionOutcome::Selected {
            kind: PermissionOptionKind::RejectOnce,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ToolCallLocation, ToolContext, ToolError, ToolOutput};
    use futures::future::BoxFuture;

    struct Call(Vec<ToolCallLocation>);

    /// A call asking to run with less confinement.
    struct Escalated;

    impl PreparedCall for Escalated {
        fn title(&self) -> String {
            String::new()
        }
        fn locations(&self) -> Vec<ToolCallLocation> {
            Vec::new()
        }
        fn escalation(&self) -> Option<String> {
            Some("run outside the sandbox".to_owned())
        }
        fn run(
            self: Box<Self>,
            _: ToolContext,
        ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::default()) })
        }
    }

    impl PreparedCall for Call {
        fn title(&self) -> String {
            String::new()
        }
        fn locations(&self) -> Vec<ToolCallLocation> {
            self.0.clone()
        }
        fn run(
            self: Box<Self>,
            _: ToolContext,
        ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
            Box::pin(async { Ok(ToolOutput::default()) })
        }
    }

    fn decide(policy: &PermissionPolicy, name: &str, kind: ToolKind, path: &str) -> Decision {
        let locations = vec![ToolCallLocation::path(path)];
        let call = Call(locations.clone());
        policy.decide(
            &CallSubject {
                tool_name: name,
                kind,
                call: &call,
                locations: &locations,
                outside_workspace: path.starts_with("/outside"),
            },
            &RememberedAnswers::default(),
        )
    }

    #[test]
    fn fetch_calls_ask_unless_a_rule_or_bypass_allows_them_and_plan_mode_keeps_them() {
        let ask = |mode| {
            let policy = PermissionPolicy {
                mode,
                rules: vec![],
            };
            decide(&policy, "WebFetch", ToolKind::Fetch, "/inside/x")
        };
        assert_eq!(ask(PermissionMode::Default), Decision::Ask);
        assert_eq!(ask(PermissionMode::AcceptEdits), Decision::Ask);
        assert_eq!(ask(PermissionMode::Plan), Decision::Ask);
        assert_eq!(ask(PermissionMode::Bypass), Decision::Allow);
        let allowed = PermissionPolicy {
            mode: PermissionMode::Default,
            rules: vec![PermissionRule::parse(RuleAction::Allow, "kind:fetch").unwrap()],
        };
        assert_eq!(
            decide(&allowed, "WebFetch", ToolKind::Fetch, "/inside/x"),
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
            decide(&default, "Read", ToolKind::Read, "/inside/x"),
            Decision::Allow
        );
        let bypass = PermissionPolicy {
            mode: PermissionMode::Bypass,
            rules: vec![],
        };
        assert_eq!(
            decide(&bypass, "Read", ToolKind::Read, "/outside/x"),
            Decision::Allow
        );
        let allowed = PermissionPolicy {
            mode: PermissionMode::Default,
            rules: vec![PermissionRule::parse(RuleAction::Allow, "Read(/outside/**)").unwrap()],
        };
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
            let policy = PermissionPolicy {
                mode,
                rules: vec![],
            };
            let got: Vec<_> = kinds
                .iter()
                .map(|&k| decide(&policy, "T", k, "/a"))
                .collect();
            assert_eq!(got, expected, "mode {mode}");
        }
        let plan = PermissionPolicy {
            mode: PermissionMode::Plan,
            rules: vec![PermissionRule::parse(RuleAction::Allow, "Write").unwrap()],
        };
        assert_eq!(decide(&plan, "Read", ToolKind::Read, "/a"), Allow);
        assert!(
            matches!(decide(&plan, "Write", ToolKind::Edit, "/a"), Deny(m) if m.contains("plan mode"))
        );
    }

    #[test]
    fn rules_match_by_name_pattern_and_kind_with_deny_first() {
        let policy = PermissionPolicy {
            mode: PermissionMode::Default,
            rules: vec![
                PermissionRule::parse(RuleAction::Allow, "Write(/src/**)").unwrap(),
                PermissionRule::parse(RuleAction::Deny, "Write(/src/secret/**)").unwrap(),
                PermissionRule::parse(RuleAction::Ask, "kind:fetch").unwrap(),
            ],
        };
        assert_eq!(
            decide(&policy, "Write", ToolKind::Edit, "/src/a.rs"),
            Decision::Allow
        );
        assert!(matches!(
            decide(&policy, "Write", ToolKind::Edit, "/src/secret/k"),
            Decision::Deny(m) if m.contains("`Write(/src/secret/**)`")
        ));
        assert_eq!(
            decide(&policy, "Write", ToolKind::Edit, "/etc/x"),
            Decision::Ask
        );
        assert_eq!(
            decide(&policy, "Fetch", ToolKind::Fetch, "/x"),
            Decision::Ask
        );
    }

    #[test]
    fn remembered_answers_override_the_mode_but_not_deny_rules() {
        let mut remembered = RememberedAnswers::default();
        remembered.remember("Bash", PermissionOptionKind::AllowAlways);
        remembered.remember("Write", PermissionOptionKind::RejectAlways);
        remembered.remember("Edit", PermissionOptionKind::AllowOnce);
        let policy = PermissionPolicy {
            mode: PermissionMode::Bypass,
            rules: vec![PermissionRule::parse(RuleAction::Deny, "Bash").unwrap()],
        };
        let call = Call(vec![]);
        let subject = |tool_name, kind| CallSubject {
            tool_name,
            kind,
            call: &call,
            locations: &[],
            outside_workspace: false,
        };
        assert!(matches!(
            policy.decide(&subject("Bash", ToolKind::Execute), &remembered),
            Decision::Deny(_)
        ));
        assert!(
            matches!(policy.decide(&subject("Write", ToolKind::Edit), &remembered), Decision::Deny(m) if m.contains("rest of this session"))
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
        let subject = CallSubject {
            tool_name: "Bash",
            kind: ToolKind::Execute,
            call: &Escalated,
            locations: &[],
            outside_workspace: false,
        };
        let policy = |mode, rule: Option<(RuleAction, &str)>| PermissionPolicy {
            mode,
            rules: rule
                .map(|(action, target)| PermissionRule::parse(action, target).unwrap())
                .into_iter()
                .collect(),
        };
        let allow_rule = Some((RuleAction::Allow, "Bash"));
        assert_eq!(
            policy(PermissionMode::AcceptEdits, allow_rule).decide(&subject, &allowed),
            Decision::Ask
        );
        assert_eq!(
            policy(PermissionMode::Bypass, None).decide(&subject, &allowed),
            Decision::Allow
        );
        assert!(matches!(
            policy(PermissionMode::Bypass, Some((RuleAction::Deny, "Bash")))
                .decide(&subject, &allowed),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn rule_targets_parse_and_print_as_written() {
        for text in ["*", "Bash", "Bash(git status:*)", "kind:switch_mode"] {
            assert_eq!(text.parse::<RuleTarget>().unwrap().to_string(), text);
        }
        for bad in ["Bash(oops", "kind:write", "", "two words"] {
            assert!(bad.parse::<RuleTarget>().is_err(), "{bad}");
        }
        assert_eq!(
            "accept-edits".parse::<PermissionMode>().unwrap(),
            PermissionMode::AcceptEdits
        );
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
