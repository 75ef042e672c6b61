//! The plugin side of the ABI, behind [`export_plugin!`](crate::export_plugin): a provider of
//! ordinary async tools served through the C function table, on a tokio runtime the plugin owns.
//! Every exported function catches panics; after one, the plugin refuses further calls.
#![allow(unsafe_code)]

mod host;
mod offer;
mod query;
mod remote;

use crate::abi::{self, Buffer, HostCallback, PluginInfo, PluginV1};
use crate::wire::{
    CallEnd, CallRequest, ConfiguredDescription, PrepareRequest, Prepared, ServiceAnswer,
};
use agentry_plugin::ids::{SessionId, ToolCallId};
use agentry_plugin::provider::Provider;
use agentry_plugin::settings::{Configured, Making, Recipe, Settings};
use agentry_plugin::sync::{lock, panic_message};
use agentry_plugin::tool::{
    Extensions, PreparedCall, ProgressSink, RuleSubjects, SessionState, ToolContext, ToolError,
};
use futures::FutureExt;
use host::Host;
use offer::Providers;
use std::collections::HashMap;
use std::ffi::c_void;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// The plugin's state, made on first use.
struct Plugin {
    /// The provider as last made (anew by each `configure`), and those it hosts.
    providers: Providers,
    /// How the provider is made from settings, when it reads any.
    recipe: Option<Recipe>,
    /// Started on first need (a call, a provider made later), so that a plugin loaded and
    /// never used starts no threads.
    runtime: OnceLock<tokio::runtime::Runtime>,
    calls: Mutex<HashMap<u64, Slot>>,
    sessions: Mutex<HashMap<String, SessionState>>,
    next_call: AtomicU64,
    panicked: AtomicBool,
}

/// Where the plugin's provider comes from (for [`export_plugin!`](crate::export_plugin)).
#[derive(Clone, Copy)]
pub enum Source {
    /// A provider made once, with no settings.
    Fixed(fn() -> Box<dyn Provider>),
    /// A provider the host configures: made with empty settings at first, anew by each
    /// `configure`.
    Recipe(Recipe),
}

/// A call the plugin holds, by its handle.
enum Slot {
    /// Prepared, waiting for `start` or `discard`.
    Prepared(Box<dyn PreparedCall>),
    /// Started: the token cancels it; its link to the host takes the host's answers.
    Running {
        /// Cancels the call.
        cancel: CancellationToken,
        /// The call's link to the host.
        host: Arc<Host>,
        /// The call's work while the host polls it (and is not polling it this instant).
        polled: Option<Work>,
    },
}

/// A started call's work: the tool's run, then its one `EVENT_DONE`.
type Work = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

static PLUGIN: OnceLock<Result<Plugin, String>> = OnceLock::new();

static INFO: PluginInfo = PluginInfo {
    magic: abi::MAGIC,
    abi_major: abi::ABI_MAJOR,
    abi_minor: abi::ABI_MINOR,
    sdk_version: concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast(),
    rustc_version: concat!(env!("AGENTRY_PLUGIN_RUSTC"), "\0").as_ptr().cast(),
    panic_unwind: cfg!(panic = "unwind") as u8,
};

static TABLE: PluginV1 = PluginV1 {
    size: std::mem::size_of::<PluginV1>(),
    describe,
    prepare,
    start,
    cancel,
    discard,
    free,
    query,
    answer: answer_request,
    poll,
    detach,
};

/// The SDK version and compiler a binary was built with (the host's, when a host asks).
pub fn build_info() -> (&'static str, &'static str) {
    (env!("CARGO_PKG_VERSION"), env!("AGENTRY_PLUGIN_RUSTC"))
}

/// The info the plugin exports (for [`export_plugin!`](crate::export_plugin)). The plugin's
/// declaration is passed along so that the linker keeps its section: the exported info function
/// uses it.
pub fn info(declaration: &[u8]) -> *const PluginInfo {
    std::hint::black_box(declaration);
    &INFO
}

/// Makes the plugin from `source` on first use and returns the v1 table (for
/// [`export_plugin!`](crate::export_plugin)).
pub fn table(source: Source) -> *const PluginV1 {
    PLUGIN.get_or_init(|| {
        catch_unwind(|| start_plugin(source))
            .unwrap_or_else(|_| Err("the provider panicked while starting".to_owned()))
    });
    &TABLE
}

