//! The hooks' steps around a call: before it (which may rewrite its input, deny it, or decide
//! its permission) and after it (notices for the user, feedback for the model).

use super::{CallResult, CallScope, canonical_locations, prepare};
use crate::event::{AgentEvent, CallTracker, Refusal, ToolCallSnapshot};
use crate::hooks::{AgentHooks, HookCall, HookDecision, HookSession};
use crate::provider::ToolRegistry;
use crate::tool::ContentBlock;
use crate::tool::PreparedCall;

/// Runs the hooks before a call and takes in what they say: notices go to the user, a
/// rewritten input is prepared again (and must still be valid), a denial refuses the call.
/// Returns the call as the hooks saw it (with the input they gave) and their permission
/// decision, if they made one.
pub(super) async fn pre_hooks(
    hooks: &dyn AgentHooks,
    registry: &ToolRegistry,
    prepared: &mut Box<dyn PreparedCall>,
    tracker: &mut CallTracker,
    scope: &CallScope,
) -> Result<(HookCall, Option<HookDecision>), Refusal> {
    let mut call = hook_call_of(tracker.snapshot(), scope);
    let outcome = tokio::select! {
        outcome = hooks.pre_tool_use(&call) => outcome,
        () = scope.cancel.cancelled() => return Err(Refusal::Cancelled { started: false }),
    };
    for message in outcome.notices {
        scope.events.emit(AgentEvent::Notice { message });
    }
    if outcome.decision == Some(HookDecision::Deny) {
        let reason = outcome
            .reason
            .unwrap_or_else(|| "no reason given".to_owned());
        return Err(Refusal::DeniedByHook { reason });
    }
    if let Some(input) = outcome.updated_input {
        let name = tracker.snapshot().tool_name.clone();
        let tool = registry.get(&name).ok_or_else(|| Refusal::UnknownTool {
            tool: name.clone(),
            available: registry.names().join(", "),
        })?;
        call.input = input.clone();
        *prepared = prepare(&tool, input, scope)?;
        tracker.rewritten(prepared.title(), canonical_locations(prepared.as_ref()));
    }
    Ok((call, outcome.decision))
}

/// A call as hooks see it.
fn hook_call_of(snapshot: &ToolCallSnapshot, scope: &CallScope) -> HookCall {
    HookCall {
        session: HookSession {
            session_id: scope.session_id.to_string(),
            cwd: scope.cwd.clone(),
            permission_mode: scope.policy.mode.as_str().to_owned(),
        },
        tool_name: snapshot.tool_name.clone(),
        kind: snapshot.kind,
        tool_call_id: snapshot.tool_call_id.to_string(),
        input: snapshot.raw_input.clone(),
    }
}

/// Runs the hooks after a call: their notices go to the user, their feedback to the model
/// with the call's result.
pub(super) async fn after_hooks(
    hooks: &dyn AgentHooks,
    call: &HookCall,
    result: CallResult,
    scope: &CallScope,
) -> CallResult {
    let CallResult::Done(mut result) = result else {
        return result;
    };
    let outcome = hooks
        .post_tool_use(call, &result.text(), result.is_error)
        .await;
    for message in outcome.notices {
        scope.events.emit(AgentEvent::Notice { message });
    }
    if let Some(feedback) = outcome.feedback {
        result.content.push(ContentBlock::text(format!(
            "PostToolUse hook feedback:\n{feedback}"
        )));
    }
    CallResult::Done(result)
}
