//! The [`Executor`]: the one place that moves a tool call through its life, for every tool and
//! every front-end.
//!
//! 1. The model client reads the call's arguments once ([`ToolCallRequest`]);
//!    [`Executor::announce`] looks the tool up once, validates the arguments against its schema,
//!    lets the tool prepare the call, and emits it as `pending` (title, kind, rawInput,
//!    locations). The [`CallTracker`] holds the call from there: its id lives there alone.
//! 2. [`Executor::run`] asks the [`PermissionPolicy`] and, when it says ask, the front-end's
//!    [`PermissionHandler`]; the handler's answer is what the transcript records
//!    ([`AgentEvent::PermissionResolved`]). A call that will not run goes `pending → failed`
//!    with a typed [`Refusal`] (unknown tool, bad JSON, schema mismatch, invalid input, denied
//!    by rule, rejected by the user, cancelled).
//! 3. the call goes `in_progress`, runs, and its progress is forwarded as updates;
//! 4. it ends `completed` or `failed`, with content and rawOutput (and the [`Refusal`] when it
//!    was cancelled while running).
//!
//! Every status change goes through the [`CallTracker`], which refuses illegal transitions.
//! [`Executor::run_batch`] runs read-only calls concurrently and the others one at a time, in
//! the order the model asked, and returns results in that order.

use crate::event::{AgentEvent, EventSink, ToolCallSnapshot, ToolCallStatus, ToolCallUpdate};
use crate::hooks::{AgentHooks, HookCall, HookDecision, HookSession, PreToolOutcome};
use crate::ids::{SessionId, ToolCallId, TurnId};
use crate::model::{ContentBlock, ToolArguments, ToolCallRequest, ToolResult};
use crate::paths::canonical_path;
use crate::permission::{
    CallSubject, Decision, PermissionHandler, PermissionOption, PermissionOptionKind,
    PermissionOutcome, PermissionPolicy, PermissionRequest, RememberedAnswers, allow_rules,
};
use crate::provider::{InputProblem, RegisteredTool, ToolRegistry};
use crate::sync::{lock, panic_message};
use crate::tool::{
    ClientServices, Extensions, PreparedCall, ProgressSink, RulePatterns, SessionState,
    ToolCallLocation, ToolContent, ToolContext, ToolError, ToolKind, ToolOutput, ToolProgress,
};
use futures::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

mod refusal;

pub use refusal::Refusal;

/// How long a cancelled tool gets to clean up (kill its processes, …) before it is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

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
    /// Services offered to the calls (the chat's sub-agent runner).
    pub extensions: Extensions,
    /// Hooks around each call, if the agent has any.
    pub hooks: Option<Arc<dyn AgentHooks>>,
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
    /// The call as announced, with its status kept current.
    snapshot: ToolCallSnapshot,
    events: Arc<dyn EventSink>,
    started: Option<Instant>,
}

impl CallTracker {
    /// Tracks a call announced before that waited for the user's answer (status
    /// `awaiting_answer`), without announcing it again.
    pub fn awaiting_answer(snapshot: ToolCallSnapshot, events: Arc<dyn EventSink>) -> Self {
        let snapshot = ToolCallSnapshot {
            status: ToolCallStatus::AwaitingAnswer,
            ..snapshot
        };
        Self {
            snapshot,
            events,
            started: None,
        }
    }

    /// Announces a call (status `pending`) and tracks it from there.
    pub fn announce(snapshot: ToolCallSnapshot, events: Arc<dyn EventSink>) -> Self {
        let snapshot = ToolCallSnapshot {
            status: ToolCallStatus::Pending,
            ..snapshot
        };
        events.emit(AgentEvent::ToolCall(snapshot.clone()));
        Self {
            snapshot,
            events,
            started: None,
        }
    }

    /// The call as announced, with its current status.
    pub fn snapshot(&self) -> &ToolCallSnapshot {
        &self.snapshot
    }

    /// The call's status.
    pub fn status(&self) -> ToolCallStatus {
        self.snapshot.status
    }

    /// Emits an update that does not change the status (progress).
    pub fn progress(&self, mut update: ToolCallUpdate) {
        update.tool_call_id = self.snapshot.tool_call_id.clone();
        update.status = None;
        self.events.emit(AgentEvent::ToolCallUpdate(update));
    }

