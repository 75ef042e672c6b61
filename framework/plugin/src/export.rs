//! The plugin side of the ABI, behind [`export_plugin!`](crate::export_plugin): a provider of
//! ordinary async tools served through the C function table, on a tokio runtime the plugin owns.
//! Every exported function catches panics; after one, the plugin refuses further calls.
#![allow(unsafe_code)]

use crate::abi::{self, Buffer, HostCallback, PluginInfo, PluginV1};
use crate::ids::{SessionId, ToolCallId};
use crate::provider::Provider;
use crate::tool::{
    ClientCapabilities, DynTool, ProgressSink, SessionState, ToolContext, ToolError,
};
use crate::wire::{CallEnd, CallRequest, Description, PrepareRequest, Prepared, ToolDescription};
use futures::FutureExt;
use std::collections::HashMap;
use std::ffi::c_void;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// The plugin's state, made on first use.
struct Plugin {
    description: Description,
    tools: HashMap<String, Arc<dyn DynTool>>,
    runtime: tokio::runtime::Runtime,
    calls: Mutex<HashMap<u64, CancellationToken>>,
    sessions: Mutex<HashMap<String, SessionState>>,
    next_call: AtomicU64,
    panicked: AtomicBool,
}

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
    free,
};

/// The SDK version and compiler a binary was built with (the host's, when a host asks).
pub fn build_info() -> (&'static str, &'static str) {
    (env!("CARGO_PKG_VERSION"), env!("AGENTRY_PLUGIN_RUSTC"))
}

/// The info the plugin exports (for [`export_plugin!`](crate::export_plugin)).
pub fn info() -> *const PluginInfo {
    &INFO
}

/// Makes the plugin from `make` on first use and returns the v1 table (for
/// [`export_plugin!`](crate::export_plugin)).
pub fn table(make: fn() -> Box<dyn Provider>) -> *const PluginV1 {
    PLUGIN.get_or_init(|| {
        catch_unwind(|| start_plugin(make()))
            .unwrap_or_else(|_| Err("the provider panicked while starting".to_owned()))
    });
    &TABLE
}

fn start_plugin(provider: Box<dyn Provider>) -> Result<Plugin, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("agentry-plugin")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the plugin's runtime: {e}"))?;
    let tools: HashMap<String, Arc<dyn DynTool>> = provider
        .tools()
        .into_iter()
        .map(|tool| (tool.name().to_owned(), tool))
        .collect();
    let description = Description {
        name: provider.name().to_owned(),
        description: provider.description(),
        tools: provider
            .tools()
            .iter()
            .map(|tool| ToolDescription {
                name: tool.name().to_owned(),
                description: tool.description(),
                kind: tool.kind(),
                input_schema: tool.input_schema(),
            })
            .collect(),
    };
    Ok(Plugin {
        description,
        tools,
        runtime,
        calls: Mutex::default(),
        sessions: Mutex::default(),
        next_call: AtomicU64::new(1),
        panicked: AtomicBool::new(false),
    })
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
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
            if let Some(Ok(plugin)) = PLUGIN.get() {
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
        serde_json::to_vec(&plugin.description).map_err(|e| e.to_string())
    })
}

extern "C" fn prepare(ptr: *const u8, len: usize, out: *mut Buffer) -> i32 {
    answer(out, || {
        let plugin = plugin()?;
        let request: PrepareRequest = request(ptr, len)?;
        let tool = plugin
            .tools
            .get(&request.tool)
            .ok_or_else(|| format!("the plugin has no tool `{}`", request.tool))?;
        let prepared = tool
            .prepare(request.input, &request.cwd)
            .map_err(|e| e.to_string())?;
        serde_json::to_vec(&Prepared {
            title: prepared.title(),
            locations: prepared.locations(),
        })
        .map_err(|e| e.to_string())
    })
}

/// The host's pointer for one call; it travels to the thread that finishes the call.
struct Host {
    data: *mut c_void,
    callback: HostCallback,
    /// Set once EVENT_DONE is sent: after it the host's pointer must not be used, even by a
    /// progress sink a tool kept.
    ended: Mutex<bool>,
}

// SAFETY: the ABI lets the callback be called from any thread with the host's pointer.
unsafe impl Send for Host {}
// SAFETY: as above; the host's side of the pointer is thread-safe.
unsafe impl Sync for Host {}

impl Host {
    fn progress(&self, bytes: &[u8]) {
        let ended = lock(&self.ended);
        if !*ended {
            (self.callback)(self.data, abi::EVENT_PROGRESS, bytes.as_ptr(), bytes.len());
        }
    }