fn start_plugin(source: Source) -> Result<Plugin, String> {
    let runtime = OnceLock::new();
    let (providers, recipe) = match source {
        Source::Fixed(make) => (Providers::new(Arc::from(make()), None), None),
        Source::Recipe(recipe) => {
            let made = finish(&runtime, (recipe.make)(Settings::default()))?;
            let providers = Providers::new(Arc::from(made.provider), Some(sections(&recipe)));
            (providers, Some(recipe))
        }
    };
    Ok(Plugin {
        providers,
        recipe,
        runtime,
        calls: Mutex::default(),
        sessions: Mutex::default(),
        next_call: AtomicU64::new(1),
        panicked: AtomicBool::new(false),
    })
}

/// The runtime in `runtime`, started on first use.
fn started(
    runtime: &OnceLock<tokio::runtime::Runtime>,
) -> Result<&tokio::runtime::Runtime, String> {
    if let Some(started) = runtime.get() {
        return Ok(started);
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("agentry-plugin")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the plugin's runtime: {e}"))?;
    // Two first uses at once: one runtime is kept, the other dropped unused.
    Ok(runtime.get_or_init(|| built))
}

/// The provider `making` makes, waiting for it on the runtime when it is made later.
fn finish(
    runtime: &OnceLock<tokio::runtime::Runtime>,
    making: Making,
) -> Result<Configured, String> {
    match making {
        Making::Now(made) => made,
        Making::Later(making) => started(runtime)?.block_on(making),
    }
}

/// The configuration sections `recipe` reads.
fn sections(recipe: &Recipe) -> Vec<String> {
    recipe.sections.iter().map(|s| (*s).to_owned()).collect()
}

impl Plugin {
    /// The plugin's runtime, started on first use.
    fn runtime(&self) -> Result<&tokio::runtime::Runtime, String> {
        started(&self.runtime)
    }

    /// Makes the provider anew from `settings` (the `configure` query).
    fn configure(&self, settings: Settings) -> Result<ConfiguredDescription, String> {
        let recipe = self
            .recipe
            .ok_or("the plugin's provider reads no settings")?;
        let made = finish(&self.runtime, (recipe.make)(settings))?;
        let description = self
            .providers
            .replace(Arc::from(made.provider), Some(sections(&recipe)));
        Ok(ConfiguredDescription {
            description,
            problems: made.problems,
        })
    }
}

fn plugin() -> Result<&'static Plugin, String> {
    match PLUGIN.get() {
        Some(Ok(plugin)) if plugin.panicked.load(Ordering::SeqCst) => {
            Err("the plugin panicked earlier and no longer takes calls".to_owned())
        }
        Some(Ok(plugin)) => Ok(plugin),
        Some(Err(error)) => Err(error.clone()),
        None => Err("the plugin was not started".to_owned()),
    }
}

/// The plugin if it started, whether or not a panic has since disabled it (for the calls
/// already under way).
fn started_plugin() -> Option<&'static Plugin> {
    match PLUGIN.get() {
        Some(Ok(plugin)) => Some(plugin),
        _ => None,
    }
}

/// Hands bytes to the host.
fn give(out: *mut Buffer, bytes: Vec<u8>) {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    let buffer = Buffer {
        ptr: bytes.as_mut_ptr(),
        len: bytes.len(),
        cap: bytes.capacity(),
    };
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable Buffer.
        unsafe { out.write(buffer) };
    }
}

/// Runs `work`, writing its JSON answer or error to `out`; a panic disables the plugin.
fn answer(out: *mut Buffer, work: impl FnOnce() -> Result<Vec<u8>, String>) -> i32 {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(json)) => {
            give(out, json);
            abi::OK
        }
        Ok(Err(message)) => {
            give(out, message.into_bytes());
            abi::ERROR
        }
        Err(panic) => {
            if let Some(plugin) = started_plugin() {
                plugin.panicked.store(true, Ordering::SeqCst);
            }
            give(out, panic_message(panic.as_ref()).into_bytes());
            abi::PANICKED
        }
    }
}

/// The request bytes the host lent.
fn request<'a, T: serde::Deserialize<'a>>(ptr: *const u8, len: usize) -> Result<T, String> {
    if ptr.is_null() {
        return Err("no request".to_owned());
    }
    // SAFETY: the host lends `len` readable bytes at `ptr` for the duration of the call.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    serde_json::from_slice(bytes).map_err(|e| format!("the request is not valid: {e}"))
}

