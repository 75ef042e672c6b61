//! Several hooks given to one agent: each that takes the event runs, in the order given, and
//! their replies combine ([`HookReply::merge`]); a call's rewritten input is what the next hook
//! sees; the first block ends the round.

use super::{AgentHooks, HookEvent, HookInput, HookReply};
use std::sync::Arc;

/// The hooks of an agent given more than one (see the [module](self)).
pub(crate) struct HookStack(pub(crate) Vec<Arc<dyn AgentHooks>>);

#[async_trait::async_trait]
impl AgentHooks for HookStack {
    fn takes(&self, event: &str) -> bool {
        self.0.iter().any(|hooks| hooks.takes(event))
    }

    fn call_filters(&self) -> Vec<String> {
        let mut filters: Vec<String> = self
            .0
            .iter()
            .flat_map(|hooks| hooks.call_filters())
            .collect();
        filters.sort();
        filters.dedup();
        filters
    }

    async fn on_event(&self, input: &HookInput) -> HookReply {
        let mut reply = HookReply::default();
        let mut input = input.clone();
        let name = input.event.name();
        for hooks in self.0.iter().filter(|hooks| hooks.takes(name)) {
            let said = hooks.on_event(&input).await;
            if let (Some(updated), HookEvent::PreToolUse(call)) =
                (&said.updated_input, &mut input.event)
            {
                call.tool_input = updated.clone();
            }
            reply.merge(said);
            if reply.blocks() {
                break;
            }
        }
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::HookDecision;
    use serde_json::{Value, json};

    /// A hook that says one thing of every call.
    struct Saying {
        decision: Option<HookDecision>,
        input: Option<Value>,
        feedback: &'static str,
    }

    #[async_trait::async_trait]
    impl AgentHooks for Saying {
        async fn on_event(&self, input: &HookInput) -> HookReply {
            let seen = input.event.tool_use().map(|call| call.tool_input.clone());
            HookReply {
                decision: self.decision,
                reason: Some(format!(
                    "{} saw {}",
                    self.feedback,
                    seen.unwrap_or_default()
                )),
                updated_input: self.input.clone(),
                additional_context: Some(self.feedback.to_owned()),
                ..HookReply::default()
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
        let reply = stack.on_event(&crate::hooks::sample_call()).await;
        assert_eq!(reply.decision, Some(HookDecision::Ask));
        assert_eq!(
            reply.reason.as_deref(),
            Some(r#"second saw {"command":"ls -a"}"#),
            "the second hook sees the first one's input"
        );
        assert_eq!(reply.updated_input, Some(json!({"command": "ls -a"})));
        assert_eq!(reply.additional_context.as_deref(), Some("first\nsecond"));
    }
}
