//! Hooks: code that runs before a tool call (and may allow it without asking, deny it with a
//! reason the model reads, make the user be asked, or rewrite its input), after it (and may
//! give the model feedback), when a prompt is submitted (and may block it or add context),
//! when the agent or a sub-agent is about to stop (and may make it go on, saying why), and
//! around a compaction of the conversation (before it, to stop it or add to its instructions;
//! after it, to see what was kept).
//!
//! Teams assembling their own agent implement [`AgentHooks`] in Rust
//! ([`AgentBuilder::hooks`](crate::agent::AgentBuilder::hooks)); the stock agent's
//! Claude-compatible command hooks are `agentry-stock`'s `CommandHooks`.

mod stack;

pub(crate) use stack::HookStack;

use crate::tool::ToolKind;
use serde_json::Value;
use std::path::PathBuf;

/// What a hook decides about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookDecision {
    /// Run it without asking (deny rules still apply).
    Allow,
    /// Do not run it; the reason goes to the model.
    Deny,
    /// Ask the user, whatever the permission mode says.
    Ask,
}

/// The session an event happens in, as hooks see it.
#[derive(Debug, Clone)]
pub struct HookSession {
    /// The session.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The permission mode (`default`, `accept_edits`, `plan`, `bypass`).
    pub permission_mode: String,
}

/// A call, as hooks see it.
#[derive(Debug, Clone)]
pub struct HookCall {
    /// Its session.
    pub session: HookSession,
    /// The tool's name.
    pub tool_name: String,
    /// The tool's kind.
    pub kind: ToolKind,
    /// The call's id.
    pub tool_call_id: String,
    /// Its input.
    pub input: Value,
}

/// What the hooks before a call said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolOutcome {
    /// Their decision, if any (deny wins over ask, ask over allow).
    pub decision: Option<HookDecision>,
    /// Why (the model reads a denial's reason).
    pub reason: Option<String>,
    /// The input to run the call with instead.
    pub updated_input: Option<Value>,
    /// What went wrong with a hook (failed, timed out), for the user.
    pub notices: Vec<String>,
}

/// What the hooks after a call said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolOutcome {
    /// Feedback the model reads with the call's result.
    pub feedback: Option<String>,
    /// What went wrong with a hook, for the user.
    pub notices: Vec<String>,
}

/// What the hooks said of a submitted prompt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptOutcome {
    /// Why the prompt is blocked (the model never sees it), if it is.
    pub blocked: Option<String>,
    /// Context the model reads with the prompt.
    pub context: Option<String>,
    /// What went wrong with a hook, for the user.
    pub notices: Vec<String>,
}

/// What the hooks said when the agent was about to stop.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopOutcome {
    /// Why it must go on (the model reads it), if it must.
    pub go_on: Option<String>,
    /// What went wrong with a hook, for the user.
    pub notices: Vec<String>,
}

/// What the hooks said before a compaction.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreCompactOutcome {
    /// Why the compaction must not happen, if it must not.
    pub blocked: Option<String>,
    /// Instructions for the summary, added to the user's.
    pub instructions: Option<String>,
    /// What went wrong with a hook, for the user.
    pub notices: Vec<String>,
}

/// A compaction about to happen, as hooks see it.
#[derive(Debug, Clone)]
pub struct CompactHook {
    /// Its session.
    pub session: HookSession,
    /// What set it off.
    pub trigger: crate::event::CompactionTrigger,
    /// The user's instructions for the summary (a manual compaction's), if any.
    pub instructions: Option<String>,
}

/// Hooks at the agent's points: tool use, prompt submission, stopping, compaction. Every method
/// does nothing unless implemented.
#[async_trait::async_trait]
pub trait AgentHooks: Send + Sync {
    /// Before a call runs (after its input was validated, before permission is checked).
    async fn pre_tool_use(&self, _call: &HookCall) -> PreToolOutcome {
        PreToolOutcome::default()
    }
    /// After a call ended: `result` is what the model reads, `failed` whether it failed.
    async fn post_tool_use(
        &self,
        _call: &HookCall,
        _result: &str,
        _failed: bool,
    ) -> PostToolOutcome {
        PostToolOutcome::default()
    }
    /// A prompt was submitted, before the model sees it.
    async fn user_prompt_submit(&self, _session: &HookSession, _prompt: &str) -> PromptOutcome {
        PromptOutcome::default()
    }
    /// The agent (`sub_agent` false) or a sub-agent is about to end its chat with an answer;
    /// `already_going_on` when a stop hook made it go on before in this chat.
    async fn stop(
        &self,
        _session: &HookSession,
        _sub_agent: bool,
        _already_going_on: bool,
    ) -> StopOutcome {
        StopOutcome::default()
    }
    /// Before the conversation is compacted.
    async fn pre_compact(&self, _compaction: &CompactHook) -> PreCompactOutcome {
        PreCompactOutcome::default()
    }
    /// After it was: what was done, and the summary written (when one was). Returns what went
    /// wrong with a hook, for the user.
    async fn post_compact(
        &self,
        _compaction: &CompactHook,
        _done: &crate::event::Compaction,
        _summary: Option<&str>,
    ) -> Vec<String> {
        Vec::new()
    }
}

/// Shared hooks are the hooks they share.
#[async_trait::async_trait]
impl<H: AgentHooks + ?Sized> AgentHooks for std::sync::Arc<H> {
    async fn pre_tool_use(&self, call: &HookCall) -> PreToolOutcome {
        (**self).pre_tool_use(call).await
    }
    async fn post_tool_use(&self, call: &HookCall, result: &str, failed: bool) -> PostToolOutcome {
        (**self).post_tool_use(call, result, failed).await
    }
    async fn user_prompt_submit(&self, session: &HookSession, prompt: &str) -> PromptOutcome {
        (**self).user_prompt_submit(session, prompt).await
    }
    async fn stop(
        &self,
        session: &HookSession,
        sub_agent: bool,
        already_going_on: bool,
    ) -> StopOutcome {
        (**self).stop(session, sub_agent, already_going_on).await
    }
    async fn pre_compact(&self, compaction: &CompactHook) -> PreCompactOutcome {
        (**self).pre_compact(compaction).await
    }
    async fn post_compact(
        &self,
        compaction: &CompactHook,
        done: &crate::event::Compaction,
        summary: Option<&str>,
    ) -> Vec<String> {
        (**self).post_compact(compaction, done, summary).await
    }
}

impl PreToolOutcome {
    /// Takes in one hook's decision: deny wins over ask, ask over allow.
    pub fn decide(&mut self, decision: HookDecision, reason: Option<String>) {
        let rank = |d: Option<HookDecision>| match d {
            None => 0,
            Some(HookDecision::Allow) => 1,
            Some(HookDecision::Ask) => 2,
            Some(HookDecision::Deny) => 3,
        };
        if rank(Some(decision)) >= rank(self.decision) {
            self.decision = Some(decision);
            self.reason = reason.filter(|r| !r.is_empty()).or(self.reason.take());
        }
    }
}

/// A call of `ls` in Bash, as tests of hooks give it.
#[cfg(test)]
pub(crate) fn sample_call() -> HookCall {
    HookCall {
        session: HookSession {
            session_id: "s".into(),
            cwd: "/work".into(),
            permission_mode: "default".into(),
        },
        tool_name: "Bash".into(),
        kind: ToolKind::Execute,
        tool_call_id: "c".into(),
        input: serde_json::json!({"command": "ls"}),
    }
}
