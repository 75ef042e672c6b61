//! The [`Executor`]: the one place that moves a tool call through its life, for every tool and
//! every front-end.
//!
//! 1. The model client reads the call's arguments once ([`ToolCallRequest`]);
//!    [`Executor::announce`] looks the tool up once, validates the arguments against its schema,
//!    lets the tool prepare the call, and emits it as `pending` (title, kind, rawInput,
//!    locations). The [`CallTracker`] holds the call from there: its id lives there alone.
//! 2. [`Executor::run`] admits the call in steps, in order: it was prepared, the turn is not
//!    cancelled, the hooks before it allow it, and the [`PermissionPolicy`] (asking the
//!    front-end's [`PermissionHandler`] when it says ask) lets it run; the handler's answer is
//!    what the transcript records
//!    ([`AgentEvent::PermissionResolved`](crate::event::AgentEvent::PermissionResolved)). A
//!    call that will not run goes `pending → failed` with a typed [`Refusal`] (unknown tool,
//!    bad JSON, schema mismatch, invalid input, denied by rule or hook, rejected by the user,
//!    cancelled).
//! 3. the call goes `in_progress`, runs, and its progress is forwarded as updates;
//! 4. it ends `completed` or `failed`, with content and rawOutput (and the [`Refusal`] when it
//!    was cancelled while running).
//!
//! Every status change goes through the [`CallTracker`], which refuses illegal transitions.
//! [`Executor::run_batch`] runs read-only calls concurrently and the others one at a time, in
//! the order the model asked, and returns results in that order.

use crate::event::{EventSink, ToolCallSnapshot, ToolCallStatus};
use crate::ids::{SessionId, ToolCallId, TurnId};
use crate::model::{ToolArguments, ToolCallRequest, ToolResult};
use crate::permission::{PermissionHandler, PermissionPolicy, RememberedAnswers};
use crate::provider::ToolRegistry;
use crate::sync::lock;
use crate::telemetry;
use crate::tool::ToolError;
use crate::tool::{
    CheckedPaths, ClientServices, Extensions, HostServices, PreparedCall, RulePatterns,
    SessionState, ToolCallLocation, ToolContext, ToolKind,
};
use agentry_plugin::paths::canonical_path;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

mod ending;
mod hook_steps;
mod permission_step;
mod prepare;

use crate::hooks::{HookToolUse, ScopeHooks};
use ending::{fail, finish, progress_sink, refuse, run_cancellable};
use hook_steps::{PreHooked, after_hooks, denied_hooks, pre_hooks, rewrite, tool_use_of};
use permission_step::{check_permission, decide, with_hook_decision};
use prepare::prepare;

use crate::event::{CallTracker, Refusal};

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
    /// What the agent does for tools (side questions to the session's model).
    pub host: HostServices,
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
    pub hooks: Option<ScopeHooks>,
    /// What runs before each call that may change the workspace (a checkpoint of it).
    pub before_change: Option<Arc<dyn BeforeChange>>,
}

/// What must happen before a call that may change the workspace runs (any call whose kind is
/// not read-only: edits, deletions, moves, commands, and tools of unknown kind).
#[async_trait::async_trait]
pub trait BeforeChange: Send + Sync {
    /// Called before each such call, once it is allowed to run.
    async fn before_change(&self);
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

/// A call refused before it ran, with the call as the hooks last saw it (its input rewritten,
/// the filters it matched), when they saw it.
struct Refused {
    refusal: Refusal,
    call: Option<HookToolUse>,
}

impl From<Refusal> for Refused {
    fn from(refusal: Refusal) -> Self {
        Self {
            refusal,
            call: None,
        }
    }
}

/// A call that passed the steps before running: its prepared form, and the call as the hooks
/// saw it (for the hooks after it).
struct Admitted {
    prepared: Box<dyn PreparedCall>,
    /// What the hooks before it said, when there are hooks.
    pre_hooked: Option<PreHooked>,
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

