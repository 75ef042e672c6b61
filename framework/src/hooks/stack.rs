//! Several hooks given to one agent: each runs, in the order given, and their outcomes
//! combine — a denial wins over a question, a question over an allowance; a rewritten input is
//! what the next hook sees; feedback and context add up; the first block or reason to go on
//! stands.

use super::{AgentHooks, HookCall, HookSession, PostToolOutcome, PreToolOutcome, PromptOutcome};
use super::{CompactHook, HookDecision, PreCompactOutcome, StopOutcome};
use crate::event::Compaction;
use std::sync::Arc;

/// The hooks of an agent given more than one (see the [module](self)).
pub(crate) struct HookStack(pub(crate) Vec<Arc<dyn AgentHooks>>);

/// `more` after `text`, a line apart.
fn joined(text: Option<String>, more: Option<String>) -> Option<String> {
    match (text, more) {
        (Some(text), Some(more)) => Some(format!("{text}\n{more}")),
        (text, more) => text.or(more),
    }
}

#[async_trait::async_trait]
impl AgentHooks for HookStack {
    async fn pre_tool_use(&self, call: &HookCall) -> PreToolOutcome {
        let mut outcome = PreToolOutcome::default();
        let mut call = call.clone();
        for hooks in &self.0 {
            let said = hooks.pre_tool_use(&call).await;
            outcome.notices.extend(said.notices);
            if let Some(input) = said.updated_input {
                call.input = input.clone();
                outcome.updated_input = Some(input);
            }
            if let Some(decision) = said.decision {
                outcome.decide(decision, said.reason);
            }
            if outcome.decision == Some(HookDecision::Deny) {
                break;
            }
        }
        outcome
    }

    async fn post_tool_use(&self, call: &HookCall, result: &str, failed: bool) -> PostToolOutcome {
        let mut outcome = PostToolOutcome::default();
        for hooks in &self.0 {
            let said = hooks.post_tool_use(call, result, failed).await;
            outcome.feedback = joined(outcome.feedback, said.feedback);
            outcome.notices.extend(said.notices);
        }
        outcome
    }

    async fn user_prompt_submit(&self, session: &HookSession, prompt: &str) -> PromptOutcome {
        let mut outcome = PromptOutcome::default();
        for hooks in &self.0 {
            let said = hooks.user_prompt_submit(session, prompt).await;
            outcome.context = joined(outcome.context, said.context);
            outcome.notices.extend(said.notices);
            if said.blocked.is_some() {
                outcome.blocked = said.blocked;
                break;
            }
        }
        outcome
    }

    async fn stop(
        &self,
        session: &HookSession,
        sub_agent: bool,
        already_going_on: bool,
    ) -> StopOutcome {
        let mut outcome = StopOutcome::default();
        for hooks in &self.0 {
            let said = hooks.stop(session, sub_agent, already_going_on).await;
            outcome.notices.extend(said.notices);
            if said.go_on.is_some() {
                outcome.go_on = said.go_on;
                break;
            }
        }
        outcome
    }

    async fn pre_compact(&self, compaction: &CompactHook) -> PreCompactOutcome {
        let mut outcome = PreCompactOutcome::default();
        for hooks in &self.0 {
            let said = hooks.pre_compact(compaction).await;
            outcome.instructions = joined(outcome.instructions, said.instructions);
            outcome.notices.extend(said.notices);
            if said.blocked.is_some() {
                outcome.blocked = said.blocked;
                break;
            }
        }
        outcome
    }

    async fn post_compact(
        &self,
        compaction: &CompactHook,
        done: &Compaction,
        summary: Option<&str>,
    ) -> Vec<String> {
        let mut notices = Vec::new();
        for hooks in &self.0 {
            notices.extend(hooks.post_compact(compaction, done, summary).await);
        }
        notices
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A hook that says one thing of every call and prompt.
    struct Saying {
        decision: Option<HookDecision>,
        input: Option<Value>,
        feedback: &'static str,
    }

    #[async_trait::async_trait]
    impl AgentHooks for Saying {
        async fn pre_tool_use(&self, call: &HookCall) -> PreToolOutcome {
            PreToolOutcome {
                decision: self.decision,
                reason: Some(format!("{} saw {}", self.feedback, call.input)),
                updated_input: self.input.clone(),
                notices: Vec::new(),
            }
        }
        async fn post_tool_use(&self, _: &HookCall, _: &str, _: bool) -> PostToolOutcome {
            PostToolOutcome {
                feedback: Some(self.feedback.to_owned()),
                notices: Vec::new(),
            }
        }
    }

    #[tokio::test]
    async fn every_hook_runs_in_order_and_the_strictest_decision_stands() {
        let stack = HookStack(vec![
            Arc::new(Saying {
                decision: Some(HookDecision::Allow),
                input: Some(json!({"command": "ls -a"})),
                feedback: "first",
            }),
            Arc::new(Saying {
                decision: Some(HookDecision::Ask),
                input: None,
                feedback: "second",
            }),
        ]);
        let before = stack.pre_tool_use(&crate::hooks::sample_call()).await;
        assert_eq!(before.decision, Some(HookDecision::Ask));
        assert_eq!(
            before.reason.as_deref(),
            Some(r#"second saw {"command":"ls -a"}"#),
            "the second hook sees the first one's input"
        );
        assert_eq!(before.updated_input, Some(json!({"command": "ls -a"})));
        let after = stack
            .post_tool_use(&crate::hooks::sample_call(), "ok", false)
            .await;
        assert_eq!(after.feedback.as_deref(), Some("first\nsecond"));
    }
}