extern "C" fn describe(out: *mut Buffer) -> i32 {
    answer(out, || {
        let plugin = plugin()?;
        serde_json::to_vec(&plugin.providers.describe(0)?).map_err(|e| e.to_string())
    })
}

extern "C" fn prepare(ptr: *const u8, len: usize, out: *mut Buffer) -> i32 {
    answer(out, || {
        let plugin = plugin()?;
        let request: PrepareRequest = request(ptr, len)?;
        let prepared = plugin
            .providers
            .tool(request.provider, &request.tool)?
            .prepare(request.input, &request.cwd)
            .map_err(|e| e.to_string())?;
        let answer = Prepared {
            call: plugin.next_call.fetch_add(1, Ordering::Relaxed),
            title: prepared.title(),
            locations: prepared.locations(),
            escalation: prepared.escalation(),
            rule_subjects: Some(prepared.rule_subjects())
                .filter(|subjects| *subjects != RuleSubjects::default()),
        };
        let json = serde_json::to_vec(&answer).map_err(|e| e.to_string())?;
        lock(&plugin.calls).insert(answer.call, Slot::Prepared(prepared));
        Ok(json)
    })
}

/// Takes a prepared call out of its slot, leaving the started call's cancel token there.
fn begin(
    plugin: &Plugin,
    call: u64,
    cancel: CancellationToken,
    host: Arc<Host>,
) -> Result<Box<dyn PreparedCall>, String> {
    let mut calls = lock(&plugin.calls);
    match calls.remove(&call) {
        Some(Slot::Prepared(prepared)) => {
            calls.insert(
                call,
                Slot::Running {
                    cancel,
                    host,
                    polled: None,
                },
            );
            Ok(prepared)
        }
        Some(running) => {
            calls.insert(call, running);
            Err(format!("call {call} was started already"))
        }
        None => Err(format!("the plugin has no prepared call {call}")),
    }
}

extern "C" fn start(
    call: u64,
    ptr: *const u8,
    len: usize,
    data: *mut c_void,
    callback: HostCallback,
) {
    let host = Arc::new(Host::new(data, callback));
    let cancel = CancellationToken::new();
    let started = catch_unwind(AssertUnwindSafe(|| {
        let plugin = plugin()?;
        let runtime = plugin.runtime()?;
        let prepared = begin(plugin, call, cancel.clone(), host.clone())?;
        let request: CallRequest = request(ptr, len)?;
        Ok((plugin, runtime, prepared, request))
    }));
    let (plugin, runtime, prepared, request) = match started {
        Ok(Ok(started)) => started,
        Ok(Err(message)) => {
            forget_call(call);
            host.finish(&CallEnd::Failed {
                message,
                output: None,
            });
            return;
        }
        Err(panic) => {
            forget_call(call);
            host.finish(&CallEnd::Panicked(panic_message(panic.as_ref())));
            return;
        }
    };
    let state = lock(&plugin.sessions)
        .entry(request.session_id.clone())
        .or_insert_with(|| match &request.temp_dir {
            Some(folder) => SessionState::with_temp_dir(folder.clone()),
            None => SessionState::default(),
        })
        .clone();
    let progress_host = host.clone();
    let (client, services) = remote::services(&host, &request.services);
    let mut extensions = Extensions::default();
    if let Some(mode) = request.sandbox {
        extensions.insert(Arc::new(mode));
    }
    if let Some(denials) = request.read_denials {
        extensions.insert(Arc::new(denials));
    }
    if let Some(checked) = request.checked_paths {
        extensions.insert(Arc::new(checked));
    }
    let ctx = ToolContext {
        session_id: SessionId(request.session_id),
        tool_call_id: ToolCallId(request.tool_call_id),
        cwd: request.cwd,
        workspace_roots: request.workspace_roots,
        cancel,
        progress: ProgressSink::new(move |progress| {
            if let Ok(bytes) = serde_json::to_vec(&progress) {
                progress_host.progress(&bytes);
            }
        }),
        client,
        host: services,
        state,
        extensions,
    };
    let polled = request.polled;
    let mut work: Work = Box::pin(async move {
        let end = run(prepared, ctx).await;
        forget_call(call);
        if matches!(end, CallEnd::Panicked(_)) {
            plugin.panicked.store(true, Ordering::SeqCst);
        }
        // The one EVENT_DONE of this call; the host's pointer is not used after it.
        host.finish(&end);
    });
    if polled {
        // The host polls it (`poll`), as it polls its own tools' calls.
        if let Some(Slot::Running { polled, .. }) = lock(&plugin.calls).get_mut(&call) {
            *polled = Some(work);
        }
        return;
    }
    // Poll once here, inside the runtime's context: a call that finishes at once ends without
    // a hop to another thread. One that waits moves to the plugin's own workers (which poll it
    // again at once, registering real wakers). `run` contains the tool's panics.
    let _context = runtime.enter();
    let mut first = std::task::Context::from_waker(futures::task::noop_waker_ref());
    if work.as_mut().poll(&mut first).is_pending() {
        runtime.spawn(work);
    }
}

