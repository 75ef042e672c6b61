//! [`CommandHooks`]: hooks as commands, with Claude Code's hook contract, so that existing hook
//! scripts work unchanged: the event as JSON on stdin (`hook_event_name`, `session_id`, `cwd`,
//! `permission_mode`, `tool_name`, `tool_input`, `tool_use_id`, and `tool_response` after the
//! call); exit code 2 blocks with stderr as the reason; on exit 0, JSON on stdout may decide
//! (`hookSpecificOutput.permissionDecision`: `allow` / `deny` / `ask`, with
//! `permissionDecisionReason`, and `updatedInput`; or the older `decision`: `approve` /
//! `block` with `reason`). Any other exit code, a hook that cannot start and one that times out
//! are reported as notices, and the call goes on. `PreCompact` and `PostCompact` (matched by
//! their trigger, `manual` or `auto`) get `trigger` and `custom_instructions`, and after it
//! `compact_summary`; a `PreCompact` hook blocks with exit code 2 or `decision: "block"`, and
//! adds to the summary's instructions with `hookSpecificOutput.customInstructions`. Configured
//! in Claude Code's settings files and agentry's own.

use agentry::agent::compaction::{Compaction, CompactionTrigger};
use agentry::hooks::{
    AgentHooks, CompactHook, HookCall, HookDecision, HookSession, PostToolOutcome,
    PreCompactOutcome, PreToolOutcome, PromptOutcome, StopOutcome,
};
use agentry::tool::ToolKind;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// One configured command.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HookCommand {
    /// `command` (the only type).
    #[serde(rename = "type", default = "command_type")]
    pub kind: String,
    /// The shell command (`sh -c`); `$CLAUDE_PROJECT_DIR` and `$AGENTRY_PROJECT_DIR` name the
    /// session's folder.
    pub command: String,
    /// Seconds before it is stopped (60 when not given).
    #[serde(default)]
    pub timeout: Option<u64>,
}

fn command_type() -> String {
    "command".to_owned()
}

/// Commands for the calls a matcher matches.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HookMatcher {
    /// Which tools: a name (`Bash`), alternatives (`Edit|Write`), a regular expression
    /// (`mcp__.*`), a kind (`kind:execute`), or `*` / nothing for every tool.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The commands.
    pub hooks: Vec<HookCommand>,
}

/// Hooks as Claude Code's `settings.json` writes them (`"hooks": {"PreToolUse": [...]}`) and
/// agentry's `config.toml` (`[[hooks.PreToolUse]]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct HookSettings {
    /// Before tool use.
    #[serde(rename = "PreToolUse", default)]
    pub pre_tool_use: Vec<HookMatcher>,
    /// After tool use.
    #[serde(rename = "PostToolUse", default)]
    pub post_tool_use: Vec<HookMatcher>,
    /// When a prompt is submitted (matchers are not used).
    #[serde(rename = "UserPromptSubmit", default)]
    pub user_prompt_submit: Vec<HookMatcher>,
    /// When the agent is about to stop.
    #[serde(rename = "Stop", default)]
    pub stop: Vec<HookMatcher>,
    /// When a sub-agent is about to stop.
    #[serde(rename = "SubagentStop", default)]
    pub subagent_stop: Vec<HookMatcher>,
    /// Before the conversation is compacted (matchers: `manual`, `auto`).
    #[serde(rename = "PreCompact", default)]
    pub pre_compact: Vec<HookMatcher>,
    /// After it was (matchers: `manual`, `auto`).
    #[serde(rename = "PostCompact", default)]
    pub post_compact: Vec<HookMatcher>,
}

impl HookSettings {
    /// These hooks followed by `other`'s.
    pub fn merged(mut self, other: HookSettings) -> Self {
        self.pre_tool_use.extend(other.pre_tool_use);
        self.post_tool_use.extend(other.post_tool_use);
        self.user_prompt_submit.extend(other.user_prompt_submit);
        self.stop.extend(other.stop);
        self.subagent_stop.extend(other.subagent_stop);
        self.pre_compact.extend(other.pre_compact);
        self.post_compact.extend(other.post_compact);
        self
    }

