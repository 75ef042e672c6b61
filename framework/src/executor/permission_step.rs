//! The permission step: what the session's policy (and the hooks) say of a call, and asking the
//! front-end when they say ask.

use super::CallScope;
use crate::event::{AgentEvent, Refusal, ToolCallSnapshot};
use crate::hooks::{HookDecision, HookEvent, HookToolUse};
use crate::permission::PermissionOutcome;
use crate::permission::{
    AnsweredCall, CallSubject, Decision, PermissionOption, PermissionOptionKind, PermissionPolicy,
    PermissionRequest, allow_rules, definition_digest,
};
use crate::provider::ToolRegistry;
use crate::sync::lock;
use crate::tool::{PreparedCall, RulePatterns};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The policy's decision overruled by the hooks': a rule's denial stands; otherwise a hook
/// that allows or asks decides.
pub(super) fn with_hook_decision(hook: Option<HookDecision>, policy: Decision) -> Decision {
    match (hook, policy) {
        (_, Decision::Deny(reason)) => Decision::Deny(reason),
        (Some(HookDecision::Allow), _) => Decision::Allow,
        (Some(HookDecision::Ask), _) => Decision::Ask,
        (Some(HookDecision::Block), _) => Decision::Deny("a hook denied the call".to_owned()),
        (_, policy) => policy,
    }
}

/// What a decision was made of, for asking: the rules that would allow exactly the call, and
/// what an "always" answer would remember.
pub(super) struct Judged {
    /// What the policy said.
    pub decision: Decision,
    /// Rules that would allow exactly the call (for a front-end that cannot ask).
    pub allow_rules: Vec<String>,
    /// Whether the tool reads rule patterns of its own (then "always" allows `allow_rules`,
    /// not the tool).
    pub own_patterns: bool,
    /// The digest of the tool's definition.
    pub definition: String,
    /// Why no rule can allow the call, when part of it cannot be seen.
    pub unseen: Option<String>,
}