/// The host's waker, as a waker of this side: waking it wakes the host's; dropping the last
/// clone releases it.
struct ForeignWaker(abi::HostWaker);

// SAFETY: the ABI lets the plugin call `wake` and `release` from any thread.
unsafe impl Send for ForeignWaker {}
// SAFETY: as above; `wake` may be called concurrently.
unsafe impl Sync for ForeignWaker {}

impl std::task::Wake for ForeignWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        (self.0.wake)(self.0.data);
    }
}

impl Drop for ForeignWaker {
    fn drop(&mut self) {
        (self.0.release)(self.0.data);
    }
}

/// Takes a polled call's work out of its slot (the slot stays, for cancellation and answers).
fn take_work(plugin: &Plugin, call: u64) -> Option<Work> {
    match lock(&plugin.calls).get_mut(&call) {
        Some(Slot::Running { polled, .. }) => polled.take(),
        _ => None,
    }
}

extern "C" fn poll(call: u64, waker: abi::HostWaker) -> i32 {
    let waker = std::task::Waker::from(Arc::new(ForeignWaker(waker)));
    catch_unwind(AssertUnwindSafe(|| {
        // A call under way runs to its end even after another call's panic disabled the plugin.
        let Some((plugin, mut work)) =
            started_plugin().and_then(|plugin| Some((plugin, take_work(plugin, call)?)))
        else {
            return abi::POLL_ENDED;
        };
        // Started with the call (`start`).
        let Ok(runtime) = plugin.runtime() else {
            return abi::POLL_ENDED;
        };
        let pending = {
            let _context = runtime.enter();
            work.as_mut()
                .poll(&mut std::task::Context::from_waker(&waker))
                .is_pending()
        };
        if !pending {
            return abi::POLL_ENDED;
        }
        if let Some(Slot::Running { polled, .. }) = lock(&plugin.calls).get_mut(&call) {
            *polled = Some(work);
        }
        abi::POLL_PENDING
    }))
    // `run` contains the tool's panics: one here is the SDK's own, and ends nothing cleanly.
    .unwrap_or(abi::POLL_ENDED)
}

extern "C" fn detach(call: u64) {
    let _ = catch_unwind(|| {
        if let Some(plugin) = started_plugin()
            && let Ok(runtime) = plugin.runtime()
            && let Some(work) = take_work(plugin, call)
        {
            runtime.spawn(work);
        }
    });
}

/// Drops whatever the plugin holds for a call.
fn forget_call(call: u64) {
    if let Some(plugin) = started_plugin() {
        lock(&plugin.calls).remove(&call);
    }
}

async fn run(prepared: Box<dyn PreparedCall>, ctx: ToolContext) -> CallEnd {
    let cancel = ctx.cancel.clone();
    let running = match catch_unwind(AssertUnwindSafe(|| prepared.run(ctx))) {
        Ok(running) => running,
        Err(panic) => return CallEnd::Panicked(panic_message(panic.as_ref())),
    };
    match AssertUnwindSafe(running).catch_unwind().await {
        Ok(Ok(output)) => CallEnd::Completed(output),
        Ok(Err(ToolError::Cancelled)) => CallEnd::Cancelled,
        Ok(Err(ToolError::AwaitingAnswer)) => CallEnd::AwaitingAnswer,
        Ok(Err(_)) if cancel.is_cancelled() => CallEnd::Cancelled,
        Ok(Err(ToolError::Failed { message, output })) => CallEnd::Failed { message, output },
        Ok(Err(error)) => CallEnd::Failed {
            message: error.to_string(),
            output: None,
        },
        Err(panic) => CallEnd::Panicked(panic_message(panic.as_ref())),
    }
}