    fn finish(&self, end: &CallEnd) {
        let bytes = serde_json::to_vec(end).unwrap_or_else(|_| {
            br#"{"failed":{"message":"cannot encode the result","output":null}}"#.to_vec()
        });
        let mut ended = lock(&self.ended);
        if !*ended {
            *ended = true;
            (self.callback)(self.data, abi::EVENT_DONE, bytes.as_ptr(), bytes.len());
        }
    }
}

extern "C" fn start(ptr: *const u8, len: usize, data: *mut c_void, callback: HostCallback) -> u64 {
    let host = Host {
        data,
        callback,
        ended: Mutex::new(false),
    };
    let started = catch_unwind(AssertUnwindSafe(
        || -> Result<(u64, &'static Plugin, CallRequest), String> {
            let plugin = plugin()?;
            let request: CallRequest = request(ptr, len)?;
            Ok((
                plugin.next_call.fetch_add(1, Ordering::SeqCst),
                plugin,
                request,
            ))
        },
    ));
    let (call, plugin, request) = match started {
        Ok(Ok(started)) => started,
        Ok(Err(message)) => {
            host.finish(&CallEnd::Failed {
                message,
                output: None,
            });
            return 0;
        }
        Err(panic) => {
            host.finish(&CallEnd::Panicked(panic_message(panic.as_ref())));
            return 0;
        }
    };
    let cancel = CancellationToken::new();
    lock(&plugin.calls).insert(call, cancel.clone());
    let state = lock(&plugin.sessions)
        .entry(request.session_id.clone())
        .or_default()
        .clone();
    let host = Arc::new(host);
    let progress_host = host.clone();
    let ctx = ToolContext {
        session_id: SessionId(request.session_id.clone()),
        tool_call_id: ToolCallId(request.tool_call_id.clone()),
        cwd: request.cwd.clone(),
        workspace_roots: request.workspace_roots.clone(),
        cancel: cancel.clone(),
        progress: ProgressSink::new(move |progress| {
            if let Ok(bytes) = serde_json::to_vec(&progress) {
                progress_host.progress(&bytes);
            }
        }),
        client_capabilities: ClientCapabilities::default(),
        state,
    };
    let mut work = Box::pin(async move {
        let end = run(plugin, request, ctx).await;
        lock(&plugin.calls).remove(&call);
        if matches!(end, CallEnd::Panicked(_)) {
            plugin.panicked.store(true, Ordering::SeqCst);
        }
        // The one EVENT_DONE of this call; the host's pointer is not used after it.
        host.finish(&end);
    });
    // Poll once here, inside the runtime's context: a call that finishes at once ends without
    // a hop to another thread. One that waits moves to the plugin's own workers (which poll it
    // again at once, registering real wakers).
    let _context = plugin.runtime.enter();
    let mut first = std::task::Context::from_waker(futures::task::noop_waker_ref());
    if work.as_mut().poll(&mut first).is_pending() {
        plugin.runtime.spawn(work);
    }
    call
}

async fn run(plugin: &Plugin, request: CallRequest, ctx: ToolContext) -> CallEnd {
    let Some(tool) = plugin.tools.get(&request.tool) else {
        return CallEnd::Failed {
            message: format!("the plugin has no tool `{}`", request.tool),
            output: None,
        };
    };
    let cancel = ctx.cancel.clone();
    let prepared = match tool.prepare(request.input, &request.cwd) {
        Ok(prepared) => prepared,
        Err(error) => {
            return CallEnd::Failed {
                message: error.to_string(),
                output: None,
            };
        }
    };
    match AssertUnwindSafe(prepared.run(ctx)).catch_unwind().await {
        Ok(Ok(output)) => CallEnd::Completed(output),
        Ok(Err(ToolError::Cancelled)) => CallEnd::Cancelled,
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
        if let Some(Ok(plugin)) = PLUGIN.get()
            && let Some(token) = lock(&plugin.calls).get(&call)
        {
            token.cancel();
        }
    });
}

extern "C" fn free(buffer: Buffer) {
    if !buffer.ptr.is_null() {
        // SAFETY: the buffer came from `give`, which leaked exactly this Vec.
        drop(unsafe { Vec::from_raw_parts(buffer.ptr, buffer.len, buffer.cap) });
    }
}

/// Exports a provider as an agentry plugin. Put it once in a `cdylib` crate:
///
/// ```ignore
/// agentry_plugin::export_plugin!(MyProvider::default());
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($provider:expr) => {
        /// The plugin's info (agentry plugin ABI).
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn agentry_plugin_info() -> *const $crate::abi::PluginInfo {
            $crate::export::info()
        }

        /// The plugin's v1 function table (agentry plugin ABI).
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        pub extern "C" fn agentry_plugin_v1() -> *const $crate::abi::PluginV1 {
            fn make() -> ::std::boxed::Box<dyn $crate::provider::Provider> {
                ::std::boxed::Box::new($provider)
            }
            $crate::export::table(make)
        }
    };
}