    /// Every command of every hook, in order of their events.
    pub fn commands(&self) -> impl Iterator<Item = &str> {
        [
            &self.pre_tool_use,
            &self.post_tool_use,
            &self.user_prompt_submit,
            &self.stop,
            &self.subagent_stop,
            &self.pre_compact,
            &self.post_compact,
        ]
        .into_iter()
        .flatten()
        .flat_map(|matcher| &matcher.hooks)
        .map(|hook| hook.command.as_str())
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.pre_tool_use.is_empty()
            && self.post_tool_use.is_empty()
            && self.user_prompt_submit.is_empty()
            && self.stop.is_empty()
            && self.subagent_stop.is_empty()
            && self.pre_compact.is_empty()
            && self.post_compact.is_empty()
    }
}

/// [`AgentHooks`] that run configured commands with Claude Code's contract.
#[derive(Debug, Clone)]
pub struct CommandHooks {
    settings: HookSettings,
}

impl CommandHooks {
    /// Hooks running the commands of `settings`.
    pub fn new(settings: HookSettings) -> Self {
        Self { settings }
    }
}

/// How long a hook may run when its configuration says nothing.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

#[agentry::async_trait]
impl AgentHooks for CommandHooks {
    async fn pre_tool_use(&self, call: &HookCall) -> PreToolOutcome {
        let input = event_json("PreToolUse", call, None);
        let mut outcome = PreToolOutcome::default();
        for command in commands_for(&self.settings.pre_tool_use, call) {
            match run_command(command, &input, &call.session.cwd).await {
                Ran::Exited(2, _, stderr) => {
                    outcome.decide(HookDecision::Deny, Some(stderr.trim().to_owned()))
                }
                Ran::Exited(0, stdout, _) => {
                    let reply = parse_reply(&stdout);
                    if let Some(updated) = reply.updated_input {
                        outcome.updated_input = Some(updated);
                    }
                    if let Some(decision) = reply.decision {
                        outcome.decide(decision, reply.reason);
                    }
                }
                other => outcome.notices.push(other.notice(&command.command)),
            }
        }
        outcome
    }

    async fn post_tool_use(&self, call: &HookCall, result: &str, failed: bool) -> PostToolOutcome {
        let response = json!({"output": result, "is_error": failed});
        let input = event_json("PostToolUse", call, Some(response));
        let mut outcome = PostToolOutcome::default();
        let mut feedback = Vec::new();
        for command in commands_for(&self.settings.post_tool_use, call) {
            match run_command(command, &input, &call.session.cwd).await {
                Ran::Exited(2, _, stderr) => feedback.push(stderr.trim().to_owned()),
                Ran::Exited(0, stdout, _) => {
                    let reply = parse_reply(&stdout);
                    if reply.decision == Some(HookDecision::Deny) {
                        feedback.extend(reply.reason);
                    }
                    feedback.extend(reply.context);
                }
                other => outcome.notices.push(other.notice(&command.command)),
            }
        }
        outcome.feedback = joined(feedback);
        outcome
    }

    async fn user_prompt_submit(&self, session: &HookSession, prompt: &str) -> PromptOutcome {
        let mut input = session_json("UserPromptSubmit", session);
        input["prompt"] = prompt.into();
        let mut outcome = PromptOutcome::default();
        let (mut blocked, mut context) = (Vec::new(), Vec::new());
        for command in every_command(&self.settings.user_prompt_submit) {
            match run_command(command, &input, &session.cwd).await {
                Ran::Exited(2, _, stderr) => blocked.push(stderr.trim().to_owned()),
                Ran::Exited(0, stdout, _) => match serde_json::from_str::<Value>(stdout.trim()) {
                    Ok(_) => {
                        let reply = parse_reply(&stdout);
                        if reply.decision == Some(HookDecision::Deny) {
                            blocked.push(reply.reason.unwrap_or_default());
                        }
                        context.extend(reply.context);
                    }
                    // Plain output is context for the model, as Claude Code adds it.
                    Err(_) => context.push(stdout.trim().to_owned()),
                },
                other => outcome.notices.push(other.notice(&command.command)),
            }
        }
        if !blocked.is_empty() {
            outcome.blocked = Some(joined(blocked).unwrap_or_else(|| "no reason given".to_owned()));
        }
        outcome.context = joined(context);
        outcome
    }