extern "C" fn cancel(call: u64) {
    let _ = catch_unwind(|| {
        if let Some(plugin) = started_plugin()
            && let Some(Slot::Running { cancel, .. }) = lock(&plugin.calls).get(&call)
        {
            cancel.cancel();
        }
    });
}

extern "C" fn discard(call: u64) {
    let _ = catch_unwind(|| {
        if let Some(plugin) = started_plugin() {
            let mut calls = lock(&plugin.calls);
            let discarded = match calls.get(&call) {
                Some(Slot::Prepared(_)) => calls.remove(&call),
                _ => None,
            };
            // The tool's prepared call is dropped outside the lock.
            drop(calls);
            drop(discarded);
        }
    });
}

extern "C" fn query(ptr: *const u8, len: usize, out: *mut Buffer) -> i32 {
    answer(out, || {
        let answer = query::answer(plugin()?, request(ptr, len)?)?;
        serde_json::to_vec(&answer).map_err(|e| e.to_string())
    })
}

extern "C" fn answer_request(call: u64, id: u64, ptr: *const u8, len: usize) {
    let _ = catch_unwind(|| {
        let Ok(plugin) = plugin() else { return };
        let answer = request::<ServiceAnswer>(ptr, len).unwrap_or_else(ServiceAnswer::Error);
        let host = match lock(&plugin.calls).get(&call) {
            Some(Slot::Running { host, .. }) => host.clone(),
            _ => return,
        };
        host.answered(id, answer);
    });
}

extern "C" fn free(buffer: Buffer) {
    if !buffer.ptr.is_null() {
        // SAFETY: the buffer came from `give`, which leaked exactly this Vec.
        drop(unsafe { Vec::from_raw_parts(buffer.ptr, buffer.len, buffer.cap) });
    }
}

/// Exports a provider as an agentry plugin. Put it once in a `cdylib` crate, with the provider
/// to offer:
///
/// ```ignore
/// agentry_plugin_abi::export_plugin!(MyProvider::default());
/// ```
///
/// or, for a provider made from the configuration (its sections, the project), with its
/// [`Recipe`](agentry_plugin::settings::Recipe), which the host follows with the user's settings:
///
/// ```ignore
/// agentry_plugin_abi::export_plugin!(recipe: my_provider::RECIPE);
/// ```
#[macro_export]
macro_rules! export_plugin {
    (recipe: $recipe:expr) => {
        $crate::export_plugin!(@table $crate::export::Source::Recipe($recipe));
    };
    (@table $source:expr) => {
        /// The plugin's declaration (agentry plugin ABI 1.2): a section of the library that a
        /// host or installer reads without loading it.
        #[allow(unsafe_code)]
        #[used]
        #[cfg_attr(target_vendor = "apple", unsafe(link_section = "__DATA,__agentry_plugin"))]
        #[cfg_attr(windows, unsafe(link_section = ".agentry"))]
        #[cfg_attr(
            not(any(target_vendor = "apple", windows)),
            unsafe(link_section = ".agentry_plugin")
        )]
        static __AGENTRY_PLUGIN_DECLARATION: [u8; $crate::declaration::LEN
            + $crate::__plugin_line!().len()] =
            $crate::declaration::bytes($crate::__plugin_line!());

        /// The plugin's info (agentry plugin ABI).
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn agentry_plugin_info() -> *const $crate::abi::PluginInfo {
            $crate::export::info(&__AGENTRY_PLUGIN_DECLARATION)
        }

        /// The plugin's v1 function table (agentry plugin ABI).
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn agentry_plugin_v1() -> *const $crate::abi::PluginV1 {
            $crate::export::table($source)
        }
    };
    ($provider:expr) => {
        fn __agentry_make_provider() -> ::std::boxed::Box<dyn $crate::__private::Provider> {
            ::std::boxed::Box::new($provider)
        }
        $crate::export_plugin!(@table $crate::export::Source::Fixed(__agentry_make_provider));
    };
}

#[cfg(test)]
mod tests;
