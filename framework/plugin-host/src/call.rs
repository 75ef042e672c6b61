//! A plugin's tools and calls on the host's side: each call crosses the boundary through
//! `prepare`, `start` and the host callback, which carries its progress, its service requests
//! (served in [`super::services`]) and its end.

use super::services::{self, Offered};
use super::{Library, take};
use agentry::sync::lock;
use agentry::tool::ReadDenials;
use agentry::tool::{
    CheckedPaths, DynTool, PreparedCall, ProgressSink, RulePatterns, RuleSubjects, SandboxMode,
    ToolCallLocation, ToolContext, ToolError, ToolKind, ToolOutput, ToolProgress,
};
use agentry_plugin_abi::abi;
use agentry_plugin_abi::wire::{
    CallEnd, CallRequest, PrepareRequest, Prepared, Query, ServiceCall, ToolDescription,
};
use futures::future::BoxFuture;
use serde_json::Value;
use std::ffi::c_void;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// How long a cancelled call has to send `done` before the host gives up waiting for it (the
/// turn ends; the plugin may still finish the call later).
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// One of a plugin's tools.
pub(super) struct PluginTool {
    pub(super) library: Arc<Library>,
    /// The plugin's handle of the provider whose tool it is (0: its own).
    pub(super) provider: u64,
    pub(super) tool: ToolDescription,
}
impl DynTool for PluginTool {
    fn name(&self) -> &str {
        &self.tool.name
    }

    fn description(&self) -> String {
        self.tool.description.clone()
    }

    fn kind(&self) -> ToolKind {
        self.tool.kind
    }

    fn aliases(&self) -> Vec<String> {
        self.tool.aliases.clone()
    }

    fn needs_user(&self) -> bool {
        self.tool.needs_user
    }

    fn rule_patterns(&self) -> RulePatterns {
        self.tool
            .rule_patterns
            .unwrap_or_else(|| RulePatterns::for_kind(self.tool.kind))
    }

    fn check_rule_pattern(&self, pattern: &str) -> Result<(), String> {
        let query = Query::CheckRulePattern {
            provider: self.provider,
            tool: self.tool.name.clone(),
            pattern: pattern.to_owned(),
        };
        match self.library.query::<Option<String>>(&query) {
            Some(Ok(Some(problem))) => Err(problem),
            Some(Err(problem)) => Err(format!("the plugin could not check it: {problem}")),
            Some(Ok(None)) | None => Ok(()),
        }
    }

    fn input_schema(&self) -> Value {
        self.tool.input_schema.clone()
    }

    fn prepare(&self, input: Value, cwd: &Path) -> Result<Box<dyn PreparedCall>, ToolError> {
        self.library.check_alive()?;
        let request = serde_json::to_vec(&PrepareRequest {
            provider: self.provider,
            tool: self.tool.name.clone(),
            input,
            cwd: cwd.to_path_buf(),
        })
        .map_err(|e| ToolError::failed(e.to_string()))?;
        let table = self.library.table;
        let prepared = take(table, |out| {
            (table.prepare)(request.as_ptr(), request.len(), out)
        })
        .map_err(|message| {
            if message.starts_with("the plugin panicked") {
                self.library.note_panic(&message)
            } else {
                ToolError::InvalidInput(message)
            }
        })?;
        let prepared: Prepared = serde_json::from_slice(&prepared).map_err(|e| {
            ToolError::failed(format!(
                "the plugin answered prepare with invalid JSON: {e}"
            ))
        })?;
        Ok(Box::new(PluginCall {
            library: self.library.clone(),
            prepared,
            started: false,
        }))
    }
}

/// A call the plugin has prepared and holds under `prepared.call`.
struct PluginCall {
    library: Arc<Library>,
    prepared: Prepared,
    /// Whether `start` was given the call; until then, dropping it tells the plugin to
    /// discard it.
    started: bool,
}

impl Drop for PluginCall {
    fn drop(&mut self) {
        if !self.started {
            (self.library.table.discard)(self.prepared.call);
        }
    }
}

