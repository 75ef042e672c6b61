//! One connected client, whatever its transport (Socket.IO or plain WebSocket): the events it
//! sends (`chat:send`, `chat:stop`, `session:subscribe`, `session:unsubscribe`,
//! `permission:respond`), and its subscriptions, which forward a session's events to it.
//! A bad message gets `system:error` and never drops the connection.

use crate::chat::{self, ChatSend, PermissionRespond};
use crate::error::ServeError;
use crate::live::{LiveSession, Sessions};
use agentry::fanout::Delivery;
use agentry::sync::lock;
use futures::StreamExt;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// Where a client's events go: `{"event": NAME, "data": {...}}` values, in order.
pub type Outbox = mpsc::UnboundedSender<Arc<Value>>;

/// A connected client.
pub struct Client {
    sessions: Arc<Sessions>,
    outbox: Outbox,
    subscriptions: Mutex<HashMap<String, AbortHandle>>,
}

/// `session:subscribe`, `session:unsubscribe` and `chat:stop`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionRef {
    session_id: String,
}

impl Client {
    /// A client whose events go to `outbox`.
    pub fn new(sessions: Arc<Sessions>, outbox: Outbox) -> Self {
        Self {
            sessions,
            outbox,
            subscriptions: Mutex::default(),
        }
    }

    /// Takes in one text frame of the plain-WebSocket transport: `{"event": …, "data": …}`.
    pub async fn receive_frame(&self, text: &str) {
        #[derive(Deserialize)]
        struct Frame {
            event: String,
            #[serde(default)]
            data: Value,
        }
        match serde_json::from_str::<Frame>(text) {
            Ok(frame) => self.receive(&frame.event, frame.data).await,
            Err(error) => self.error(
                &ServeError::BadRequest(format!(
                    "a frame must be JSON {{\"event\": NAME, \"data\": {{…}}}}: {error}"
                )),
                None,
            ),
        }
    }

    /// Takes in one event the client sent.
    pub async fn receive(&self, event: &str, data: Value) {
        let session_id = data
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Err(error) = self.handle(event, data).await {
            self.error(&error, session_id.as_deref());
        }
    }

    async fn handle(&self, event: &str, data: Value) -> Result<(), ServeError> {
        match event {
            "chat:send" => {
                let request: ChatSend = parse(event, data)?;
                let live = self.sessions.get(&request.session_id)?;
                self.subscribe(live);
                let outcome = chat::start(&self.sessions, &request.session_id, request.chat)?;
                // Errors found once the chat ran (an answer that does not fit) go to this client,
                // if it is still connected.
                let outbox = self.outbox.downgrade();
                let session_id = request.session_id;
                tokio::spawn(async move {
                    if let (Ok(Err(error)), Some(outbox)) = (outcome.await, outbox.upgrade()) {
                        let _ = outbox.send(system_error(&error, Some(&session_id)));
                    }
                });
                Ok(())
            }
            "chat:stop" => {
                let request: SessionRef = parse(event, data)?;
                self.sessions.get(&request.session_id)?.cancel();
                Ok(())
            }
            "session:subscribe" => {
                let request: SessionRef = parse(event, data)?;
                let live = self.sessions.get(&request.session_id)?;
                self.subscribe(live);
                Ok(())
            }
            "session:unsubscribe" => {
                let request: SessionRef = parse(event, data)?;
                if let Some(task) = lock(&self.subscriptions).remove(&request.session_id) {
                    task.abort();
                }
                Ok(())
            }
            "permission:respond" => {
                let request: PermissionRespond = parse(event, data)?;
                chat::respond(&self.sessions, request)
            }
            other => Err(ServeError::BadRequest(format!(
                "unknown event `{other}`: send chat:send, chat:stop, session:subscribe, session:unsubscribe or permission:respond"
            ))),
        }
    }

    /// Subscribes to a session (once): `session:subscribed` with the sequence so far, the open
    /// turns as they stand and the open permission questions, then every later event.
    fn subscribe(&self, live: Arc<LiveSession>) {
        let id = live.id.to_string();
        let mut subscriptions = lock(&self.subscriptions);
        if subscriptions.contains_key(&id) {
            return;
        }
        // Subscribed before the snapshot is taken: nothing falls between the two.
        let mut stream = self.sessions.fanout().subscribe(&id);
        let (last, open_turns) = {
            let projector = lock(&live.projector);
            let turns: Vec<Value> = projector
                .open_turns()
                .map(|turn| {
                    let mut data = json!(turn);
                    data["session_id"] = json!(id);
                    json!({"event": "turn:start", "data": data})
                })
                .collect();
            (projector.last_sequence(), turns)
        };
        let questions: Vec<Value> = lock(&live.questions)
            .values()
            .map(|q| json!(q.event))
            .collect();
        self.send(
            json!({"event": "session:subscribed", "data": {"session_id": id, "sequence": last}}),
        );
        for event in open_turns.into_iter().chain(questions) {
            self.send(event);
        }
        let outbox = self.outbox.clone();
        let session_id = id.clone();
        let forward = tokio::spawn(async move {
            while let Some(delivery) = stream.next().await {
                let sent = match delivery {
                    Delivery::Message(event) => {
                        let sequence = event["data"]["sequence"].as_u64().unwrap_or(u64::MAX);
                        if sequence <= last {
                            continue;
                        }
                        outbox.send(event)
                    }
                    Delivery::Missed(count) => outbox.send(system_error(
                        &ServeError::Internal(format!(
                            "this connection fell behind and missed {count} events: fetch GET /api/sessions/{session_id}/messages"
                        )),
                        Some(&session_id),
                    )),
                };
                if sent.is_err() {
                    break;
                }
            }
        });
        subscriptions.insert(id, forward.abort_handle());
    }

    /// Tells the client its connection failed (`problem`) and cannot go on.
    pub fn fail(&self, problem: &str) {
        let error = if problem.contains("too long") || problem.contains("too big") {
            ServeError::TooLarge(format!(
                "the message is larger than the server takes: {problem}"
            ))
        } else {
            ServeError::BadRequest(format!("the connection failed: {problem}"))
        };
        self.error(&error, None);
    }

    /// Tells the client its message of `bytes` bytes is over the server's limit; the transport
    /// closes the connection after this.
    pub fn refuse_oversized(&self, bytes: usize) {
        let limit = self.sessions.max_message_bytes();
        self.error(
            &ServeError::TooLarge(format!(
                "the message is larger than the server takes: {bytes} bytes, over the limit of {limit}"
            )),
            None,
        );
    }

    fn send(&self, event: Value) {
        let _ = self.outbox.send(Arc::new(event));
    }

    fn error(&self, error: &ServeError, session_id: Option<&str>) {
        let _ = self.outbox.send(system_error(error, session_id));
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        for (_, task) in lock(&self.subscriptions).drain() {
            task.abort();
        }
    }
}

/// A `system:error` event.
fn system_error(error: &ServeError, session_id: Option<&str>) -> Arc<Value> {
    Arc::new(json!({"event": "system:error", "data": error.to_json(session_id)}))
}

/// An event's data in its shape, or an error naming what is wrong.
fn parse<T: DeserializeOwned>(event: &str, data: Value) -> Result<T, ServeError> {
    serde_json::from_value(data).map_err(|error| ServeError::Invalid {
        message: format!("`{event}`: {error}"),
        detail: None,
    })
}
