//! The Socket.IO transport at `/socket.io/` (the protocol's original one, on `socketioxide`):
//! each client event is a Socket.IO event of the same name whose argument is the data; the
//! server's events go out the same way.
//!
//! Size limit: an event whose data is over the server's message limit gets `system:error`
//! `too_large` and the connection is closed, as on the plain WebSocket. The Socket.IO engine
//! itself refuses packets over twice the limit (closing at once), so nothing larger is buffered.

use crate::client::Client;
use crate::live::Sessions;
use futures::StreamExt;
use serde_json::Value;
use socketioxide::SocketIo;
use socketioxide::extract::{Data, Event, SocketRef};
use socketioxide::layer::SocketIoLayer;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The Socket.IO layer serving `sessions`.
pub fn layer(sessions: Arc<Sessions>) -> SocketIoLayer {
    let engine_limit = sessions.max_message_bytes().saturating_mul(2);
    let (layer, io) = SocketIo::builder()
        .max_payload(engine_limit as u64)
        .max_buffer_size(4096)
        .build_layer();
    io.ns("/", move |socket: SocketRef| {
        connect(socket, sessions.clone())
    });
    layer
}

/// What the reader of a connection takes in, in arrival order.
enum Incoming {
    /// An event and its data.
    Event(String, Value),
    /// An event whose data is this many bytes, over the limit.
    Oversized(usize),
}

/// A new Socket.IO connection: a [`Client`] whose events are emitted to the socket.
async fn connect(socket: SocketRef, sessions: Arc<Sessions>) {
    let limit = sessions.max_message_bytes();
    let (client, mut events) = Client::new(sessions);
    let emitter = socket.clone();
    let writer = tokio::spawn(async move {
        while let Some(event) = events.next().await {
            let Some(name) = event["event"].as_str() else {
                continue;
            };
            if emitter.emit(name, &event["data"]).is_err() {
                return;
            }
        }
        // The client is gone (an oversized message): its last events are out, close.
        let _ = emitter.disconnect();
    });
    // Every event goes to the client handler (which answers unknown ones with system:error),
    // one at a time and in the order they came, as on the plain WebSocket.
    let (inbox, mut received) = mpsc::unbounded_channel::<Incoming>();
    let reader = tokio::spawn(async move {
        while let Some(incoming) = received.recv().await {
            match incoming {
                Incoming::Event(name, data) => client.receive(&name, data).await,
                Incoming::Oversized(bytes) => {
                    client.refuse_oversized(bytes);
                    break;
                }
            }
        }
    });
    socket.on_fallback(move |Event(name): Event, Data::<Value>(data)| {
        let bytes = encoded_len(&data);
        let incoming = if bytes > limit {
            Incoming::Oversized(bytes)
        } else {
            Incoming::Event(name, data)
        };
        let _ = inbox.send(incoming);
        async {}
    });
    // The reader ends with the socket's handlers (and drops the client and its
    // subscriptions); both are stopped here in case a chat still holds them.
    let (writer, reader) = (writer.abort_handle(), reader.abort_handle());
    socket.on_disconnect(async move || {
        reader.abort();
        writer.abort();
    });
}

/// The length of `data` as JSON: what the client sent, give or take its spacing.
fn encoded_len(data: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, data);
    counter.0
}
