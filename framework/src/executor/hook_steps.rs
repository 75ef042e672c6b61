//! The hooks' steps around a call: before it (`PreToolUse`: rewrite its input, deny it, decide
//! its permission), when it is refused by the permissions (`PermissionDenied`), and after it
//! (`PostToolUse`, or `PostToolUseFailure` for a call that failed: notices for the user,
//! feedback for the model).

use super::permission_step::call_subject;
use super::{CallResult, CallScope, canonical_locations, prepare};
use crate::event::{CallTracker, Refusal, ToolCallSnapshot};
use crate::hooks::{HookDecision, HookEvent, HookToolUse, ScopeHooks};
use crate::model::ToolResult;
use crate::permission::{PermissionRule, RuleAction};
use crate::provider::ToolRegistry;
use crate::tool::{ContentBlock, PreparedCall, RulePatterns};
use serde_json::{Value, json};
use std::time::Instant;

/// What the hooks before a call said that matters after it: the call as they saw it, their
/// permission decision and context for the model.
pub(super) struct PreHooked {
    pub(super) call: HookToolUse,
    pub(super) decision: Option<HookDecision>,
    pub(super) context: Option<String>,
}

/// Runs the hooks before a call and takes in what they say: a rewritten input is prepared
/// again (and must still be valid), a block refuses the call.
pub(super) async fn pre_hooks(
    hooks: &ScopeHooks,
    registry: &ToolRegistry,
    prepared: &mut Box<dyn PreparedCall>,
    tracker: &mut CallTracker,
    scope: &CallScope,
) -> Result<PreHooked, Refusal> {
    let mut call = tool_use_of(tracker.snapshot());
    match_filters(
        &mut call,
        hooks,
        prepared.as_ref(),
        tracker.snapshot(),
        scope,
        registry,
    );
    let reply = tokio::select! {
        reply = hooks.fire(HookEvent::PreToolUse(call.clone()), scope.events.as_ref()) => reply,
        () = scope.cancel.cancelled() => return Err(Refusal::Cancelled { started: false }),
    };
    if reply.blocks() {
        return Err(Refusal::DeniedByHook {
            reason: reply.block_reason(),
        });
    }
    if let Some(input) = reply.updated_input {
        rewrite(hooks, registry, prepared, tracker, &mut call, input, scope)?;
    }
    Ok(PreHooked {
        call,
        decision: reply.decision,
        context: reply.additional_context,
    })
}

/// Prepares a call again with the input a hook rewrote it to (it must still be valid), tells
/// the front-end its new title and locations, and makes `call` (as the hooks see it) the new
/// call.
pub(super) fn rewrite(
    hooks: &ScopeHooks,
    registry: &ToolRegistry,
    prepared: &mut Box<dyn PreparedCall>,
    tracker: &mut CallTracker,
    call: &mut HookToolUse,
    input: Value,
    scope: &CallScope,
) -> Result<(), Refusal> {
    let name = tracker.snapshot().tool_name.clone();
    let tool = registry.get(&name).ok_or_else(|| Refusal::UnknownTool {
        tool: name.clone(),
        available: registry.names().join(", "),
    })?;
    call.tool_input = input.clone();
    *prepared = prepare(&tool, input, scope)?;
    tracker.rewritten(prepared.title(), canonical_locations(prepared.as_ref()));
    match_filters(
        call,
        hooks,
        prepared.as_ref(),
        tracker.snapshot(),
        scope,
        registry,
    );
    Ok(())
}

/// Gives `call` the hooks' call filters (Claude Code's `if`; see
/// [`AgentHooks::call_filters`](crate::hooks::AgentHooks::call_filters)) that the prepared call
/// matches, judged as the session's permission rules are. A filter that is not a rule counts
/// as matched (its hooks were told of it when they were read).
fn match_filters(
    call: &mut HookToolUse,
    hooks: &ScopeHooks,
    prepared: &dyn PreparedCall,
    snapshot: &ToolCallSnapshot,
    scope: &CallScope,
    registry: &ToolRegistry,
) {
    let filters = hooks.hooks.call_filters();
    if filters.is_empty() {
        return;
    }
    let patterns = registry
        .get(&snapshot.tool_name)
        .map_or(RulePatterns::None, |tool| tool.tool.rule_patterns());
    let subject = call_subject(snapshot, prepared, patterns, scope, false, "");
    call.matched_filters = filters
        .into_iter()
        .filter(
            |filter| match PermissionRule::parse(RuleAction::Allow, filter) {
                Ok(rule) => scope.policy.filter_matches(&rule, &subject),
                Err(_) => true,
            },
        )
        .collect();
}

/// A call as hooks see it.
pub(super) fn tool_use_of(snapshot: &ToolCallSnapshot) -> HookToolUse {
    HookToolUse {
        tool_name: snapshot.tool_name.clone(),
        kind: snapshot.kind,
        tool_input: snapshot.raw_input.clone(),
        tool_use_id: Some(snapshot.tool_call_id.to_string()),
        matched_filters: Vec::new(),
    }
}

/// Runs the `PermissionDenied` hooks for a call the permissions refused; when one says it may
/// be tried again, the model is told so with the refusal.
pub(super) async fn denied_hooks(
    hooks: &ScopeHooks,
    call: HookToolUse,
    refusal: &Refusal,
    mut result: ToolResult,
    scope: &CallScope,
) -> ToolResult {
    let event = HookEvent::PermissionDenied {
        call,
        reason: refusal.to_string(),
    };
    if hooks.fire(event, scope.events.as_ref()).await.retry {
        result.content.push(ContentBlock::text(
            "A PermissionDenied hook says this call may be tried again.",
        ));
    }
    result
}

/// Runs the hooks after a call (`PostToolUse`, or `PostToolUseFailure` when it failed): their
/// feedback (a block's reason, their context) goes to the model with the call's result.
pub(super) async fn after_hooks(
    hooks: &ScopeHooks,
    pre: PreHooked,
    started: Instant,
    result: CallResult,
    scope: &CallScope,
) -> CallResult {
    let CallResult::Done(mut result) = result else {
        return result;
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (event, name) = if result.is_error {
        let event = HookEvent::PostToolUseFailure {
            call: pre.call,
            error: result.text(),
            is_interrupt: scope.cancel.is_cancelled(),
            duration_ms,
        };
        (event, "PostToolUseFailure")
    } else {
        let event = HookEvent::PostToolUse {
            call: pre.call,
            tool_response: json!({"output": result.text(), "is_error": false}),
            duration_ms,
        };
        (event, "PostToolUse")
    };
    if let Some(context) = pre.context.filter(|text| !text.trim().is_empty()) {
        result.content.push(ContentBlock::text(format!(
            "PreToolUse hook context:\n{context}"
        )));
    }
    let reply = hooks.fire(event, scope.events.as_ref()).await;
    let feedback: Vec<String> = [
        reply.blocks().then(|| reply.block_reason()),
        reply.additional_context,
    ]
    .into_iter()
    .flatten()
    .filter(|text| !text.trim().is_empty())
    .collect();
    if !feedback.is_empty() {
        result.content.push(ContentBlock::text(format!(
            "{name} hook feedback:\n{}",
            feedback.join("\n")
        )));
    }
    CallResult::Done(result)
}
