//! The permission step: what the session's policy (and the hooks) say of a call, and asking the
//! front-end when they say ask.

use super::CallScope;
use crate::event::{
    AgentEvent, PermissionOptionKind, PermissionOutcome, Refusal, ToolCallSnapshot,
};
use crate::hooks::HookDecision;
use crate::permission::{CallSubject, Decision, PermissionOption, PermissionRequest, allow_rules};
use crate::provider::ToolRegistry;
use crate::sync::lock;
use crate::tool::{PreparedCall, RulePatterns};
use std::path::{Path, PathBuf};

/// The policy's decision overruled by the hooks': a rule's denial stands; otherwise a hook
/// that allows or asks decides.
pub(super) fn with_hook_decision(hook: Option<HookDecision>, policy: Decision) -> Decision {
    match (hook, policy) {
        (_, Decision::Deny(reason)) => Decision::Deny(reason),
        (Some(HookDecision::Allow), _) => Decision::Allow,
        (Some(HookDecision::Ask), _) => Decision::Ask,
        (_, policy) => policy,
    }
}

/// Carries out the policy's decision. Asking is one mechanism: the front-end's
/// [`PermissionHandler`] is asked (and sees the whole call in its [`PermissionRequest`]); its
/// answer, or the chat's cancellation, is what the transcript records, as
/// [`AgentEvent::PermissionResolved`]. (This holds no reference to the prepared call, which is
/// not `Sync`, so the chat's future stays `Send`.)
pub(super) async fn check_permission(
    decision: Decision,
    allow_rules: Vec<String>,
    snapshot: &ToolCallSnapshot,
    scope: &CallScope,
) -> Result<(), Refusal> {
    match decision {
        Decision::Allow => Ok(()),
        Decision::Deny(reason) => Err(Refusal::DeniedByRule { reason }),
        Decision::Ask => {
            let request = PermissionRequest {
                session_id: scope.session_id.clone(),
                tool_call: snapshot.clone(),
                options: PermissionOption::standard_set(&snapshot.tool_name),
                allow_rules,
            };
            let outcome = tokio::select! {
                outcome = scope.permissions.request_permission(request) => outcome,
                () = scope.cancel.cancelled() => PermissionOutcome::Cancelled,
            };
            scope.events.emit(AgentEvent::PermissionResolved {
                tool_call_id: snapshot.tool_call_id.clone(),
                outcome,
            });
            match outcome {
                PermissionOutcome::Cancelled => Err(Refusal::Cancelled { started: false }),
                PermissionOutcome::Unanswered => Err(Refusal::Unanswered {
                    tool: snapshot.tool_name.clone(),
                }),
                PermissionOutcome::Selected { kind } => {
                    lock(&scope.remembered).remember(&snapshot.tool_name, kind);
                    if kind.allows() {
                        Ok(())
                    } else {
                        Err(Refusal::RejectedByUser {
                            tool: snapshot.tool_name.clone(),
                            always: kind == PermissionOptionKind::RejectAlways,
                        })
                    }
                }
            }
        }
    }
}

/// What the session's policy says of a prepared call, and the rules that would allow exactly
/// it (for a front-end that cannot ask).
pub(super) fn decide(
    prepared: &dyn PreparedCall,
    snapshot: &ToolCallSnapshot,
    scope: &CallScope,
    registry: &ToolRegistry,
) -> (Decision, Vec<String>) {
    // The session's temporary folder holds what tools saved for the model to read back; the
    // providers' readable roots (skills' files) may be read, not changed.
    // Canonical already (see `SessionState::temp_dir`).
    let temp_dir = scope.state.existing_temp_dir();
    let readable: Vec<&Path> = if snapshot.kind.is_read_only() {
        registry.readable_roots().collect()
    } else {
        Vec::new()
    };
    let outside_workspace = snapshot.locations.iter().any(|location| {
        !scope
            .workspace_roots
            .iter()
            .map(PathBuf::as_path)
            .chain(temp_dir.as_deref())
            .chain(readable.iter().copied())
            .any(|root| location.path.starts_with(root))
    });
    let patterns = registry
        .get(&snapshot.tool_name)
        .map_or(RulePatterns::None, |tool| tool.tool.rule_patterns());
    let subject = CallSubject {
        tool_name: &snapshot.tool_name,
        kind: snapshot.kind,
        patterns,
        call: prepared,
        locations: &snapshot.locations,
        outside_workspace,
        cwd: &scope.cwd,
    };
    let remembered = lock(&scope.remembered);
    (
        scope.policy.decide(&subject, &remembered),
        allow_rules(&subject),
    )
}
