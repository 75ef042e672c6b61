//! What a hook's run says, read as Claude Code reads it: its exit code (2 blocks where the
//! event can be blocked, its stderr the reason), and the JSON it prints (on any exit code:
//! `continue`, `stopReason`, `systemMessage`, `decision`, `reason`, and `hookSpecificOutput`
//! with `permissionDecision`, `permissionDecisionReason`, `updatedInput`, `additionalContext`,
//! `decision.behavior`, `retry`, `action`, `content`, `customInstructions`). Plain output is
//! context for the model after `UserPromptSubmit` and `SessionStart`.

use agentry::hooks::{HookDecision, HookReply};
use agentry::tool::ElicitationAnswer;
use serde_json::Value;
use std::time::Duration;

/// How a hook's run ended.
pub(crate) enum Ran {
    /// It exited with this code, having printed these (an HTTP hook's 2xx reply: code 0).
    Exited(i32, String, String),
    /// It was stopped after its timeout.
    TimedOut(Duration),
    /// It was killed by a signal.
    Killed,
    /// It could not start, or its request failed.
    Unstartable(String),
}

/// The events whose hooks may block what happens (exit code 2, `decision: "block"`).
const BLOCKING: &[&str] = &[
    "PreToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "PreCompact",
    "Elicitation",
    "ElicitationResult",
];

/// The events whose hooks' exit code 2 gives the model their stderr (the call already ran).
const TO_THE_MODEL: &[&str] = &["PostToolUse", "PostToolUseFailure"];

/// The events whose hooks' output is not heeded (they are told, and answer nothing).
const SILENT: &[&str] = &["InstructionsLoaded", "Notification", "StopFailure"];

/// Reads a run of the hook `label` for `event`.
pub(crate) fn reply_of(event: &str, label: &str, ran: Ran) -> HookReply {
    let (code, stdout, stderr) = match ran {
        Ran::Exited(code, stdout, stderr) => (code, stdout, stderr),
        Ran::TimedOut(after) => {
            return notice(format!(
                "the hook `{label}` timed out after {} s and was stopped",
                after.as_secs()
            ));
        }
        Ran::Killed => return notice(format!("the hook `{label}` was killed by a signal")),
        Ran::Unstartable(error) => {
            return notice(format!("the hook `{label}` could not start: {error}"));
        }
    };
    let json = parsed(&stdout);
    if SILENT.contains(&event) {
        return HookReply::default();
    }
    let mut reply = match &json {
        Some(value) => from_json(event, value),
        None => HookReply::default(),
    };
    match code {
        0 => {
            if json.is_none()
                && matches!(event, "UserPromptSubmit" | "SessionStart")
                && !stdout.trim().is_empty()
            {
                reply.additional_context = Some(stdout.trim().to_owned());
            }
        }
        2 if BLOCKING.contains(&event) || TO_THE_MODEL.contains(&event) => {
            // Exit code 2 blocks whatever the JSON says; its reason, or stderr.
            let reason = reply
                .reason
                .take()
                .filter(|reason| !reason.trim().is_empty() && reply.blocks())
                .unwrap_or_else(|| stderr.trim().to_owned());
            reply.decision = Some(HookDecision::Block);
            reply.reason = Some(reason);
            if matches!(event, "Elicitation" | "ElicitationResult") {
                reply.elicitation = None;
            }
        }
        2 if event == "PermissionRequest" || event == "PermissionDenied" => {}
        2 => reply
            .notices
            .push(format!("the hook `{label}` said: {}", stderr.trim())),
        _ if json.is_some() => {}
        code => reply.notices.push(format!(
            "the hook `{label}` failed (exit code {code}): {}",
            stderr.trim().lines().next().unwrap_or_default()
        )),
    }
    if event == "PermissionDenied" {
        return HookReply {
            retry: reply.retry,
            ..HookReply::default()
        };
    }
    reply
}

/// A reply that only tells the user something went wrong.
fn notice(message: String) -> HookReply {
    HookReply {
        notices: vec![message],
        ..HookReply::default()
    }
}

/// Stdout as a JSON object, when it is one (its first non-blank character `{`).
fn parsed(stdout: &str) -> Option<Value> {
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(trimmed)
        .ok()
        .filter(Value::is_object)
}