/// A started call's end: a polled call (ABI 1.1) is polled here, on the host's thread, until
/// it ends; then, or for a call the plugin runs itself, its `EVENT_DONE` is awaited. Dropped
/// before the end, it hands the call to the plugin's runtime, which runs it to its end.
struct Ended {
    table: &'static abi::PluginV1,
    call: u64,
    /// Whether the host still polls the call.
    polling: bool,
    done: tokio::sync::oneshot::Receiver<CallEnd>,
}

impl std::future::Future for Ended {
    type Output = Result<CallEnd, tokio::sync::oneshot::error::RecvError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if self.polling {
            if (self.table.poll)(self.call, lend_waker(cx.waker())) == abi::POLL_PENDING {
                return std::task::Poll::Pending;
            }
            self.polling = false;
        }
        std::pin::Pin::new(&mut self.done).poll(cx)
    }
}

impl Drop for Ended {
    fn drop(&mut self) {
        if self.polling {
            (self.table.detach)(self.call);
        }
    }
}

/// A clone of `waker` lent to the plugin for one poll.
fn lend_waker(waker: &std::task::Waker) -> abi::HostWaker {
    extern "C" fn wake(data: *mut c_void) {
        // SAFETY: `data` is the Box<Waker> made below, alive until `release`.
        let _ =
            std::panic::catch_unwind(|| unsafe { &*data.cast::<std::task::Waker>() }.wake_by_ref());
    }
    extern "C" fn release(data: *mut c_void) {
        // SAFETY: the plugin releases the waker once, after its last `wake`.
        drop(unsafe { Box::from_raw(data.cast::<std::task::Waker>()) });
    }
    abi::HostWaker {
        data: Box::into_raw(Box::new(waker.clone())).cast(),
        wake,
        release,
    }
}

/// The host's side of one running call, shared by the host and, until its EVENT_DONE, the
/// plugin (which holds one reference to it as its `host` pointer).
struct CallSink {
    /// Where the call's progress goes; emptied when the host abandons the call, so a call that
    /// never ends keeps no listener alive.
    progress: Mutex<Option<ProgressSink>>,
    done: Mutex<Option<tokio::sync::oneshot::Sender<CallEnd>>>,
    /// The services the call was offered; emptied with the listeners.
    services: Mutex<Option<Arc<Offered>>>,
}

impl CallSink {
    /// Drops the call's listeners: whatever the plugin sends from now on goes nowhere.
    fn abandon(&self) {
        lock(&self.progress).take();
        lock(&self.done).take();
        lock(&self.services).take();
    }
}

extern "C" fn on_event(host: *mut c_void, event: u32, ptr: *const u8, len: usize) {
    let _ = std::panic::catch_unwind(|| {
        if host.is_null() {
            return;
        }
        let bytes = if ptr.is_null() {
            &[][..]
        } else {
            // SAFETY: the plugin lends `len` bytes at `ptr` for this call.
            unsafe { std::slice::from_raw_parts(ptr, len) }
        };
        // SAFETY: `host` is the plugin's reference to the CallSink made in `run`, alive until
        // EVENT_DONE releases it.
        let sink = unsafe { &*host.cast::<CallSink>() };
        match event {
            abi::EVENT_PROGRESS => {
                if let Ok(progress) = serde_json::from_slice::<ToolProgress>(bytes)
                    && let Some(listener) = &*lock(&sink.progress)
                {
                    listener.report(progress);
                }
            }
            abi::EVENT_REQUEST => {
                let offered = lock(&sink.services).clone();
                if let (Ok(request), Some(offered)) =
                    (serde_json::from_slice::<ServiceCall>(bytes), offered)
                {
                    services::serve(offered, request);
                }
            }
            abi::EVENT_DONE => {
                let end = serde_json::from_slice(bytes).unwrap_or_else(|e| CallEnd::Failed {
                    message: format!("the plugin ended the call with invalid JSON: {e}"),
                    output: None,
                });
                if let Some(done) = lock(&sink.done).take() {
                    let _ = done.send(end);
                }
                // SAFETY: EVENT_DONE is the last use of the pointer: its reference is released.
                drop(unsafe { Arc::from_raw(host.cast::<CallSink>()) });
            }
            _ => {}
        }
    });
}

