//! The [`Executor`]: the one place that moves a tool call through its life, for every tool and
//! every front-end.
//!
//! 1. [`Executor::announce`] reads the model's arguments, validates them against the tool's
//!    schema and emits the call as `pending` (title, kind, rawInput, locations);
//! 2. [`Executor::run`] asks the [`PermissionPolicy`] (and, when it says ask, the front-end's
//!    [`PermissionHandler`]); refused, invalid or cancelled calls go `pending → failed`;
//! 3. the call goes `in_progress`, runs, and its progress is forwarded as updates;
//! 4. it ends `completed` or `failed`, with content and rawOutput.
//!
//! Every status change goes through a [`CallTracker`], which refuses illegal transitions.
//! [`Executor::run_batch`] runs read-only calls concurrently and the others one at a time, in
//! the order the model asked, and returns results in that order.

use crate::event::{AgentEvent, EventSink, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate};
use crate::ids::{SessionId, ToolCallId, TurnId};
use crate::model::{ContentBlock, ToolResult};
use crate::permission::{
    CallSubject, Decision, PermissionHandler, PermissionOption, PermissionOutcome,
    PermissionPolicy, PermissionRequest, RememberedAnswers,
};
use crate::provider::{RegisteredTool, ToolRegistry};
use crate::sync::{lock, panic_message};
use crate::tool::{
    ClientServices, PreparedCall, ProgressSink, SessionState, ToolCallLocation, ToolContent,
    ToolContext, ToolError, ToolKind, ToolOutput, ToolProgress,
};
use futures::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a cancelled tool gets to clean up (kill its processes, …) before it is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The call's id.
    pub id: ToolCallId,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model sent them (may be invalid JSON).
    pub arguments: String,
}

/// Everything about the session and turn that the executor needs to run calls.
#[derive(Clone)]
pub struct CallScope {
    /// The session.
    pub session_id: SessionId,
    /// The assistant turn that asked for the calls.
    pub turn_id: TurnId,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// Directories the session may work in.
    pub workspace_roots: Vec<PathBuf>,
    /// What the front-end's client does for tools (its files, its terminals).
    pub client: ClientServices,
    /// The session's provider state.
    pub state: SessionState,
    /// The permission policy.
    pub policy: PermissionPolicy,
    /// The session's remembered "always" answers.
    pub remembered: Arc<Mutex<RememberedAnswers>>,
    /// Where events go.
    pub events: Arc<dyn EventSink>,
    /// Who answers permission questions.
    pub permissions: Arc<dyn PermissionHandler>,
    /// The turn's cancellation.
    pub cancel: CancellationToken,
}

/// A status change that the tool-call lifecycle does not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool call {id}: illegal status change {from:?} -> {to:?}")]
pub struct IllegalTransition {
    /// The call.
    pub id: ToolCallId,
    /// Its status.
    pub from: ToolCallStatus,
    /// The status asked for.
    pub to: ToolCallStatus,
}

/// Emits a call's updates and guards its status: only legal transitions reach the event stream.
pub struct CallTracker {
    id: ToolCallId,
    status: ToolCallStatus,
    events: Arc<dyn EventSink>,
    started: Option<Instant>,
}

impl CallTracker {
    /// Announces a call (status `pending`) and tracks it from there.
    pub fn announce(snapshot: ToolCallSnapshot, events: Arc<dyn EventSink>) -> Self {
        let id = snapshot.tool_call_id.clone();
        events.emit(AgentEvent::ToolCall(ToolCallSnapshot {
            status: ToolCallStatus::Pending,
            ..snapshot
        }));
        Self {
            id,
            status: ToolCallStatus::Pending,
            events,
            started: None,
        }
    }

    /// The call's status.
    pub fn status(&self) -> ToolCallStatus {
        self.status
    }

    /// Emits an update that does not change the status (progress).
    pub fn progress(&self, mut update: ToolCallUpdate) {
        update.tool_call_id = self.id.clone();
        update.status = None;
        self.events.emit(AgentEvent::ToolCallUpdate(update));
    }

    /// Moves to `to`, emitting `update` with it; refuses (and emits nothing) when illegal.
    pub fn transition(
        &mut self,
        to: ToolCallStatus,
        mut update: ToolCallUpdate,
    ) -> Result<(), IllegalTransition> {
        if !self.status.can_become(to) {
            return Err(IllegalTransition {
                id: self.id.clone(),
                from: self.status,
                to,
            });
        }
        match to {
            ToolCallStatus::InProgress => self.started = Some(Instant::now()),
            _ if to.is_final() => {
                update.duration_ms = self.started.map(|s| s.elapsed().as_millis() as u64);
            }
            _ => {}
        }
        self.status = to;
        update.tool_call_id = self.id.clone();
        update.status = Some(to);
        self.events.emit(AgentEvent::ToolCallUpdate(update));
        Ok(())
    }
}

