//! One connected client, whatever its transport (Socket.IO or plain WebSocket): the events it
//! sends (`chat:send`, `chat:stop`, `session:subscribe`, `session:unsubscribe`,
//! `permission:respond`), and its subscriptions, which forward a session's events to it.
//! A bad message gets `system:error` and never drops the connection.

use crate::chat::{self, ChatSend, PermissionRespond};
use crate::error::ServeError;
use crate::live::{LiveSession, Sessions};
use crate::outbox::{ClientEvents, Outbox, Outgoing, system_error};
use agentry::sync::lock;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// A connected client.
pub struct Client {
    sessions: Arc<Sessions>,
    outbox: Outbox,
    subscriptions: Mutex<HashSet<String>>,
    /// What the connection may still send now.
    allowance: Mutex<Allowance>,
}

/// A token bucket: `per_second` messages a second, a burst of as many.
struct Allowance {
    per_second: Option<u32>,
    tokens: f64,
    filled_at: std::time::Instant,
}

impl Allowance {
    fn new(per_second: Option<u32>) -> Self {
        Self {
            per_second,
            tokens: per_second.map_or(0.0, f64::from),
            filled_at: std::time::Instant::now(),
        }
    }

    /// Takes one message's token: `Err(limit)` when there is none.
    fn take(&mut self) -> Result<(), u32> {
        let Some(per_second) = self.per_second else {
            return Ok(());
        };
        let now = std::time::Instant::now();
        let earned = now.duration_since(self.filled_at).as_secs_f64() * f64::from(per_second);
        self.tokens = (self.tokens + earned).min(f64::from(per_second));
        self.filled_at = now;
        if self.tokens < 1.0 {
            return Err(per_second);
        }
        self.tokens -= 1.0;
        Ok(())
    }
}

/// `session:unsubscribe` and `chat:stop`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionRef {
    session_id: String,
}

/// `session:subscribe`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Subscribe {
    session_id: String,
    /// The last `sequence` the client has (from another server, before it reconnected): only
    /// later events are sent.
    #[serde(default)]
    after_sequence: u64,
}

impl Client {
    /// A client of `sessions`, and the events its transport sends it (ending when the
    /// client is dropped).
    pub fn new(sessions: Arc<Sessions>) -> (Self, ClientEvents) {
        let (outbox, events) = ClientEvents::channel(sessions.metrics().clone());
        sessions.metrics().clients_connected.inc();
        let allowance = Allowance::new(sessions.defaults().limits.max_messages_per_second);
        let client = Self {
            sessions,
            outbox,
            subscriptions: Mutex::default(),
            allowance: Mutex::new(allowance),
        };
        (client, events)
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

    /// Takes in one event the client sent (dropped, with `rate_limited`, past the connection's
    /// rate).
    pub async fn receive(&self, event: &str, data: Value) {
        let session_id = data
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Err(limit) = lock(&self.allowance).take() {
            self.sessions.metrics().refused("rate_limited");
            self.error(&ServeError::RateLimited(limit), session_id.as_deref());
            return;
        }
        if let Err(error) = self.handle(event, data).await {
            self.error(&error, session_id.as_deref());
        }
    }

    async fn handle(&self, event: &str, data: Value) -> Result<(), ServeError> {
        match event {
            "chat:send" => {
                let request: ChatSend = parse(event, data)?;
                let live = self.sessions.open(&request.session_id)?;
                self.subscribe(live, None);
                let outcome = chat::start(&self.sessions, &request.session_id, request.chat)?;
                // Errors found once the chat ran (an answer that does not fit) go to this client,
                // if it is still connected.
                let outbox = self.outbox.downgrade();
                let session_id = request.session_id;
                tokio::spawn(async move {
                    if let (Ok(Err(error)), Some(outbox)) = (outcome.await, outbox.upgrade()) {
                        let error = system_error(&error, Some(&session_id));
                        let _ = outbox.send(Outgoing::Event(error));
                    }
                });
                Ok(())
            }
            "chat:stop" => {
                let request: SessionRef = parse(event, data)?;
                crate::control::stop(&self.sessions, &request.session_id).await?;
                Ok(())
            }
            "session:subscribe" => {
                let request: Subscribe = parse(event, data)?;
                let live = self.sessions.get(&request.session_id)?;
                // Asked again, it starts over: a client whose live events were interrupted
                // catches up.
                self.subscribe(live, Some(request.after_sequence));
                Ok(())
            }
            "session:unsubscribe" => {
                let request: SessionRef = parse(event, data)?;
                if lock(&self.subscriptions).remove(&request.session_id) {
                    let _ = self.outbox.send(Outgoing::Unsubscribe(request.session_id));
                }
                Ok(())
            }
            "permission:respond" => {
                let request: PermissionRespond = parse(event, data)?;
                crate::control::respond(
                    &self.sessions,
                    &request.session_id,
                    &request.request_id,
                    request.option_id,
                )
                .await
            }
            other => Err(ServeError::BadRequest(format!(
                "unknown event `{other}`: send chat:send, chat:stop, session:subscribe, session:unsubscribe or permission:respond"
            ))),
        }
    }

    /// Subscribes to a session: `session:subscribed` with the sequence so far, the open turns
    /// as they stand and the open permission questions, then every later event (after
    /// `again`'s sequence, when given). A client subscribed already is subscribed again (from
    /// a new catch-up) when asked with `again`, and left as it is otherwise.
    fn subscribe(&self, live: Arc<LiveSession>, again: Option<u64>) {
        let id = live.id.to_string();
        if !lock(&self.subscriptions).insert(id.clone()) && again.is_none() {
            return;
        }
        // Subscribed before the snapshot is taken: nothing falls between the two.
        let stream = self.sessions.fanout().subscribe(&id);
        let mut catch_up = Vec::new();
        let last = {
            let projector = lock(&live.projector);
            let last = projector.last_sequence();
            catch_up.push(Arc::new(json!({"event": "session:subscribed",
                "data": {"session_id": id, "sequence": last}})));
            catch_up.extend(projector.open_turns().map(|turn| {
                let mut data = json!(turn);
                data["session_id"] = json!(id);
                Arc::new(json!({"event": "turn:start", "data": data}))
            }));
            last
        };
        catch_up.extend(
            lock(&live.questions)
                .values()
                .map(|q| Arc::new(json!(q.event))),
        );
        let _ = self.outbox.send(Outgoing::Subscribe {
            session_id: id,
            catch_up,
            live: stream,
            after: last.max(again.unwrap_or(0)),
        });
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

    fn error(&self, error: &ServeError, session_id: Option<&str>) {
        let _ = self
            .outbox
            .send(Outgoing::Event(system_error(error, session_id)));
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.sessions.metrics().clients_connected.dec();
    }
}

/// An event's data in its shape, or an error naming what is wrong.
fn parse<T: DeserializeOwned>(event: &str, data: Value) -> Result<T, ServeError> {
    serde_json::from_value(data).map_err(|error| ServeError::Invalid {
        message: format!("`{event}`: {error}"),
        detail: None,
    })
}