    async fn stop(
        &self,
        session: &HookSession,
        sub_agent: bool,
        already_going_on: bool,
    ) -> StopOutcome {
        let (event, matchers) = if sub_agent {
            ("SubagentStop", &self.settings.subagent_stop)
        } else {
            ("Stop", &self.settings.stop)
        };
        let mut input = session_json(event, session);
        input["stop_hook_active"] = already_going_on.into();
        let mut outcome = StopOutcome::default();
        let mut reasons = Vec::new();
        for command in every_command(matchers) {
            match run_command(command, &input, &session.cwd).await {
                Ran::Exited(2, _, stderr) => reasons.push(stderr.trim().to_owned()),
                Ran::Exited(0, stdout, _) => {
                    let reply = parse_reply(&stdout);
                    if reply.decision == Some(HookDecision::Deny) {
                        reasons.push(
                            reply
                                .reason
                                .unwrap_or_else(|| "a stop hook asked to go on".to_owned()),
                        );
                    }
                }
                other => outcome.notices.push(other.notice(&command.command)),
            }
        }
        outcome.go_on = joined(reasons);
        outcome
    }

    async fn pre_compact(&self, compaction: &CompactHook) -> PreCompactOutcome {
        let (input, commands) =
            self.compaction("PreCompact", &self.settings.pre_compact, compaction);
        let mut outcome = PreCompactOutcome::default();
        let (mut blocked, mut instructions) = (Vec::new(), Vec::new());
        for command in commands {
            match run_command(command, &input, &compaction.session.cwd).await {
                Ran::Exited(2, _, stderr) => blocked.push(stderr.trim().to_owned()),
                Ran::Exited(0, stdout, _) => {
                    let reply = parse_reply(&stdout);
                    if reply.decision == Some(HookDecision::Deny) {
                        blocked.push(reply.reason.unwrap_or_else(|| "no reason given".to_owned()));
                    }
                    instructions.extend(reply.custom_instructions);
                }
                other => outcome.notices.push(other.notice(&command.command)),
            }
        }
        if !blocked.is_empty() {
            outcome.blocked = Some(joined(blocked).unwrap_or_else(|| "no reason given".to_owned()));
        }
        outcome.instructions = joined(instructions);
        outcome
    }

    async fn post_compact(
        &self,
        compaction: &CompactHook,
        _done: &Compaction,
        summary: Option<&str>,
    ) -> Vec<String> {
        let (mut input, commands) =
            self.compaction("PostCompact", &self.settings.post_compact, compaction);
        input["compact_summary"] = summary.unwrap_or_default().into();
        let mut notices = Vec::new();
        for command in commands {
            match run_command(command, &input, &compaction.session.cwd).await {
                Ran::Exited(0, _, _) => {}
                other => notices.push(other.notice(&command.command)),
            }
        }
        notices
    }
}

impl CommandHooks {
    /// A compaction's event JSON, as Claude Code sends it, and the commands whose matcher
    /// names its trigger.
    fn compaction<'a>(
        &self,
        event: &str,
        matchers: &'a [HookMatcher],
        compaction: &CompactHook,
    ) -> (Value, Vec<&'a HookCommand>) {
        let trigger = match compaction.trigger {
            CompactionTrigger::Manual => "manual",
            CompactionTrigger::Auto => "auto",
        };
        let mut input = session_json(event, &compaction.session);
        input["trigger"] = trigger.into();
        input["custom_instructions"] = compaction.instructions.clone().unwrap_or_default().into();
        let commands = matchers
            .iter()
            .filter(|m| {
                let matcher = m.matcher.as_deref().unwrap_or("").trim();
                matcher.is_empty()
                    || matcher == "*"
                    || matcher.split('|').any(|part| part.trim() == trigger)
            })
            .flat_map(|m| m.hooks.iter().filter(|h| h.kind == "command"))
            .collect();
        (input, commands)
    }
}

