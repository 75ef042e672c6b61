//! The Socket.IO transport at `/socket.io/` (the protocol's original one, on `socketioxide`):
//! each client event is a Socket.IO event of the same name whose argument is the data; the
//! server's events go out the same way.

use crate::client::Client;
use crate::live::Sessions;
use serde_json::Value;
use socketioxide::SocketIo;
use socketioxide::extract::{Data, Event, SocketRef};
use socketioxide::layer::SocketIoLayer;
use std::sync::Arc;
use tokio::sync::mpsc;

/// The Socket.IO layer serving `sessions`, with messages up to `max_message_bytes`.
pub fn layer(sessions: Arc<Sessions>, max_message_bytes: usize) -> SocketIoLayer {
    let (layer, io) = SocketIo::builder()
        .max_payload(max_message_bytes as u64)
        .max_buffer_size(4096)
        .build_layer();
    io.ns("/", move |socket: SocketRef| {
        connect(socket, sessions.clone())
    });
    layer
}

/// A new Socket.IO connection: a [`Client`] whose events are emitted to the socket.
async fn connect(socket: SocketRef, sessions: Arc<Sessions>) {
    let (outbox, mut events) = mpsc::unbounded_channel::<Arc<Value>>();
    let client = Arc::new(Client::new(sessions, outbox));
    let emitter = socket.clone();
    let writer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let Some(name) = event["event"].as_str() else {
                continue;
            };
            if emitter.emit(name, &event["data"]).is_err() {
                break;
            }
        }
    });
    // Every event goes to the client handler (which answers unknown ones with system:error),
    // one at a time and in the order they came, as on the plain WebSocket.
    let (inbox, mut received) = mpsc::unbounded_channel::<(String, Value)>();
    let reader = tokio::spawn(async move {
        while let Some((name, data)) = received.recv().await {
            client.receive(&name, data).await;
        }
    });
    socket.on_fallback(move |Event(name): Event, Data::<Value>(data)| {
        let _ = inbox.send((name, data));
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