    /// Moves to `to`, emitting `update` with it; refuses (and emits nothing) when illegal.
    pub fn transition(
        &mut self,
        to: ToolCallStatus,
        mut update: ToolCallUpdate,
    ) -> Result<(), IllegalTransition> {
        if !self.status().can_become(to) {
            return Err(IllegalTransition {
                id: self.snapshot.tool_call_id.clone(),
                from: self.status(),
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
        self.snapshot.status = to;
        update.tool_call_id = self.snapshot.tool_call_id.clone();
        update.status = Some(to);
        self.events.emit(AgentEvent::ToolCallUpdate(update));
        Ok(())
    }
}

/// A call that has been announced and waits to run.
pub struct PendingCall {
    tracker: CallTracker,
    /// The prepared call, or why it will not run.
    ready: Result<Box<dyn PreparedCall>, Refusal>,
    /// Whether it was allowed to run already (it is taken up after waiting for an answer).
    permitted: bool,
}

/// How a call that the executor ran ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    /// It finished (completed or failed): what the model reads.
    Done(ToolResult),
    /// It waits for the user's answer (status `awaiting_answer`): its chat pauses, and the call
    /// runs again when the answer comes ([`Executor::reopen`]).
    AwaitingAnswer(ToolCallId),
}

impl PendingCall {
    /// The call as announced.
    pub fn snapshot(&self) -> &ToolCallSnapshot {
        self.tracker.snapshot()
    }

    /// Whether the call only reads (and may run beside other reads).
    pub fn is_read_only(&self) -> bool {
        self.snapshot().kind.is_read_only()
    }
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

    /// Looks the tool up, validates the call's input, prepares it and announces it as
    /// `pending`.
    pub fn announce(&self, request: ToolCallRequest, scope: &CallScope) -> PendingCall {
        let (snapshot, ready) = self.prepare_call(request, scope);
        PendingCall {
            tracker: CallTracker::announce(snapshot, scope.events.clone()),
            ready,
            permitted: false,
        }
    }

    /// Takes up a call that waited for the user's answer (status `awaiting_answer`) when its
    /// chat resumes: prepared again from the same request, not announced again, and not asked
    /// permission for again (it was running when the chat paused).
    pub fn reopen(&self, request: ToolCallRequest, scope: &CallScope) -> PendingCall {
        let (snapshot, ready) = self.prepare_call(request, scope);
        PendingCall {
            tracker: CallTracker::awaiting_answer(snapshot, scope.events.clone()),
            ready,
            permitted: true,
        }
    }

    /// The call's snapshot (as it would be announced) and its prepared form, or why it will
    /// not run.
    fn prepare_call(
        &self,
        request: ToolCallRequest,
        scope: &CallScope,
    ) -> (ToolCallSnapshot, Result<Box<dyn PreparedCall>, Refusal>) {
        let ToolCallRequest {
            id,
            name,
            arguments,
        } = request;
        let raw_input = arguments.raw_input();
        let tool = self.registry.get(&name);
        let kind = tool.as_ref().map_or(ToolKind::Other, |t| t.tool.kind());
        let ready = match (tool, arguments) {
            (None, _) => Err(Refusal::UnknownTool {
                tool: name.clone(),
                available: self.registry.names().join(", "),
            }),
            (Some(_), ToolArguments::Invalid { error, .. }) => Err(Refusal::BadJson {
                tool: name.clone(),
                error,
            }),
            (Some(tool), ToolArguments::Json(input)) => prepare(&tool, input, scope),
        };
        let (title, locations) = match &ready {
            Ok(prepared) => (
                prepared.title(),
                prepared
                    .locations()
                    .into_iter()
                    .map(|l| ToolCallLocation {
                        path: canonical_path(&l.path),
                        line: l.line,
                    })
                    .collect(),
            ),
            Err(_) => (name.clone(), Vec::new()),
        };
        let snapshot = ToolCallSnapshot {
            tool_call_id: id,
            turn_id: scope.turn_id.clone(),
            tool_name: name,
            title,
            kind,
            status: ToolCallStatus::Pending,
            raw_input,
            locations,
        };
        (snapshot, ready)
    }

    /// Runs several announced calls: read-only ones concurrently, the others one at a time in
    /// order. Results come back in the order of `calls`.
    pub async fn run_batch(&self, calls: Vec<PendingCall>, scope: &CallScope) -> Vec<CallResult> {
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

    /// Runs one announced call to its final status and returns what the model reads, unless
    /// it waits for the user's answer.
    pub async fn run(&self, call: PendingCall, scope: &CallScope) -> CallResult {
        let PendingCall {
            mut tracker,
            ready,
            permitted,
        } = call;
        let mut prepared = match ready {
            Ok(prepared) => prepared,
            Err(refusal) => return CallResult::Done(refuse(&mut tracker, refusal)),
        };
        if scope.cancel.is_cancelled() {
            let refusal = Refusal::Cancelled { started: false };
            return CallResult::Done(refuse(&mut tracker, refusal));
        }
        let mut hook_call = None;
        if let Some(hooks) = &scope.hooks {
            let mut call = hook_call_of(tracker.snapshot(), scope);
            let outcome = tokio::select! {
                outcome = hooks.pre_tool_use(&call) => outcome,
                () = scope.cancel.cancelled() => {
                    let refusal = Refusal::Cancelled { started: false };
                    return CallResult::Done(refuse(&mut tracker, refusal));
                }
            };
            if let Some(input) = &outcome.updated_input {
                call.input = input.clone();
            }
            match self.apply_pre_hooks(outcome, &mut prepared, &mut tracker, scope) {
                Ok(decision) if !permitted => {
                    let (policy, allow_rules) =
                        decide(prepared.as_ref(), tracker.snapshot(), scope, &self.registry);
                    let decision = match (decision, policy) {
                        (_, Decision::Deny(reason)) => Decision::Deny(reason),
                        (Some(HookDecision::Allow), _) => Decision::Allow,
                        (Some(HookDecision::Ask), _) => Decision::Ask,
                        (_, policy) => policy,
                    };
                    if let Err(refusal) =
                        check_permission(decision, allow_rules, tracker.snapshot(), scope).await
                    {
                        return CallResult::Done(refuse(&mut tracker, refusal));
                    }
                }
                Ok(_) => {}
                Err(refusal) => return CallResult::Done(refuse(&mut tracker, refusal)),
            }
            hook_call = Some(call);
        } else if !permitted {
            let (decision, allow_rules) =
                decide(prepared.as_ref(), tracker.snapshot(), scope, &self.registry);
            if let Err(refusal) =
                check_permission(decision, allow_rules, tracker.snapshot(), scope).await
            {
                return CallResult::Done(refuse(&mut tracker, refusal));
            }
        }
        let tool_call_id = tracker.snapshot().tool_call_id.clone();
        let extensions = self.extensions_for(tracker.snapshot(), scope);
        // Moving a pending call to in_progress is always legal.
        let _ = tracker.transition(ToolCallStatus::InProgress, ToolCallUpdate::default());
        let tracker = Arc::new(Mutex::new(tracker));
        let ctx = ToolContext {
            session_id: scope.session_id.clone(),
            tool_call_id,
            cwd: scope.cwd.clone(),
            workspace_roots: scope.workspace_roots.clone(),
            cancel: scope.cancel.child_token(),
            progress: progress_sink(Arc::clone(&tracker), scope.events.clone()),
            client: scope.client.clone(),
            state: scope.state.clone(),
            extensions,
        };
        let outcome = run_cancellable(prepared, ctx, &scope.cancel).await;
        let result = {
            let mut tracker = lock(&tracker);
            finish(&mut tracker, outcome, &scope.cancel)
        };
        match (&scope.hooks, hook_call) {
            (Some(hooks), Some(call)) => after_hooks(hooks.as_ref(), &call, result, scope).await,
            _ => result,
        }
    }

    /// The services offered to one call: the scope's, and for a tool that reads files, the
    /// paths the session's deny rules keep it from reading (for searches through folders).
    fn extensions_for(&self, snapshot: &ToolCallSnapshot, scope: &CallScope) -> Extensions {
        let mut extensions = scope.extensions.clone();
        let reads_files = self
            .registry
            .get(&snapshot.tool_name)
            .is_some_and(|tool| tool.tool.rule_patterns() == RulePatterns::ReadsFiles);
        if reads_files {
            let denials = scope.policy.read_denials(&snapshot.tool_name, &scope.cwd);
            extensions.insert(Arc::new(denials));
        }
        extensions
    }

    /// Takes in what the hooks before a call said: notices go to the user, a rewritten input
    /// is prepared again (and must still be valid), a denial refuses the call. Returns their
    /// decision.
    fn apply_pre_hooks(
        &self,
        outcome: PreToolOutcome,
        prepared: &mut Box<dyn PreparedCall>,
        tracker: &mut CallTracker,
        scope: &CallScope,
    ) -> Result<Option<HookDecision>, Refusal> {
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
            let tool = self
                .registry
                .get(&name)
                .ok_or_else(|| Refusal::UnknownTool {
                    tool: name.clone(),
                    available: self.registry.names().join(", "),
                })?;
            *prepared = prepare(&tool, input, scope)?;
            tracker.progress(ToolCallUpdate {
                title: Some(prepared.title()),
                ..ToolCallUpdate::default()
            });
        }
        Ok(outcome.decision)
    }

    /// Fails an announced call without running it (the response it came in was cut off).
    pub fn abandon(&self, call: PendingCall, reason: &str) -> ToolResult {
        let PendingCall { mut tracker, .. } = call;
        let reason = reason.to_owned();
        refuse(&mut tracker, Refusal::NotRun { reason })
    }
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
async fn after_hooks(
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

/// Carries out the policy's decision. Asking is one mechanism: the front-end's
/// [`PermissionHandler`] is asked (and sees the whole call in its [`PermissionRequest`]); its
/// answer, or the chat's cancellation, is what the transcript records, as
/// [`AgentEvent::PermissionResolved`]. (This holds no reference to the prepared call, which is
/// not `Sync`, so the chat's future stays `Send`.)
async fn check_permission(
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
fn decide(
    prepared: &dyn PreparedCall,
    snapshot: &ToolCallSnapshot,
    scope: &CallScope,
    registry: &ToolRegistry,
) -> (Decision, Vec<String>) {
    // The session's temporary folder holds what tools saved for the model to read back; the
    // providers' readable roots (skills' files) may be read, not changed.
    let temp_dir = scope
        .state
        .existing_temp_dir()
        .map(|dir| canonical_path(&dir));
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

/// Validates the input against the tool's schema and lets the tool read it.
fn prepare(
    tool: &RegisteredTool,
    input: Value,
    scope: &CallScope,
) -> Result<Box<dyn PreparedCall>, Refusal> {
    let name = tool.tool.name();
    let input = crate::coerce::coerce(tool.schema(), input);
    tool.validate(&input).map_err(|problem| match problem {
        InputProblem::Mismatch(mut problems) => {
            let unknown = crate::coerce::unknown_fields(tool.schema(), &input);
            if let (false, Some(expected)) = (
                unknown.is_empty(),
                crate::coerce::expected_fields(tool.schema()),
            ) {
                problems.push_str(&format!(
                    " ({name} takes no `{}`; its fields are: {expected})",
                    unknown.join("`, `")
                ));
            }
            Refusal::SchemaMismatch {
                tool: name.to_owned(),
                problems,
            }
        }
        InputProblem::BrokenSchema(problem) => Refusal::BrokenSchema {
            tool: name.to_owned(),
            problem,
        },
    })?;
    tool.tool
        .prepare(input, &scope.cwd)
        .map_err(|error| Refusal::InvalidInput {
            tool: name.to_owned(),
            problem: error.to_string(),
        })
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
        ToolProgress::Notice(message) => events.emit(AgentEvent::Notice { message }),
        ToolProgress::RawOutput(raw_output) => lock(&tracker).progress(ToolCallUpdate {
            raw_output: Some(raw_output),
            ..ToolCallUpdate::default()
        }),
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
) -> CallResult {
    let result = match outcome {
        Ok(output) => {
            let result = ToolResult {
                tool_call_id: tracker.snapshot().tool_call_id.clone(),
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
        Err(ToolError::Cancelled) => refuse(tracker, Refusal::Cancelled { started: true }),
        Err(_) if cancel.is_cancelled() => refuse(tracker, Refusal::Cancelled { started: true }),
        Err(ToolError::AwaitingAnswer) => {
            // Moving a running call to awaiting_answer is always legal.
            let _ = tracker.transition(ToolCallStatus::AwaitingAnswer, ToolCallUpdate::default());
            return CallResult::AwaitingAnswer(tracker.snapshot().tool_call_id.clone());
        }
        Err(ToolError::Failed { message, output }) => fail(tracker, message, output),
        Err(error) => fail(tracker, error.to_string(), None),
    };
    CallResult::Done(result)
}

/// Ends the call for a reason of the executor's own; the model reads the reason.
fn refuse(tracker: &mut CallTracker, refusal: Refusal) -> ToolResult {
    let message = refusal.to_string();
    end_failed(tracker, message, None, Some(refusal))
}

/// Fails the call with the tool's own error.
fn fail(tracker: &mut CallTracker, message: String, output: Option<ToolOutput>) -> ToolResult {
    end_failed(tracker, message, output, None)
}

/// Fails the call (from `pending` or `in_progress`) and returns the error the model reads.
fn end_failed(
    tracker: &mut CallTracker,
    message: String,
    output: Option<ToolOutput>,
    refusal: Option<Refusal>,
) -> ToolResult {
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
            refusal,
            ..ToolCallUpdate::default()
        },
    );
    ToolResult {
        tool_call_id: tracker.snapshot().tool_call_id.clone(),
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