/// Non-empty texts joined by lines, or `None`.
fn joined(mut texts: Vec<String>) -> Option<String> {
    texts.retain(|text| !text.is_empty());
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// Every command of `matchers` (events without a tool have no matching).
fn every_command(matchers: &[HookMatcher]) -> impl Iterator<Item = &HookCommand> {
    matchers
        .iter()
        .flat_map(|m| m.hooks.iter().filter(|h| h.kind == "command"))
}

/// The commands of the matchers that match `call`, in order.
fn commands_for<'a>(matchers: &'a [HookMatcher], call: &HookCall) -> Vec<&'a HookCommand> {
    matchers
        .iter()
        .filter(|m| {
            matches(
                m.matcher.as_deref().unwrap_or(""),
                &call.tool_name,
                call.kind,
            )
        })
        .flat_map(|m| m.hooks.iter().filter(|h| h.kind == "command"))
        .collect()
}

/// Whether a matcher matches a tool: empty or `*` matches all; alternatives are `|`-separated;
/// `kind:NAME` matches the tool's kind; anything else is a regular expression that must match
/// the whole name (a plain name is one).
pub fn matches(matcher: &str, tool_name: &str, kind: ToolKind) -> bool {
    let matcher = matcher.trim();
    if matcher.is_empty() || matcher == "*" {
        return true;
    }
    if let Some(kind_name) = matcher.strip_prefix("kind:") {
        return serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            == Some(kind_name.to_owned());
    }
    if matcher.contains("kind:") {
        return matcher
            .split('|')
            .any(|part| matches(part, tool_name, kind));
    }
    regex::Regex::new(&format!("^(?:{matcher})$"))
        .map(|re| re.is_match(tool_name))
        .unwrap_or(matcher == tool_name)
}

/// The fields every event's JSON has, as Claude Code sends them.
fn session_json(event: &str, session: &HookSession) -> Value {
    json!({
        "hook_event_name": event,
        "session_id": session.session_id,
        "cwd": session.cwd,
        "permission_mode": session.permission_mode,
    })
}

/// A tool event's JSON, as Claude Code sends it.
fn event_json(event: &str, call: &HookCall, response: Option<Value>) -> Value {
    let mut input = session_json(event, &call.session);
    input["tool_name"] = call.tool_name.clone().into();
    input["tool_input"] = call.input.clone();
    input["tool_use_id"] = call.tool_call_id.clone().into();
    if let Some(response) = response {
        input["tool_response"] = response;
    }
    input
}

/// How a hook command ended.
enum Ran {
    /// It exited with this code, having printed these.
    Exited(i32, String, String),
    /// It was stopped after its timeout.
    TimedOut(Duration),
    /// It was killed by a signal.
    Killed,
    /// It could not start.
    Unstartable(String),
}

impl Ran {
    /// The notice that says what went wrong.
    fn notice(&self, command: &str) -> String {
        match self {
            Ran::Exited(code, _, stderr) => {
                format!(
                    "the hook `{command}` failed (exit code {code}): {}",
                    stderr.trim()
                )
            }
            Ran::TimedOut(after) => {
                format!(
                    "the hook `{command}` timed out after {} s and was stopped",
                    after.as_secs()
                )
            }
            Ran::Killed => format!("the hook `{command}` was killed by a signal"),
            Ran::Unstartable(error) => format!("the hook `{command}` could not start: {error}"),
        }
    }
}

