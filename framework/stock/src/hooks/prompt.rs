//! A `prompt` hook's run: a model (the session's, or the hook's `model`) judges the event from
//! the hook's prompt — `$ARGUMENTS` replaced by the event's JSON, or the JSON after the prompt
//! when it does not say `$ARGUMENTS` — and answers `{"ok": true}` or `{"ok": false, "reason":
//! …}`; `ok: false` blocks as a command's exit code 2 does (on `Stop`, `impossible: true` lets
//! the agent stop after all).

use agentry::hooks::{HookDecision, HookReply};
use agentry::model::Model;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// What the judging model is told.
const SYSTEM: &str = "You judge an event in a coding agent's session for a hook. Read the \
    instructions and the event's JSON, then answer with one JSON object and nothing else: \
    {\"ok\": true} to let it go on, or {\"ok\": false, \"reason\": \"why\"} to stop it.";

/// Asks `model` to judge `input` (the event's JSON) by `prompt`, for `event`.
pub(crate) async fn judge(
    model: Arc<dyn Model>,
    prompt: &str,
    event: &str,
    input: &str,
    timeout: Duration,
    label: &str,
) -> HookReply {
    let question = if prompt.contains("$ARGUMENTS") {
        prompt.replace("$ARGUMENTS", input)
    } else {
        format!("{prompt}\n\n{input}")
    };
    let asked = agentry::model::side::ask(model.as_ref(), SYSTEM, question, Some(1024));
    let answer = match tokio::time::timeout(timeout, asked).await {
        Ok(Ok((answer, _))) => answer,
        Ok(Err(error)) => return failed(format!("the hook `{label}`'s model failed: {error}")),
        Err(_) => {
            return failed(format!(
                "the hook `{label}` timed out after {} s",
                timeout.as_secs()
            ));
        }
    };
    let Some(verdict) = verdict(&answer) else {
        return failed(format!(
            "the hook `{label}`'s model did not answer with {{\"ok\": …}}: {}",
            answer.trim()
        ));
    };
    let ok = verdict.get("ok").and_then(Value::as_bool).unwrap_or(true);
    let impossible = verdict.get("impossible").and_then(Value::as_bool) == Some(true);
    if ok || (impossible && matches!(event, "Stop" | "SubagentStop")) {
        return HookReply::default();
    }
    let reason = verdict
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("the hook's model said no")
        .to_owned();
    HookReply::decide(HookDecision::Block, Some(reason))
}

/// The JSON object in a model's answer (alone, or in a fenced block).
fn verdict(answer: &str) -> Option<Value> {
    let start = answer.find('{')?;
    let end = answer.rfind('}')?;
    serde_json::from_str::<Value>(answer.get(start..=end)?)
        .ok()
        .filter(Value::is_object)
}

/// A reply that tells the user the hook failed, and decides nothing.
fn failed(message: String) -> HookReply {
    HookReply {
        notices: vec![message],
        ..HookReply::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_found_in_a_fenced_answer() {
        let found = verdict("```json\n{\"ok\": false, \"reason\": \"no tests\"}\n```").unwrap();
        assert_eq!(found["reason"], "no tests");
        assert!(verdict("fine by me").is_none());
    }
}