/// Carries out the policy's decision. Asking is one mechanism: the `PermissionRequest` hooks
/// (given the call as they see it, `hooked`) may answer first; otherwise the front-end's
/// [`PermissionHandler`] is asked (and sees the whole call in its [`PermissionRequest`]); its
/// answer, or the chat's cancellation, is what the transcript records, as
/// [`AgentEvent::PermissionResolved`]. A hook that allows the call with another input returns
/// that input, to be judged again. (This holds no reference to the prepared call, which is
/// not `Sync`, so the chat's future stays `Send`.)
pub(super) async fn check_permission(
    judged: Judged,
    snapshot: &ToolCallSnapshot,
    hooked: Option<&HookToolUse>,
    scope: &CallScope,
) -> Result<Option<Value>, Refusal> {
    let Judged {
        decision,
        allow_rules,
        own_patterns,
        definition,
        unseen,
    } = judged;
    match decision {
        Decision::Allow => Ok(None),
        Decision::Deny(reason) => Err(Refusal::DeniedByRule { reason }),
        Decision::Ask => {
            let tool_name = snapshot.tool_name.as_str();
            let always_allows = if own_patterns {
                (!allow_rules.is_empty()).then(|| allow_rules.join(", "))
            } else {
                Some(tool_name.to_owned())
            };
            if let (Some(hooks), Some(call)) = (&scope.hooks, hooked) {
                let event = HookEvent::PermissionRequest {
                    call: HookToolUse {
                        tool_use_id: None,
                        ..call.clone()
                    },
                    permission_suggestions: suggestions(tool_name, &allow_rules),
                };
                let reply = hooks.fire(event, scope.events.as_ref()).await;
                match reply.decision {
                    Some(HookDecision::Allow) => return Ok(reply.updated_input),
                    Some(HookDecision::Block) => {
                        return Err(Refusal::DeniedByHook {
                            reason: reply.block_reason(),
                        });
                    }
                    _ => {}
                }
            }
            let request = PermissionRequest {
                session_id: scope.session_id.clone(),
                tool_call: snapshot.clone(),
                options: PermissionOption::offered(tool_name, always_allows.as_deref()),
                allow_rules: allow_rules.clone(),
                unseen: unseen.clone(),
            };
            let asking = async {
                tokio::select! {
                    outcome = scope.permissions.request_permission(request) => outcome,
                    () = scope.cancel.cancelled() => PermissionOutcome::Cancelled,
                }
            };
            let (outcome, ()) = tokio::join!(asking, notify(scope, tool_name));
            scope.events.emit(AgentEvent::PermissionResolved {
                tool_call_id: snapshot.tool_call_id.clone(),
                outcome,
            });
            match outcome {
                PermissionOutcome::Cancelled => Err(Refusal::Cancelled { started: false }),
                PermissionOutcome::Unanswered => Err(Refusal::Unanswered {
                    tool: snapshot.tool_name.clone(),
                    unseen,
                }),
                PermissionOutcome::Selected { kind } => {
                    // "Always" is for what was shown: a call part of which no rule can see is
                    // allowed this once.
                    let kind = match kind {
                        PermissionOptionKind::AllowAlways if always_allows.is_none() => {
                            PermissionOptionKind::AllowOnce
                        }
                        kind => kind,
                    };
                    let answered = AnsweredCall {
                        tool_name,
                        rules: own_patterns.then_some(allow_rules.as_slice()),
                        definition: &definition,
                    };
                    lock(&scope.remembered).remember(answered, kind);
                    if kind.allows() {
                        Ok(None)
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

/// Tells the `Notification` hooks (`permission_prompt`) that the user is asked about a call of
/// `tool_name`, while they are.
async fn notify(scope: &CallScope, tool_name: &str) {
    if let Some(hooks) = &scope.hooks {
        let event = HookEvent::Notification {
            message: format!("agentry needs your permission to use {tool_name}"),
            title: "Permission needed".to_owned(),
            notification_type: "permission_prompt".to_owned(),
        };
        hooks.fire(event, scope.events.as_ref()).await;
    }
}

/// The rules that would allow a call, in Claude Code's permission-update shape
/// (`PermissionRequest`'s `permission_suggestions`).
fn suggestions(tool_name: &str, allow_rules: &[String]) -> Vec<serde_json::Value> {
    if allow_rules.is_empty() {
        return Vec::new();
    }
    let rules: Vec<serde_json::Value> = allow_rules
        .iter()
        .map(|rule| {
            let content = rule
                .strip_prefix(tool_name)
                .and_then(|rest| rest.strip_prefix('('))
                .and_then(|rest| rest.strip_suffix(')'));
            match content {
                Some(content) => serde_json::json!({"toolName": tool_name, "ruleContent": content}),
                None => serde_json::json!({"toolName": rule}),
            }
        })
        .collect();
    vec![serde_json::json!({
        "type": "addRules",
        "rules": rules,
        "behavior": "allow",
        "destination": "localSettings",
    })]
}

/// A prepared call as permission rules judge it.
pub(super) fn call_subject<'a>(
    snapshot: &'a ToolCallSnapshot,
    prepared: &'a dyn PreparedCall,
    patterns: RulePatterns,
    scope: &'a CallScope,
    outside_workspace: bool,
    definition: &'a str,
) -> CallSubject<'a> {
    CallSubject {
        tool_name: &snapshot.tool_name,
        kind: snapshot.kind,
        patterns,
        call: prepared,
        locations: &snapshot.locations,
        outside_workspace,
        cwd: &scope.cwd,
        definition,
    }
}

/// What the session's policy says of a prepared call, with what asking needs.
pub(super) fn decide(
    prepared: &dyn PreparedCall,
    snapshot: &ToolCallSnapshot,
    scope: &CallScope,
    registry: &ToolRegistry,
    policy: &PermissionPolicy,
) -> Judged {
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
    let tool = registry.get(&snapshot.tool_name);
    let patterns = tool
        .as_ref()
        .map_or(RulePatterns::None, |tool| tool.tool.rule_patterns());
    // The digest is needed to check an "always" answer about the tool, and to give one.
    let digest = || {
        tool.as_ref()
            .map_or_else(String::new, |tool| definition_digest(tool.tool.as_ref()))
    };
    let remembered = lock(&scope.remembered);
    let mut definition = if remembered.allowed.contains(&snapshot.tool_name) {
        digest()
    } else {
        String::new()
    };
    let subject = call_subject(
        snapshot,
        prepared,
        patterns,
        scope,
        outside_workspace,
        &definition,
    );
    let decision = policy.decide(&subject, &remembered);
    let allow_rules = allow_rules(&subject);
    drop(remembered);
    if decision == Decision::Ask && definition.is_empty() {
        definition = digest();
    }
    let own_patterns = patterns == RulePatterns::Own;
    Judged {
        decision,
        allow_rules,
        own_patterns,
        definition,
        unseen: own_patterns
            .then(|| prepared.rule_subjects().hidden)
            .flatten(),
    }
}