    /// Announces a call that will not run, for `refusal`, without preparing it or copying its
    /// arguments (an answer past its limit of calls may hold thousands).
    pub fn announce_refused(
        &self,
        request: ToolCallRequest,
        refusal: Refusal,
        scope: &CallScope,
    ) -> PendingCall {
        let snapshot = ToolCallSnapshot {
            tool_call_id: request.id,
            turn_id: scope.turn_id.clone(),
            title: request.name.clone(),
            tool_name: request.name,
            kind: ToolKind::Other,
            status: ToolCallStatus::Pending,
            raw_input: serde_json::Value::Null,
            locations: Vec::new(),
        };
        PendingCall {
            tracker: CallTracker::announce(snapshot, scope.events.clone()),
            ready: Err(refusal),
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
            Ok(prepared) => (prepared.title(), canonical_locations(prepared.as_ref())),
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
    /// It runs in the call's span ([`telemetry`]).
    pub async fn run(&self, call: PendingCall, scope: &CallScope) -> CallResult {
        let PendingCall {
            mut tracker,
            ready,
            permitted,
        } = call;
        let snapshot = tracker.snapshot();
        let span = telemetry::tool_span(
            &scope.session_id,
            &snapshot.tool_name,
            &snapshot.tool_call_id.0,
            &snapshot.raw_input,
        );
        async {
            match self.admit(&mut tracker, ready, permitted, scope).await {
                Ok(admitted) => self.start(tracker, admitted, scope).await,
                Err(Refused { refusal, call }) => {
                    let mut result = refuse(&mut tracker, refusal.clone());
                    telemetry::tool_ended(&Span::current(), Some(refusal.kind()), &result.content);
                    if let Some(hooks) = &scope.hooks
                        && refusal.is_permission_denial()
                    {
                        let call = call.unwrap_or_else(|| tool_use_of(tracker.snapshot()));
                        result = denied_hooks(hooks, call, &refusal, result, scope).await;
                    }
                    CallResult::Done(result)
                }
            }
        }
        .instrument(span)
        .await
    }

    /// The steps before a call runs, in order; each may refuse it.
    async fn admit(
        &self,
        tracker: &mut CallTracker,
        ready: Result<Box<dyn PreparedCall>, Refusal>,
        permitted: bool,
        scope: &CallScope,
    ) -> Result<Admitted, Refused> {
        // 1. The tool exists and its input is valid (read when the call was announced).
        let mut prepared = ready?;
        // 2. The chat still wants it.
        if scope.cancel.is_cancelled() {
            return Err(Refusal::Cancelled { started: false }.into());
        }
        // 3. The hooks before it may rewrite its input, deny it, or decide its permission.
        let mut pre_hooked = match &scope.hooks {
            Some(hooks) => {
                Some(pre_hooks(hooks, &self.registry, &mut prepared, tracker, scope).await?)
            }
            None => None,
        };
        let hook_decision = pre_hooked.as_ref().and_then(|pre| pre.decision);
        // 4. Permission: the policy, overruled by the hooks' decision, asking the user when
        // they say ask. A call taken up after a pause was allowed before it paused.
        if permitted {
            return Ok(Admitted {
                prepared,
                pre_hooked,
            });
        }
        let policy = &scope.policy;
        let mut judged = decide(
            prepared.as_ref(),
            tracker.snapshot(),
            scope,
            &self.registry,
            policy,
        );
        judged.decision = with_hook_decision(hook_decision, judged.decision);
        let seen = pre_hooked.as_mut().map(|pre| &mut pre.call);
        let refused = |refusal, call: Option<&HookToolUse>| Refused {
            refusal,
            call: call.cloned(),
        };
        let rewritten = check_permission(judged, tracker.snapshot(), seen.as_deref(), scope)
            .await
            .map_err(|refusal| refused(refusal, seen.as_deref()))?;
        // 5. A `PermissionRequest` hook that allowed the call with another input: the new
        // input is prepared, and judged again by the rules alone (a deny or ask rule still
        // applies; the hook answered the asking otherwise).
        if let (Some(input), Some(hooks), Some(call)) = (rewritten, &scope.hooks, seen) {
            rewrite(
                hooks,
                &self.registry,
                &mut prepared,
                tracker,
                call,
                input,
                scope,
            )?;
            let rules_only = policy.rules_only();
            let judged = decide(
                prepared.as_ref(),
                tracker.snapshot(),
                scope,
                &self.registry,
                &rules_only,
            );
            check_permission(judged, tracker.snapshot(), None, scope)
                .await
                .map_err(|refusal| refused(refusal, Some(call)))?;
        }
        Ok(Admitted {
            prepared,
            pre_hooked,
        })
    }

    /// Runs an admitted call: `in_progress`, the tool's run, its final status, and the hooks
    /// after it.
    async fn start(
        &self,
        mut tracker: CallTracker,
        admitted: Admitted,
        scope: &CallScope,
    ) -> CallResult {
        let Admitted {
            prepared,
            pre_hooked,
        } = admitted;
        let started = std::time::Instant::now();
        if let Err(illegal) = tracker.transition(ToolCallStatus::InProgress, Default::default()) {
            return CallResult::Done(fail(&mut tracker, illegal.to_string(), None));
        }
        if let Some(before_change) = &scope.before_change
            && !tracker.snapshot().kind.is_read_only()
        {
            before_change.before_change().await;
        }
        let extensions = self.extensions_for(tracker.snapshot(), scope);
        let tool_call_id = tracker.snapshot().tool_call_id.clone();
        let tracker = Arc::new(Mutex::new(tracker));
        let ctx = ToolContext {
            session_id: scope.session_id.clone(),
            tool_call_id,
            cwd: scope.cwd.clone(),
            workspace_roots: scope.workspace_roots.clone(),
            cancel: scope.cancel.child_token(),
            progress: progress_sink(Arc::clone(&tracker), scope.events.clone()),
            client: scope.client.clone(),
            host: scope.host.clone(),
            state: scope.state.clone(),
            extensions,
        };
        let outcome = run_cancellable(prepared, ctx, &scope.cancel).await;
        let error_type = match &outcome {
            Ok(_) => None,
            Err(_) if scope.cancel.is_cancelled() => Some("cancelled"),
            Err(ToolError::AwaitingAnswer) => None,
            Err(_) => Some("tool_error"),
        };
        let result = finish(&mut lock(&tracker), outcome, &scope.cancel);
        if let CallResult::Done(done) = &result {
            telemetry::tool_ended(&Span::current(), error_type, &done.content);
        }
        match (&scope.hooks, pre_hooked) {
            (Some(hooks), Some(pre)) => after_hooks(hooks, pre, started, result, scope).await,
            _ => result,
        }
    }

    /// The services offered to one call: the scope's, and for a tool that reads files, the
    /// paths the session's deny rules keep it from reading (for searches through folders).
    fn extensions_for(&self, snapshot: &ToolCallSnapshot, scope: &CallScope) -> Extensions {
        let mut extensions = scope.extensions.clone();
        // The paths the call was judged for: a tool opens what was checked, nothing else.
        if !snapshot.locations.is_empty() {
            let checked = snapshot.locations.iter().map(|l| l.path.clone()).collect();
            extensions.insert(Arc::new(CheckedPaths(checked)));
        }
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

    /// Fails an announced call without running it (the response it came in was cut off).
    pub fn abandon(&self, call: PendingCall, reason: &str) -> ToolResult {
        let PendingCall { mut tracker, .. } = call;
        let reason = reason.to_owned();
        refuse(&mut tracker, Refusal::NotRun { reason })
    }
}

/// The locations of a prepared call, canonical (links and `..` resolved): what permissions are
/// judged by, and what its tool may then open.
fn canonical_locations(prepared: &dyn PreparedCall) -> Vec<ToolCallLocation> {
    prepared
        .locations()
        .into_iter()
        .map(|l| ToolCallLocation {
            path: canonical_path(&l.path),
            line: l.line,
        })
        .collect()
}
