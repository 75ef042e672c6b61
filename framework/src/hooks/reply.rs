//! [`HookReply`]: what hooks say of an event, in Claude Code's hook-output terms, and how the
//! replies of several hooks of one event combine.

use crate::tool::ElicitationAnswer;
use serde_json::Value;

/// What a hook decides about what happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecision {
    /// Let it happen without asking (a call: deny rules still apply).
    Allow,
    /// Ask the user, whatever the permission mode says (a call).
    Ask,
    /// Stop it: a call is denied, a prompt blocked, a stop refused (the agent goes on), a task
    /// refused, a compaction stopped, a question declined. Exit code 2 of a command hook,
    /// `decision: "block"`, `permissionDecision: "deny"`, `behavior: "deny"`.
    Block,
}

impl HookDecision {
    /// How strong it is: a block wins over a question, a question over an allowance.
    fn rank(decision: Option<HookDecision>) -> u8 {
        match decision {
            None => 0,
            Some(HookDecision::Allow) => 1,
            Some(HookDecision::Ask) => 2,
            Some(HookDecision::Block) => 3,
        }
    }
}

/// What the hooks of one event said. Each field is heeded by the events it applies to (as
/// Claude Code's hook output is) and ignored by the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookReply {
    /// Their decision (a block wins over ask, ask over allow).
    pub decision: Option<HookDecision>,
    /// Why: a block's reason goes to the model (to the user for a blocked prompt).
    pub reason: Option<String>,
    /// `continue: false`: the agent stops after this event, with this reason for the user.
    pub stop: Option<String>,
    /// `systemMessage`: shown to the user.
    pub system_message: Option<String>,
    /// `additionalContext` (and a prompt's or session start's plain output): for the model.
    pub additional_context: Option<String>,
    /// The call's input to run it with instead (`updatedInput`).
    pub updated_input: Option<Value>,
    /// A denied call may be tried again (`PermissionDenied`'s `retry`).
    pub retry: bool,
    /// The answer to an MCP server's question given in the user's place (`Elicitation`), or
    /// instead of theirs (`ElicitationResult`).
    pub elicitation: Option<ElicitationAnswer>,
    /// Instructions for a compaction's summary (`PreCompact`'s `customInstructions`).
    pub custom_instructions: Option<String>,
    /// What went wrong with a hook (it failed, timed out, answered nonsense), for the user.
    pub notices: Vec<String>,
}

impl HookReply {
    /// A reply that blocks, saying why.
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            decision: Some(HookDecision::Block),
            reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// A reply that decides, saying why.
    pub fn decide(decision: HookDecision, reason: Option<String>) -> Self {
        Self {
            decision: Some(decision),
            reason,
            ..Self::default()
        }
    }

    /// Whether it blocks.
    pub fn blocks(&self) -> bool {
        self.decision == Some(HookDecision::Block)
    }

    /// The reason of a block, or a plain word when none was given.
    pub fn block_reason(&self) -> String {
        self.reason
            .clone()
            .filter(|reason| !reason.trim().is_empty())
            .unwrap_or_else(|| "no reason given".to_owned())
    }

    /// Takes in a later hook's reply: the stronger decision stands with its reason (reasons of
    /// equal decisions add up), texts add up a line apart, the later rewritten input and
    /// answer stand, the first stop stands.
    pub fn merge(&mut self, later: HookReply) {
        let (mine, theirs) = (
            HookDecision::rank(self.decision),
            HookDecision::rank(later.decision),
        );
        if theirs > mine {
            self.decision = later.decision;
            self.reason = later.reason;
        } else if theirs == mine && theirs > 0 {
            join(&mut self.reason, later.reason);
        }
        if self.stop.is_none() {
            self.stop = later.stop;
        }
        join(&mut self.system_message, later.system_message);
        join(&mut self.additional_context, later.additional_context);
        join(&mut self.custom_instructions, later.custom_instructions);
        if later.updated_input.is_some() {
            self.updated_input = later.updated_input;
        }
        if later.elicitation.is_some() {
            self.elicitation = later.elicitation;
        }
        self.retry |= later.retry;
        self.notices.extend(later.notices);
    }
}

/// `more` after `text`, a line apart (empty texts dropped).
fn join(text: &mut Option<String>, more: Option<String>) {
    let more = more.filter(|more| !more.trim().is_empty());
    *text = match (text.take(), more) {
        (Some(text), Some(more)) => Some(format!("{text}\n{more}")),
        (text, more) => text.or(more),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_wins_over_ask_and_ask_over_allow() {
        let mut reply = HookReply::decide(HookDecision::Allow, Some("ok".into()));
        reply.merge(HookReply::block("no"));
        reply.merge(HookReply::decide(HookDecision::Ask, None));
        assert_eq!(reply.decision, Some(HookDecision::Block));
        assert_eq!(reply.reason.as_deref(), Some("no"));
    }

    #[test]
    fn reasons_of_equal_decisions_and_contexts_add_up() {
        let mut reply = HookReply::block("first");
        reply.additional_context = Some("a".into());
        let mut later = HookReply::block("second");
        later.additional_context = Some("b".into());
        later.stop = Some("halt".into());
        reply.merge(later);
        assert_eq!(reply.reason.as_deref(), Some("first\nsecond"));
        assert_eq!(reply.additional_context.as_deref(), Some("a\nb"));
        assert_eq!(reply.stop.as_deref(), Some("halt"));
    }
}