/// A call that has been announced and waits to run.
pub struct PendingCall {
    tracker: CallTracker,
    snapshot: ToolCallSnapshot,
    ready: Result<ReadyCall, String>,
}

impl PendingCall {
    /// The call's id.
    pub fn id(&self) -> &ToolCallId {
        &self.snapshot.tool_call_id
    }

    /// Whether the call only reads (and may run beside other reads).
    pub fn is_read_only(&self) -> bool {
        self.snapshot.kind.is_read_only()
    }
}

struct ReadyCall {
    tool: Arc<RegisteredTool>,
    prepared: Box<dyn PreparedCall>,
}

/// Runs tool calls from a [`ToolRegistry`].
#[derive(Clone)]
pub struct Executor {
    registry: Arc<ToolRegistry>,
}

impl Executor {
    /// An executor over a registry.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        Self { registry }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Reads and validates a call's input and announces it as `pending`.
    pub fn announce(&self, request: ToolCallRequest, scope: &CallScope) -> PendingCall {
        let parsed: Result<Value, String> =
            serde_json::from_str(&request.arguments).map_err(|e| {
                format!(
                    "The arguments are not valid JSON ({e}). Call {} again with a JSON object that matches its input schema.",
                    request.name
                )
            });
        let raw_input = match &parsed {
            Ok(value) => value.clone(),
            Err(_) => Value::String(request.arguments.clone()),
        };
        let tool = self.registry.get(&request.name);
        let ready = match (tool, parsed) {
            (None, _) => Err(format!(
                "There is no tool named `{}`. Available tools: {}.",
                request.name,
                self.registry.names().join(", ")
            )),
            (Some(_), Err(message)) => Err(message),
            (Some(tool), Ok(input)) => prepare(tool, input, scope),
        };
        let (title, kind, locations) = match &ready {
            Ok(ready) => (
                ready.prepared.title(),
                ready.tool.tool.kind(),
                ready
                    .prepared
                    .locations()
                    .into_iter()
                    .map(|l| ToolCallLocation {
                        path: canonical_path(&l.path),
                        line: l.line,
                    })
                    .collect(),
            ),
            Err(_) => (
                request.name.clone(),
                self.registry
                    .get(&request.name)
                    .map_or(ToolKind::Other, |t| t.tool.kind()),
                Vec::new(),
            ),
        };
        let snapshot = ToolCallSnapshot {
            tool_call_id: request.id,
            turn_id: scope.turn_id.clone(),
            tool_name: request.name,
            title,
            kind,
            status: ToolCallStatus::Pending,
            raw_input,
            locations,
        };
        PendingCall {
            tracker: CallTracker::announce(snapshot.clone(), scope.events.clone()),
            snapshot,
            ready,
        }
    }

    /// Runs several announced calls: read-only ones concurrently, the others one at a time in
    /// order. Results come back in the order of `calls`.
    pub async fn run_batch(&self, calls: Vec<PendingCall>, scope: &CallScope) -> Vec<ToolResult> {
        let gate = tokio::sync::RwLock::new(());
        let runs = calls.into_iter().map(|call| {
            let gate = &gate;
            async move {
                // tokio's RwLock is fair: waiters are served in the order they queued, and
                // join_all polls these futures in order, so writes keep the model's order.
                if call.is_read_only() {
                    let _shared = gate.read().await;
                    self.run(call, scope).await
                } else {
                    let _exclusive = gate.write().await;
                    self.run(call, scope).await
                }
            }
        });
        futures::future::join_all(runs).await
    }

