//! The plugin's side of one started call's link to the host: the host's pointer and callback,
//! through which the call reports progress, asks for host services and ends.

use crate::abi::{self, HostCallback};
use crate::wire::{CallEnd, ServiceAnswer, ServiceCall, ServiceRequest};
use agentry_plugin::sync::lock;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::oneshot;

/// The host's pointer for one call; it travels to whichever thread reports on the call.
pub(super) struct Host {
    data: *mut c_void,
    callback: HostCallback,
    /// Set once EVENT_DONE is sent: after it the host's pointer must not be used, even by a
    /// progress sink or a service a tool kept.
    ended: Mutex<bool>,
    /// Service requests waiting for the host's answer, by id.
    waiting: Mutex<HashMap<u64, oneshot::Sender<ServiceAnswer>>>,
    next_request: AtomicU64,
}

// SAFETY: the ABI lets the callback be called from any thread with the host's pointer.
unsafe impl Send for Host {}
// SAFETY: as above; the host's side of the pointer is thread-safe.
unsafe impl Sync for Host {}

impl Host {
    /// The link through `callback` with the host's `data` pointer.
    pub(super) fn new(data: *mut c_void, callback: HostCallback) -> Self {
        Self {
            data,
            callback,
            ended: Mutex::new(false),
            waiting: Mutex::default(),
            next_request: AtomicU64::new(1),
        }
    }

    /// Sends one event, unless the call has ended.
    fn send(&self, event: u32, bytes: &[u8]) -> bool {
        let ended = lock(&self.ended);
        if !*ended {
            (self.callback)(self.data, event, bytes.as_ptr(), bytes.len());
        }
        !*ended
    }

    /// Reports progress (JSON `ToolProgress`).
    pub(super) fn progress(&self, bytes: &[u8]) {
        self.send(abi::EVENT_PROGRESS, bytes);
    }

    /// Ends the call: its one EVENT_DONE. Service requests still waiting fail.
    pub(super) fn finish(&self, end: &CallEnd) {
        let bytes = serde_json::to_vec(end).unwrap_or_else(|_| {
            br#"{"failed":{"message":"cannot encode the result","output":null}}"#.to_vec()
        });
        let mut ended = lock(&self.ended);
        if !*ended {
            *ended = true;
            (self.callback)(self.data, abi::EVENT_DONE, bytes.as_ptr(), bytes.len());
        }
        drop(ended);
        lock(&self.waiting).clear();
    }

    /// Asks the host for a service and waits for its answer's value; errors are messages for
    /// the model.
    pub(super) async fn request(&self, request: ServiceRequest) -> Result<Value, String> {
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let bytes = serde_json::to_vec(&ServiceCall { id, request })
            .map_err(|e| format!("cannot encode the request to the host: {e}"))?;
        let (answer, answered) = oneshot::channel();
        lock(&self.waiting).insert(id, answer);
        if !self.send(abi::EVENT_REQUEST, &bytes) {
            lock(&self.waiting).remove(&id);
            return Err("the call has ended: the host no longer takes its requests".to_owned());
        }
        match answered.await {
            Ok(ServiceAnswer::Ok(value)) => Ok(value),
            Ok(ServiceAnswer::Error(message)) => Err(message),
            Err(_) => Err("the host did not answer before the call ended".to_owned()),
        }
    }

    /// Hands the host's answer to the request waiting for it (if one still is).
    pub(super) fn answered(&self, id: u64, answer: ServiceAnswer) {
        if let Some(waiting) = lock(&self.waiting).remove(&id) {
            let _ = waiting.send(answer);
        }
    }
}