/// Runs a command with the event on stdin, in its own process group (stopped whole on timeout).
async fn run_command(command: &HookCommand, input: &Value, cwd: &Path) -> Ran {
    use tokio::io::AsyncWriteExt;
    let timeout = command.timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let mut process = tokio::process::Command::new("sh");
    process
        .arg("-c")
        .arg(&command.command)
        .current_dir(cwd)
        .env("CLAUDE_PROJECT_DIR", cwd)
        .env("AGENTRY_PROJECT_DIR", cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    process.process_group(0);
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(error) => return Ran::Unstartable(error.to_string()),
    };
    let group = child.id();
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input closes the pipe: that is its business.
        let _ = stdin.write_all(input.to_string().as_bytes()).await;
    }
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => match output.status.code() {
            Some(code) => Ran::Exited(
                code,
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            ),
            None => Ran::Killed,
        },
        Ok(Err(error)) => Ran::Unstartable(error.to_string()),
        Err(_) => {
            #[cfg(unix)]
            if let Some(group) = group {
                agentry_plugin::process_group::kill_group_now(group as i32);
            }
            Ran::TimedOut(timeout)
        }
    }
}

/// A hook's JSON reply, as far as it was understood.
#[derive(Debug, Default)]
struct Reply {
    decision: Option<HookDecision>,
    reason: Option<String>,
    updated_input: Option<Value>,
    context: Option<String>,
    /// Instructions for a compaction's summary (`PreCompact`).
    custom_instructions: Option<String>,
}

/// Reads a hook's stdout: JSON with a decision, or anything else (no decision).
fn parse_reply(stdout: &str) -> Reply {
    let Ok(value) = serde_json::from_str::<Value>(stdout.trim()) else {
        return Reply::default();
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let specific = value
        .get("hookSpecificOutput")
        .cloned()
        .unwrap_or(Value::Null);
    let decision = match text(&specific, "permissionDecision").as_deref() {
        Some("allow") => Some(HookDecision::Allow),
        Some("deny") => Some(HookDecision::Deny),
        Some("ask") => Some(HookDecision::Ask),
        _ => match text(&value, "decision").as_deref() {
            Some("approve") => Some(HookDecision::Allow),
            Some("block") => Some(HookDecision::Deny),
            _ => None,
        },
    };
    Reply {
        decision,
        reason: text(&specific, "permissionDecisionReason").or_else(|| text(&value, "reason")),
        updated_input: specific.get("updatedInput").cloned(),
        context: text(&specific, "additionalContext"),
        custom_instructions: text(&specific, "customInstructions"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_take_names_alternatives_expressions_and_kinds() {
        assert!(matches("", "Bash", ToolKind::Execute));
        assert!(matches("*", "Bash", ToolKind::Execute));
        assert!(matches("Bash", "Bash", ToolKind::Execute));
        assert!(!matches("Bash", "BashOutput", ToolKind::Read));
        assert!(matches("Edit|Write", "Write", ToolKind::Edit));
        assert!(matches("mcp__.*", "mcp__github__search", ToolKind::Other));
        assert!(matches("kind:execute", "Bash", ToolKind::Execute));
        assert!(matches("Read|kind:edit", "Write", ToolKind::Edit));
        assert!(!matches("kind:edit", "Bash", ToolKind::Execute));
    }

    #[test]
    fn replies_are_read_in_both_forms_of_the_contract() {
        let new = parse_reply(
            r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "no rm", "updatedInput": {"command": "ls"}}}"#,
        );
        assert_eq!(new.decision, Some(HookDecision::Deny));
        assert_eq!(new.reason.as_deref(), Some("no rm"));
        assert_eq!(new.updated_input, Some(json!({"command": "ls"})));
        let old = parse_reply(r#"{"decision": "approve", "reason": "fine"}"#);
        assert_eq!(old.decision, Some(HookDecision::Allow));
        assert!(parse_reply("plain text").decision.is_none());
    }

    #[test]
    fn deny_wins_over_ask_and_ask_over_allow() {
        let mut outcome = PreToolOutcome::default();
        outcome.decide(HookDecision::Allow, Some("ok".into()));
        outcome.decide(HookDecision::Deny, Some("no".into()));
        outcome.decide(HookDecision::Ask, None);
        assert_eq!(outcome.decision, Some(HookDecision::Deny));
        assert_eq!(outcome.reason.as_deref(), Some("no"));
    }
}