    /// Runs one announced call to its final status and returns what the model reads.
    pub async fn run(&self, call: PendingCall, scope: &CallScope) -> ToolResult {
        let PendingCall {
            mut tracker,
            snapshot,
            ready,
        } = call;
        let ready = match ready {
            Ok(ready) => ready,
            Err(message) => return fail(&mut tracker, message, None),
        };
        if scope.cancel.is_cancelled() {
            return fail(&mut tracker, cancelled_message(false), None);
        }
        let decision = decide(&ready, &snapshot, scope);
        if let Err(message) = self.check_permission(decision, &snapshot, scope).await {
            return fail(&mut tracker, message, None);
        }
        // Moving a pending call to in_progress is always legal.
        let _ = tracker.transition(ToolCallStatus::InProgress, ToolCallUpdate::default());
        let tracker = Arc::new(Mutex::new(tracker));
        let ctx = ToolContext {
            session_id: scope.session_id.clone(),
            tool_call_id: snapshot.tool_call_id.clone(),
            cwd: scope.cwd.clone(),
            workspace_roots: scope.workspace_roots.clone(),
            cancel: scope.cancel.child_token(),
            progress: progress_sink(Arc::clone(&tracker), scope.events.clone()),
            client: scope.client.clone(),
            state: scope.state.clone(),
        };
        let outcome = run_cancellable(ready.prepared, ctx, &scope.cancel).await;
        let mut tracker = lock(&tracker);
        finish(&mut tracker, outcome, &scope.cancel)
    }

    /// Fails an announced call without running it (the response it came in was cut off).
    pub fn abandon(&self, call: PendingCall, reason: &str) -> ToolResult {
        let PendingCall { mut tracker, .. } = call;
        fail(&mut tracker, reason.to_owned(), None)
    }

    /// Carries out the policy's decision, asking the user when it says so. (It holds no
    /// reference to the prepared call, which is not `Sync`, so the turn's future stays `Send`.)
    async fn check_permission(
        &self,
        decision: Decision,
        snapshot: &ToolCallSnapshot,
        scope: &CallScope,
    ) -> Result<(), String> {
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny(reason) => Err(format!("Permission denied: {reason}.")),
            Decision::Ask => {
                let options = PermissionOption::standard_set(&snapshot.tool_name);
                scope.events.emit(AgentEvent::PermissionRequested {
                    tool_call_id: snapshot.tool_call_id.clone(),
                    options: options.clone(),
                });
                let request = PermissionRequest {
                    session_id: scope.session_id.clone(),
                    tool_call: snapshot.clone(),
                    options,
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
                    PermissionOutcome::Cancelled => Err(cancelled_message(false)),
                    PermissionOutcome::Selected { kind } => {
                        lock(&scope.remembered).remember(&snapshot.tool_name, kind);
                        if kind.allows() {
                            Ok(())
                        } else {
                            Err(format!(
                                "The user rejected this call of {}{}. Do not retry it; ask the user how to proceed if you need it.",
                                snapshot.tool_name,
                                if kind == crate::permission::PermissionOptionKind::RejectAlways {
                                    " and every later one in this session"
                                } else {
                                    ""
                                }
                            ))
                        }
                    }
                }
            }
        }
    }
}

/// What the session's policy says of a prepared call.
fn decide(ready: &ReadyCall, snapshot: &ToolCallSnapshot, scope: &CallScope) -> Decision {
    let outside_workspace = snapshot.locations.iter().any(|location| {
        !scope
            .workspace_roots
            .iter()
            .any(|root| location.path.starts_with(root))
    });
    let subject = CallSubject {
        tool_name: &snapshot.tool_name,
        kind: snapshot.kind,
        call: ready.prepared.as_ref(),
        locations: &snapshot.locations,
        outside_workspace,
    };
    let remembered = lock(&scope.remembered);
    scope.policy.decide(&subject, &remembered)
}

fn prepare(
    tool: Arc<RegisteredTool>,
    input: Value,
    scope: &CallScope,
) -> Result<ReadyCall, String> {
    let name = tool.tool.name().to_owned();
    tool.validate(&input).map_err(|problems| {
        format!(
            "The arguments do not match {name}'s input schema: {problems}. Call {name} again with corrected arguments."
        )
    })?;
    match tool.tool.prepare(input, &scope.cwd) {
        Ok(prepared) => Ok(ReadyCall { tool, prepared }),
        Err(error) => Err(format!(
            "{name} cannot take this input: {error}. Call it again with corrected arguments."
        )),
    }
}

/// The path with symlinks and `..` resolved: the canonical form of its longest existing
/// ancestor, with the rest appended (so a file about to be created resolves too).
pub fn canonical_path(path: &Path) -> PathBuf {
    if let Ok(canonical) = path.canonicalize() {
        return canonical;
    }
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    if let Ok(canonical) = normal.canonicalize() {
        return canonical;
    }
    let mut existing = normal.as_path();
    let mut rest = Vec::new();
    while let Some(parent) = existing.parent() {
        if let Some(name) = existing.file_name() {
            rest.push(name.to_owned());
        }
        existing = parent;
        if let Ok(canonical) = existing.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(canonical, |path, name| path.join(name));
        }
    }
    normal
}

