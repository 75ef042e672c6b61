//! [`Refusal`]: why the executor ended a call without its tool's own result.

use serde::{Deserialize, Serialize};

/// Why a call did not run, or stopped: the reasons the executor itself ends a call with,
/// beside the tool's own failures. Its text is what the model reads, so it says what to do;
/// a call's final update carries it too ([`ToolCallUpdate::refusal`](crate::event::ToolCallUpdate::refusal)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Refusal {
    /// No tool has the name the model called.
    UnknownTool {
        /// The name called.
        tool: String,
        /// The tools there are, comma-separated.
        available: String,
    },
    /// The arguments are not JSON.
    BadJson {
        /// The tool called.
        tool: String,
        /// What the JSON parser said.
        error: String,
    },
    /// The arguments do not match the tool's input schema.
    SchemaMismatch {
        /// The tool called.
        tool: String,
        /// Every problem, with where it is.
        problems: String,
    },
    /// The tool's own input schema is not a valid JSON Schema, so no input can be checked.
    BrokenSchema {
        /// The tool called.
        tool: String,
        /// What the schema compiler said.
        problem: String,
    },
    /// The tool could not take the (schema-valid) input.
    InvalidInput {
        /// The tool called.
        tool: String,
        /// What it said.
        problem: String,
    },
    /// The session's policy refused the call: a deny rule, plan mode, or an earlier "always
    /// reject".
    DeniedByRule {
        /// Why, as the policy says it.
        reason: String,
    },
    /// A hook before tool use denied the call.
    DeniedByHook {
        /// Why, as the hook says it.
        reason: String,
    },
    /// The user rejected the call when asked.
    RejectedByUser {
        /// The tool called.
        tool: String,
        /// Whether the user rejected every later call of the tool in this session too.
        always: bool,
    },
    /// The call needed the user's permission, and nobody could be asked (a headless run).
    Unanswered {
        /// The tool called.
        tool: String,
        /// Why no rule could allow it, when part of it could not be seen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unseen: Option<String>,
    },
    /// The chat was cancelled.
    Cancelled {
        /// Whether the call had started running.
        started: bool,
    },
    /// The answer it came in made more calls than one answer may.
    TooManyCalls {
        /// The most calls an answer may make.
        max: usize,
    },
    /// The call was never run: the model response it came in did not finish.
    NotRun {
        /// Why.
        reason: String,
    },
}

impl Refusal {
    /// Its kind, as its JSON's `kind` names it (`denied_by_rule`, `cancelled`, …): a bounded
    /// label.
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::UnknownTool { .. } => "unknown_tool",
            Refusal::BadJson { .. } => "bad_json",
            Refusal::SchemaMismatch { .. } => "schema_mismatch",
            Refusal::BrokenSchema { .. } => "broken_schema",
            Refusal::InvalidInput { .. } => "invalid_input",
            Refusal::DeniedByRule { .. } => "denied_by_rule",
            Refusal::DeniedByHook { .. } => "denied_by_hook",
            Refusal::RejectedByUser { .. } => "rejected_by_user",
            Refusal::Unanswered { .. } => "unanswered",
            Refusal::Cancelled { .. } => "cancelled",
            Refusal::TooManyCalls { .. } => "too_many_calls",
            Refusal::NotRun { .. } => "not_run",
        }
    }

    /// Whether the permissions refused the call (a rule, the user, nobody to ask): what
    /// `PermissionDenied` hooks hear of.
    pub fn is_permission_denial(&self) -> bool {
        matches!(
            self,
            Refusal::DeniedByRule { .. }
                | Refusal::RejectedByUser { .. }
                | Refusal::Unanswered { .. }
        )
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::UnknownTool { tool, available } => write!(
                f,
                "There is no tool named `{tool}`. Available tools: {available}."
            ),
            Refusal::BadJson { tool, error } => write!(
                f,
                "The arguments are not valid JSON ({error}). Call {tool} again with a JSON object that matches its input schema."
            ),
            Refusal::SchemaMismatch { tool, problems } => write!(
                f,
                "The arguments do not match {tool}'s input schema: {problems}. Call {tool} again with corrected arguments."
            ),
            Refusal::BrokenSchema { tool, problem } => write!(
                f,
                "{tool} cannot be called: its input schema is not valid JSON Schema ({problem}). Do without it."
            ),
            Refusal::InvalidInput { tool, problem } => write!(
                f,
                "{tool} cannot take this input: {problem}. Call it again with corrected arguments."
            ),
            Refusal::DeniedByRule { reason } => write!(f, "Permission denied: {reason}."),
            Refusal::TooManyCalls { max } => write!(
                f,
                "Not run: one answer may call tools at most {max} times, and this call came after that. Make it again in a later answer if it is still needed, with fewer calls at once."
            ),
            Refusal::DeniedByHook { reason } => write!(f, "A hook denied this call: {reason}"),
            Refusal::Unanswered { tool, unseen: None } => write!(
                f,
                "This call of {tool} needs the user's permission, and nobody can be asked in this run, so it did not run. The user was not asked and did not reject it: do without it, or say what you would have done."
            ),
            Refusal::Unanswered {
                tool,
                unseen: Some(why),
            } => write!(
                f,
                "This call of {tool} needs the user's permission, because no permission rule can allow what it cannot see through ({why}), and nobody can be asked in this run, so it did not run. Write each command plainly (no `eval`, no command built from variables, no variables set for a command), or do without it."
            ),
            Refusal::RejectedByUser { tool, always } => write!(
                f,
                "The user rejected this call of {tool}{}. Do not retry it; ask the user how to proceed if you need it.",
                if *always {
                    " and every later one in this session"
                } else {
                    ""
                }
            ),
            Refusal::Cancelled { started: true } => {
                f.write_str("Cancelled by the user while running.")
            }
            Refusal::Cancelled { started: false } => {
                f.write_str("Cancelled by the user before it ran.")
            }
            Refusal::NotRun { reason } => f.write_str(reason),
        }
    }
}
