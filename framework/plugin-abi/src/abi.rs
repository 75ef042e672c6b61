//! The plugin ABI, version 1: what a plugin library exports and a host reads. No Rust type
//! crosses it; data travels as UTF-8 JSON (pointer + length), and whoever allocates frees. See
//! `docs/book/src/plugin-abi.md` for the rules.
//!
//! 1. The host resolves [`INFO_SYMBOL`] first: a function returning a [`PluginInfo`] (magic, ABI
//!    version, SDK and rustc versions, whether panics unwind). That symbol never changes.
//! 2. For ABI major 1 it resolves [`ENTRY_SYMBOL_V1`]: a function returning a [`PluginV1`] table.
//!    A new major gets a new entry symbol; a new minor only appends fields to the table (its
//!    `size` says how much of it the plugin knows).
#![allow(unsafe_code)]

use std::ffi::{c_char, c_void};

/// `PluginInfo::magic`: "AGENTRY" and a zero byte, big-endian.
pub const MAGIC: u64 = u64::from_be_bytes(*b"AGENTRY\0");
/// The ABI major version this SDK speaks.
pub const ABI_MAJOR: u32 = 1;
/// The ABI minor version this SDK speaks.
pub const ABI_MINOR: u32 = 2;
/// The symbol of the info function (all majors).
pub const INFO_SYMBOL: &str = "agentry_plugin_info";
/// The symbol of the v1 entry function.
pub const ENTRY_SYMBOL_V1: &str = "agentry_plugin_v1";

/// What a plugin says about itself, read before anything else.
#[repr(C)]
#[derive(Debug)]
pub struct PluginInfo {
    /// Must be [`MAGIC`].
    pub magic: u64,
    /// The ABI major version the plugin was built for.
    pub abi_major: u32,
    /// The ABI minor version the plugin was built for.
    pub abi_minor: u32,
    /// The SDK version (NUL-terminated, static).
    pub sdk_version: *const c_char,
    /// The compiler's `rustc --version` (NUL-terminated, static).
    pub rustc_version: *const c_char,
    /// 1 when the plugin was built with `panic = "unwind"` (its panics can be caught), else 0.
    pub panic_unwind: u8,
}

// SAFETY: the pointers point at static, immutable strings.
unsafe impl Sync for PluginInfo {}

/// Bytes allocated by the plugin; give them back with [`PluginV1::free`].
#[repr(C)]
#[derive(Debug)]
pub struct Buffer {
    /// The data.
    pub ptr: *mut u8,
    /// Its length.
    pub len: usize,
    /// Its capacity (for the plugin's deallocation).
    pub cap: usize,
}

impl Buffer {
    /// An empty buffer.
    pub const EMPTY: Buffer = Buffer {
        ptr: std::ptr::null_mut(),
        len: 0,
        cap: 0,
    };
}

/// A result code: the output buffer holds JSON.
pub const OK: i32 = 0;
/// A result code: the output buffer holds an error message.
pub const ERROR: i32 = 1;
/// A result code: the plugin panicked (it is now disabled); the buffer holds the message.
pub const PANICKED: i32 = 2;

/// A call reports progress: the bytes are a JSON `ToolProgress`.
pub const EVENT_PROGRESS: u32 = 1;
/// A call ended: the bytes are a JSON [`CallEnd`](crate::wire::CallEnd). Sent exactly once per
/// call, after which the host's pointer is no longer used.
pub const EVENT_DONE: u32 = 2;

/// A call asks the host for a service (ABI 1.1): the bytes are a JSON
/// [`ServiceCall`](crate::wire::ServiceCall); the host answers through [`PluginV1::answer`].
/// Sent only for services the host offered in the call's request.
pub const EVENT_REQUEST: u32 = 3;

/// What [`PluginV1::poll`] answers: the call is not finished; the plugin wakes the host's
/// waker when it should be polled again.
pub const POLL_PENDING: i32 = 0;
/// What [`PluginV1::poll`] answers: the call has ended (its [`EVENT_DONE`] was sent), or it is
/// no longer the host's to poll (detached, or not started to be polled); the host waits for its
/// [`EVENT_DONE`].
pub const POLL_ENDED: i32 = 1;