fn progress_sink(tracker: Arc<Mutex<CallTracker>>, events: Arc<dyn EventSink>) -> ProgressSink {
    ProgressSink::new(move |progress| match progress {
        ToolProgress::Content(content) => lock(&tracker).progress(ToolCallUpdate {
            content: Some(content),
            ..ToolCallUpdate::default()
        }),
        ToolProgress::Locations(locations) => lock(&tracker).progress(ToolCallUpdate {
            locations: Some(locations),
            ..ToolCallUpdate::default()
        }),
        ToolProgress::Plan(entries) => events.emit(AgentEvent::Plan { entries }),
        other => tracing::debug!("progress this executor does not show: {other:?}"),
    })
}

/// Runs a prepared call; on cancellation the tool gets [`CANCEL_GRACE`] to stop by itself, and
/// a panicking tool becomes a failure.
async fn run_cancellable(
    prepared: Box<dyn PreparedCall>,
    ctx: ToolContext,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let mut run = AssertUnwindSafe(prepared.run(ctx)).catch_unwind();
    let outcome = tokio::select! {
        outcome = &mut run => outcome,
        () = cancel.cancelled() => match tokio::time::timeout(CANCEL_GRACE, run).await {
            Ok(outcome) => outcome,
            Err(_) => Ok(Err(ToolError::Cancelled)),
        },
    };
    outcome.unwrap_or_else(|panic| {
        Err(ToolError::failed(format!(
            "the tool panicked: {}",
            panic_message(panic.as_ref())
        )))
    })
}

fn finish(
    tracker: &mut CallTracker,
    outcome: Result<ToolOutput, ToolError>,
    cancel: &CancellationToken,
) -> ToolResult {
    match outcome {
        Ok(output) => {
            let result = ToolResult {
                tool_call_id: tracker.id.clone(),
                content: model_content(&output),
                is_error: false,
            };
            let _ = tracker.transition(
                ToolCallStatus::Completed,
                ToolCallUpdate {
                    content: Some(output.content),
                    raw_output: output.raw_output,
                    ..ToolCallUpdate::default()
                },
            );
            result
        }
        Err(ToolError::Cancelled) => fail(tracker, cancelled_message(true), None),
        Err(_) if cancel.is_cancelled() => fail(tracker, cancelled_message(true), None),
        Err(ToolError::Failed { message, output }) => fail(tracker, message, output),
        Err(error) => fail(tracker, error.to_string(), None),
    }
}

fn cancelled_message(started: bool) -> String {
    if started {
        "Cancelled by the user while running.".to_owned()
    } else {
        "Cancelled by the user before it ran.".to_owned()
    }
}

/// Fails the call (from `pending` or `in_progress`) and returns the error the model reads.
fn fail(tracker: &mut CallTracker, message: String, output: Option<ToolOutput>) -> ToolResult {
    let mut content = output
        .as_ref()
        .map(|o| o.content.clone())
        .unwrap_or_default();
    content.push(ToolContent::text(message.clone()));
    let model_text = match output.as_ref().map(ToolOutput::model_text) {
        Some(text) if !text.is_empty() => format!("{text}\n{message}"),
        _ => message,
    };
    let _ = tracker.transition(
        ToolCallStatus::Failed,
        ToolCallUpdate {
            content: Some(content),
            raw_output: output.and_then(|o| o.raw_output),
            ..ToolCallUpdate::default()
        },
    );
    ToolResult {
        tool_call_id: tracker.id.clone(),
        content: vec![ContentBlock::Text { text: model_text }],
        is_error: true,
    }
}

/// What the model reads of a successful output: its text, then any images.
fn model_content(output: &ToolOutput) -> Vec<ContentBlock> {
    let mut content = vec![ContentBlock::Text {
        text: output.model_text(),
    }];
    content.extend(output.content.iter().filter_map(|c| match c {
        ToolContent::Content {
            content: image @ ContentBlock::Image { .. },
        } => Some(image.clone()),
        _ => None,
    }));
    content
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_resolve_symlinks_and_dots_even_for_files_not_yet_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        assert_eq!(
            canonical_path(&root.join("real/../real/new.txt")),
            root.join("real/new.txt")
        );
        #[cfg(unix)]
        assert_eq!(
            canonical_path(&root.join("link/new/deeper.txt")),
            root.join("real/new/deeper.txt")
        );
        assert_eq!(canonical_path(&root.join("a/b/../c")), root.join("a/c"));
        #[cfg(unix)]
        assert_eq!(
            canonical_path(&root.join("nowhere/../link")),
            root.join("real")
        );
    }
}
