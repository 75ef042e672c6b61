//! The Socket.IO transport at `/socket.io/` (the protocol's original one, on `socketioxide`):
//! each client event is a Socket.IO event of the same name whose argument is the data; the
//! server's events go out the same way.

use crate::client::{CLIENT_EVENTS, Client};
use crate::live::Sessions;
use serde_json::Value;
use socketioxide::SocketIo;
use socketioxide::extract::{Data, SocketRef};
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
    for name in CLIENT_EVENTS {
        let client = client.clone();
        socket.on(name, move |Data::<Value>(data)| {
            let client = client.clone();
            async move { client.receive(name, data).await }
        });
    }
    // The client (and its subscriptions) goes with the socket's handlers; the writer stops here.
    let writer = writer.abort_handle();
    socket.on_disconnect(async move || writer.abort());
}