/// A host's waker, lent to one [`PluginV1::poll`] (ABI 1.1): the plugin calls `wake(data)` when
/// the call should be polled again (any number of times, from any thread) and `release(data)`
/// exactly once, when it no longer needs the waker.
#[repr(C)]
#[derive(Debug)]
pub struct HostWaker {
    /// The host's waker.
    pub data: *mut c_void,
    /// Wakes the host's task; `data` stays valid.
    pub wake: extern "C" fn(data: *mut c_void),
    /// Gives `data` back; the plugin does not use it again.
    pub release: extern "C" fn(data: *mut c_void),
}

/// How the plugin reports on a call: `host` is the pointer the host passed to `start`; the
/// bytes are borrowed for the duration of the call. May be called from any thread.
pub type HostCallback = extern "C" fn(host: *mut c_void, event: u32, ptr: *const u8, len: usize);

/// The v1 function table.
#[repr(C)]
#[derive(Debug)]
pub struct PluginV1 {
    /// `size_of::<PluginV1>()` as the plugin was built (later minors append fields).
    pub size: usize,
    /// The provider as JSON ([`Description`](crate::wire::Description)).
    pub describe: extern "C" fn(out: *mut Buffer) -> i32,
    /// Reads one call's input: request [`PrepareRequest`](crate::wire::PrepareRequest), answer
    /// [`Prepared`](crate::wire::Prepared), whose `call` handle the plugin keeps the prepared
    /// call under until `start` or `discard` is given it.
    pub prepare: extern "C" fn(request: *const u8, len: usize, out: *mut Buffer) -> i32,
    /// Starts a prepared call ([`CallRequest`](crate::wire::CallRequest)) on the plugin's own
    /// runtime; the call ends with exactly one [`EVENT_DONE`] through `callback`.
    pub start: extern "C" fn(
        call: u64,
        request: *const u8,
        len: usize,
        host: *mut c_void,
        callback: HostCallback,
    ),
    /// Asks a started call to stop (it still ends with [`EVENT_DONE`]).
    pub cancel: extern "C" fn(call: u64),
    /// Forgets a prepared call that will never be started (its permission was refused, its
    /// turn was cancelled).
    pub discard: extern "C" fn(call: u64),
    /// Frees a buffer the plugin returned.
    pub free: extern "C" fn(buffer: Buffer),
    /// ABI 1.1: answers a [`Query`](crate::wire::Query) (JSON) about the plugin's tools and
    /// sessions, into `out` with the result codes of `describe`.
    pub query: extern "C" fn(query: *const u8, len: usize, out: *mut Buffer) -> i32,
    /// ABI 1.1: the host's [`ServiceAnswer`](crate::wire::ServiceAnswer) (JSON) to the service
    /// request `request` of the started call `call`. An answer for a call or request the plugin
    /// no longer waits on is dropped.
    pub answer: extern "C" fn(call: u64, request: u64, answer: *const u8, len: usize),
    /// ABI 1.1: polls a call started with `polled` in its request on the host's thread, inside
    /// the plugin's runtime: [`POLL_PENDING`] or [`POLL_ENDED`]. A polled call moves no work to
    /// the plugin's own threads, so it costs what a built-in call costs; the host polls it again
    /// when the plugin wakes `waker`. Polls of one call never overlap.
    pub poll: extern "C" fn(call: u64, waker: HostWaker) -> i32,
    /// ABI 1.1: the host stops polling a started call (it gave up waiting, or dropped the call):
    /// the plugin runs it on its own runtime to its end, which still sends [`EVENT_DONE`].
    pub detach: extern "C" fn(call: u64),
}

/// How much of [`PluginV1`] a plugin built for ABI 1.0 has.
pub const V1_0_SIZE: usize = std::mem::offset_of!(PluginV1, query);

impl PluginV1 {
    /// Whether the plugin's table has ABI 1.1's functions (`size` says how much of the table
    /// it was built with; the fields beyond must not be read).
    pub fn has_v1_1(&self) -> bool {
        self.size >= std::mem::offset_of!(PluginV1, detach) + std::mem::size_of::<usize>()
    }
}
