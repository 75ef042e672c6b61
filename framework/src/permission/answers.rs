//! Asking the user: the options a permission request offers, the answers, the "always" answers a
//! session remembers, and the front-end's [`PermissionHandler`].

use crate::event::ToolCallSnapshot;
pub use crate::event::permission::{PermissionOptionKind, PermissionOutcome};
use crate::ids::SessionId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::future::Future;

/// The answers "always allow" / "always reject" a user gave in a session, by tool name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RememberedAnswers {
    /// Tools the user always allows.
    pub allowed: BTreeSet<String>,
    /// Tools the user always rejects.
    pub rejected: BTreeSet<String>,
}

impl RememberedAnswers {
    /// Records an answer; the `*_once` kinds leave nothing to remember.
    pub fn remember(&mut self, tool_name: &str, answer: PermissionOptionKind) {
        match answer {
            PermissionOptionKind::AllowAlways => {
                self.rejected.remove(tool_name);
                self.allowed.insert(tool_name.to_owned());
            }
            PermissionOptionKind::RejectAlways => {
                self.allowed.remove(tool_name);
                self.rejected.insert(tool_name.to_owned());
            }
            PermissionOptionKind::AllowOnce | PermissionOptionKind::RejectOnce => {}
        }
    }
}

/// One option offered to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    /// The option's id.
    pub option_id: String,
    /// Its label.
    pub name: String,
    /// Its kind.
    pub kind: PermissionOptionKind,
}

impl PermissionOption {
    /// The four options offered for a call of `tool_name`.
    pub fn standard_set(tool_name: &str) -> Vec<PermissionOption> {
        let option = |kind: PermissionOptionKind, name: String| PermissionOption {
            option_id: kind.as_str().to_owned(),
            name,
            kind,
        };
        vec![
            option(PermissionOptionKind::AllowOnce, "Allow once".to_owned()),
            option(
                PermissionOptionKind::AllowAlways,
                format!("Always allow {tool_name}"),
            ),
            option(PermissionOptionKind::RejectOnce, "Reject".to_owned()),
            option(
                PermissionOptionKind::RejectAlways,
                format!("Always reject {tool_name}"),
            ),
        ]
    }
}

/// A question to the user about one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// The session.
    pub session_id: SessionId,
    /// The call, as announced.
    pub tool_call: ToolCallSnapshot,
    /// The options offered.
    pub options: Vec<PermissionOption>,
    /// Rules that would allow exactly this call, as the user would write them
    /// (`Bash(git status:*)`, `Write(src/lib.rs)`): what a front-end that cannot ask suggests.
    pub allow_rules: Vec<String>,
}

/// The front-end's side of permissions: shows the question and returns the answer.
#[async_trait::async_trait]
pub trait PermissionHandler: Send + Sync {
    /// Asks the user. The executor stops waiting (and reports `Cancelled`) when the turn is cancelled.
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome;
}

/// A handler made from an async function of the request: see [`handler_fn`].
pub struct FnPermissionHandler<F>(F);

/// A permission handler from an async function, for front-ends that ask their own way (a
/// terminal prompt, a dialog, a policy of their own):
///
/// ```
/// use agentry::permission::{PermissionOptionKind, PermissionOutcome, handler_fn};
///
/// let allow_reads = handler_fn(|request| async move {
///     let kind = if request.tool_call.kind.is_read_only() {
///         PermissionOptionKind::AllowOnce
///     } else {
///         PermissionOptionKind::RejectOnce
///     };
///     PermissionOutcome::Selected { kind }
/// });
/// # let _: std::sync::Arc<dyn agentry::permission::PermissionHandler> = std::sync::Arc::new(allow_reads);
/// ```
pub fn handler_fn<F, Fut>(answer: F) -> FnPermissionHandler<F>
where
    F: Fn(PermissionRequest) -> Fut + Send + Sync,
    Fut: Future<Output = PermissionOutcome> + Send,
{
    FnPermissionHandler(answer)
}

#[async_trait::async_trait]
impl<F, Fut> PermissionHandler for FnPermissionHandler<F>
where
    F: Fn(PermissionRequest) -> Fut + Send + Sync,
    Fut: Future<Output = PermissionOutcome> + Send,
{
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        (self.0)(request).await
    }
}

/// A handler for runs with nobody to ask: every question is [`PermissionOutcome::Unanswered`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RejectWhenAsked;

#[async_trait::async_trait]
impl PermissionHandler for RejectWhenAsked {
    async fn request_permission(&self, _request: PermissionRequest) -> PermissionOutcome {
        PermissionOutcome::Unanswered
    }
}