impl PreparedCall for PluginCall {
    fn title(&self) -> String {
        self.prepared.title.clone()
    }

    fn locations(&self) -> Vec<ToolCallLocation> {
        self.prepared.locations.clone()
    }

    fn escalation(&self) -> Option<String> {
        self.prepared.escalation.clone()
    }

    fn rule_subjects(&self) -> RuleSubjects {
        self.prepared.rule_subjects.clone().unwrap_or_default()
    }

    fn matches_rule(&self, pattern: &str, subject: &str) -> bool {
        let query = Query::MatchesRule {
            call: self.prepared.call,
            pattern: pattern.to_owned(),
            subject: subject.to_owned(),
        };
        match self.library.query(&query) {
            Some(Ok(matches)) => matches,
            Some(Err(problem)) => {
                tracing::warn!("plugin {}: {problem}", self.library.path.display());
                false
            }
            None => false,
        }
    }

    fn run(
        mut self: Box<Self>,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.library.check_alive()?;
            let table = self.library.table;
            let call = self.prepared.call;
            let offered = Arc::new(Offered::new(&ctx, table, call));
            let request = serde_json::to_vec(&CallRequest {
                cwd: ctx.cwd.clone(),
                workspace_roots: ctx.workspace_roots.clone(),
                session_id: ctx.session_id.to_string(),
                tool_call_id: ctx.tool_call_id.to_string(),
                temp_dir: ctx.state.temp_dir().ok(),
                services: offered.names(),
                sandbox: ctx.extensions.get::<SandboxMode>().map(|mode| *mode),
                read_denials: ReadDenials::of(&ctx).map(|denials| (*denials).clone()),
                checked_paths: CheckedPaths::of(&ctx).map(|checked| (*checked).clone()),
                polled: table.has_v1_1(),
            })
            .map_err(|e| ToolError::failed(e.to_string()))?;
            let (done, ended) = tokio::sync::oneshot::channel();
            let sink = Arc::new(CallSink {
                progress: Mutex::new(Some(ctx.progress.clone())),
                done: Mutex::new(Some(done)),
                services: Mutex::new(Some(offered)),
            });
            let host = Arc::into_raw(sink.clone()).cast_mut();
            self.started = true;
            (table.start)(call, request.as_ptr(), request.len(), host.cast(), on_event);
            let mut ended = Ended {
                table,
                call,
                polling: table.has_v1_1(),
                done: ended,
            };
            let end = tokio::select! {
                end = &mut ended => end,
                () = ctx.cancel.cancelled() => {
                    (table.cancel)(call);
                    match tokio::time::timeout(CANCEL_GRACE, ended).await {
                        Ok(end) => end,
                        Err(_) => {
                            // Its host pointer stays valid: a late `done` releases it.
                            sink.abandon();
                            tracing::warn!(
                                "plugin {}: call {call} did not end within {} s of its \
                                 cancellation; abandoned",
                                self.library.path.display(),
                                CANCEL_GRACE.as_secs()
                            );
                            return Err(ToolError::Cancelled);
                        }
                    }
                }
            };
            match end {
                Ok(CallEnd::Completed(output)) => Ok(output),
                Ok(CallEnd::Failed { message, output }) => {
                    Err(ToolError::Failed { message, output })
                }
                Ok(CallEnd::Cancelled) => Err(ToolError::Cancelled),
                Ok(CallEnd::AwaitingAnswer) => Err(ToolError::AwaitingAnswer),
                Ok(CallEnd::Panicked(message)) => Err(self.library.note_panic(&message)),
                Err(_) => Err(ToolError::failed(
                    "the plugin dropped the call without ending it",
                )),
            }
        })
    }
}