/// What a hook's JSON output says, for `event`.
pub(crate) fn from_json(event: &str, value: &Value) -> HookReply {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let specific = value.get("hookSpecificOutput").unwrap_or(&Value::Null);
    let mut reply = HookReply {
        system_message: text(value, "systemMessage"),
        additional_context: text(specific, "additionalContext"),
        custom_instructions: text(specific, "customInstructions"),
        retry: specific.get("retry").and_then(Value::as_bool) == Some(true),
        ..HookReply::default()
    };
    if value.get("continue").and_then(Value::as_bool) == Some(false) {
        reply.stop =
            Some(text(value, "stopReason").unwrap_or_else(|| "no reason given".to_owned()));
    }
    let blocks = text(value, "decision").as_deref() == Some("block");
    match event {
        "PreToolUse" => {
            let decision = match text(specific, "permissionDecision").as_deref() {
                Some("allow") => Some(HookDecision::Allow),
                Some("deny") => Some(HookDecision::Block),
                Some("ask" | "defer") => Some(HookDecision::Ask),
                _ => match text(value, "decision").as_deref() {
                    Some("approve") => Some(HookDecision::Allow),
                    Some("block") => Some(HookDecision::Block),
                    _ => None,
                },
            };
            reply.decision = decision;
            reply.reason =
                text(specific, "permissionDecisionReason").or_else(|| text(value, "reason"));
            reply.updated_input = specific.get("updatedInput").cloned();
        }
        "PermissionRequest" => {
            let decision = specific.get("decision").unwrap_or(&Value::Null);
            match text(decision, "behavior").as_deref() {
                Some("allow") => {
                    reply.decision = Some(HookDecision::Allow);
                    reply.updated_input = decision.get("updatedInput").cloned();
                    if decision
                        .get("updatedPermissions")
                        .and_then(Value::as_array)
                        .is_some_and(|updates| !updates.is_empty())
                    {
                        reply.notices.push(
                            "a PermissionRequest hook gave `updatedPermissions`, which agentry \
                             does not apply: its allow counts for this call only"
                                .to_owned(),
                        );
                    }
                }
                Some("deny") => {
                    reply.decision = Some(HookDecision::Block);
                    reply.reason = text(decision, "message");
                    if decision.get("interrupt").and_then(Value::as_bool) == Some(true) {
                        reply.stop = Some(reply.block_reason());
                    }
                }
                _ => {}
            }
        }
        "Elicitation" | "ElicitationResult" => {
            reply.elicitation = text(specific, "action").map(|action| ElicitationAnswer {
                action,
                content: specific.get("content").cloned(),
            });
            if blocks {
                reply.decision = Some(HookDecision::Block);
                reply.reason = text(value, "reason");
            }
        }
        _ if blocks => {
            reply.decision = Some(HookDecision::Block);
            reply.reason = text(value, "reason");
        }
        _ => {}
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ran(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran::Exited(code, stdout.to_owned(), stderr.to_owned())
    }

    #[test]
    fn exit_code_2_blocks_where_the_event_can_be_blocked() {
        let reply = reply_of("PreToolUse", "h", ran(2, "", "no rm\n"));
        assert!(reply.blocks());
        assert_eq!(reply.reason.as_deref(), Some("no rm"));
        // Exit code 2 wins over an allow in the JSON.
        let allow = r#"{"hookSpecificOutput": {"permissionDecision": "allow"}}"#;
        assert!(reply_of("PreToolUse", "h", ran(2, allow, "no")).blocks());
        // A session's start cannot be blocked: the user is told.
        let start = reply_of("SessionStart", "h", ran(2, "", "broken"));
        assert!(!start.blocks());
        assert_eq!(start.notices, ["the hook `h` said: broken"]);
        // A permission request's exit code 2 is not heeded.
        assert_eq!(
            reply_of("PermissionRequest", "h", ran(2, "", "x")),
            HookReply::default()
        );
    }

    #[test]
    fn json_decides_on_any_exit_code_and_plain_output_is_context_where_it_may_be() {
        let deny = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "no rm",
            "updatedInput": {"command": "ls"}}}"#;
        let reply = reply_of("PreToolUse", "h", ran(1, deny, ""));
        assert!(reply.blocks());
        assert_eq!(reply.reason.as_deref(), Some("no rm"));
        assert_eq!(reply.updated_input, Some(json!({"command": "ls"})));
        assert!(reply.notices.is_empty());
        let old = reply_of("PreToolUse", "h", ran(0, r#"{"decision": "approve"}"#, ""));
        assert_eq!(old.decision, Some(HookDecision::Allow));
        let context = reply_of("UserPromptSubmit", "h", ran(0, "branch: main\n", ""));
        assert_eq!(context.additional_context.as_deref(), Some("branch: main"));
        assert_eq!(
            reply_of("PostToolUse", "h", ran(0, "plain", "")),
            HookReply::default()
        );
        let failed = reply_of("Stop", "h", ran(1, "", "oops\nmore"));
        assert_eq!(failed.notices, ["the hook `h` failed (exit code 1): oops"]);
    }

    #[test]
    fn the_common_fields_stop_and_tell() {
        let reply = reply_of(
            "PostToolUse",
            "h",
            ran(
                0,
                r#"{"continue": false, "stopReason": "tests failed", "systemMessage": "see CI"}"#,
                "",
            ),
        );
        assert_eq!(reply.stop.as_deref(), Some("tests failed"));
        assert_eq!(reply.system_message.as_deref(), Some("see CI"));
        let request = r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "not here", "interrupt": true}}}"#;
        let reply = reply_of("PermissionRequest", "h", ran(0, request, ""));
        assert!(reply.blocks());
        assert_eq!(reply.stop.as_deref(), Some("not here"));
        let rewritten = r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": "npm run lint"},
                "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits",
                    "destination": "session"}]}}}"#;
        let reply = reply_of("PermissionRequest", "h", ran(0, rewritten, ""));
        assert_eq!(reply.decision, Some(HookDecision::Allow));
        assert_eq!(
            reply.updated_input,
            Some(json!({"command": "npm run lint"}))
        );
        assert!(
            reply.notices[0].contains("`updatedPermissions`, which agentry does not apply"),
            "{:?}",
            reply.notices
        );
        let answer = r#"{"hookSpecificOutput": {"hookEventName": "Elicitation",
            "action": "accept", "content": {"name": "a"}}}"#;
        let reply = reply_of("Elicitation", "h", ran(0, answer, ""));
        assert_eq!(
            reply.elicitation.unwrap().content,
            Some(json!({"name": "a"}))
        );
    }
}
