//! The server: its routes (Socket.IO at `/socket.io/`, the plain WebSocket at `/ws`, the REST
//! API under `/api`, the web page at `/`), who may
//! connect (a bearer token, allowed `Origin`s) and the size limits.

use crate::client::Client;
use crate::live::{SessionDefaults, Sessions};
use crate::rest;
use agentry::agent::Agent;
use agentry::fanout::{Fanout, LocalFanout};
use agentry::model::catalog::ModelChoices;
use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{FutureExt, SinkExt, StreamExt};
use std::sync::Arc;

/// How the server runs.
#[derive(Clone)]
pub struct ServeSettings {
    /// What new sessions get.
    pub defaults: SessionDefaults,
    /// The bearer token clients must present (`Authorization: Bearer …`, or `?token=…` where a
    /// browser cannot set headers); `None` lets anyone on the listening address in.
    pub token: Option<String>,
    /// Origins (`http://host:port`) whose pages may open WebSockets, besides the server's own.
    pub allowed_origins: Vec<String>,
    /// The models a chat may switch its session to (`model` in `chat:send`); none, no switching.
    pub models: Option<Arc<dyn ModelChoices>>,
}

/// `listener` with `TCP_NODELAY` set on every connection it accepts: events are small writes
/// that must go out at once, not wait for the client to acknowledge the previous one (Nagle's
/// algorithm against a delayed ACK holds a write back for up to 40 ms).
pub fn without_delay(
    listener: tokio::net::TcpListener,
) -> impl axum::serve::Listener<Addr = std::net::SocketAddr> {
    axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {error}");
        }
    })
}

/// The server's routes over `agent`.
pub fn router(agent: Agent, settings: ServeSettings) -> Router {
    router_with_fanout(agent, settings, Arc::new(LocalFanout::default()))
}

/// The server's routes, publishing live events through `fanout`.
pub fn router_with_fanout(
    agent: Agent,
    settings: ServeSettings,
    fanout: Arc<dyn Fanout>,
) -> Router {
    let sessions = Arc::new(Sessions::new(
        agent,
        settings.defaults.clone(),
        settings.models.clone(),
        fanout,
    ));
    let settings = Arc::new(settings);
    let api = Router::new()
        .route("/sessions", post(rest::create).get(rest::list))
        .route(
            "/sessions/{session_id}",
            axum::routing::delete(rest::delete),
        )
        .route("/sessions/{session_id}/messages", get(rest::messages))
        .route("/sessions/{session_id}/chat", post(rest::chat))
        .route("/sessions/{session_id}/cancel", post(rest::cancel))
        .route(
            "/openapi.json",
            get(|| async { axum::Json(crate::openapi::document()) }),
        );
    let socket_io = crate::socketio::layer(sessions.clone());
    Router::new()
        .nest("/api", api)
        .route("/ws", get(websocket))
        .merge(crate::page::routes())
        .with_state(sessions)
        .layer(socket_io)
        .layer(DefaultBodyLimit::max(settings.defaults.max_message_bytes))
        .layer(middleware::from_fn_with_state(settings, admit))
}

/// Lets a request in when it carries the token (if one is set) and, for a WebSocket, comes
/// from an allowed origin.
async fn admit(
    State(settings): State<Arc<ServeSettings>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(token) = &settings.token
        && !crate::page::is_page(request.uri().path())
        && !presents_token(request.headers(), request.uri().query(), token)
    {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(
                serde_json::json!({"message": "a bearer token is required", "code": "forbidden"}),
            ),
        )
            .into_response();
    }
    if request.headers().contains_key(header::UPGRADE)
        && !origin_allowed(request.headers(), &settings.allowed_origins)
    {
        return (
            StatusCode::FORBIDDEN,
            "this origin may not open a WebSocket here",
        )
            .into_response();
    }
    next.run(request).await
}

fn presents_token(headers: &HeaderMap, query: Option<&str>, token: &str) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let in_query = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("token="));
    bearer == Some(token) || in_query == Some(token)
}

/// No `Origin` (not a browser), the server's own, or one of the allowed.
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let own = host.is_some_and(|host| {
        origin == format!("http://{host}") || origin == format!("https://{host}")
    });
    own || allowed.iter().any(|a| a == origin)
}

/// The read buffer of a plain-WebSocket connection.
const READ_BUFFER_BYTES: usize = 4 * 1024;

/// `GET /ws`: the plain-WebSocket transport.
async fn websocket(State(sessions): State<Arc<Sessions>>, upgrade: WebSocketUpgrade) -> Response {
    let limit = sessions.max_message_bytes();
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        // Clients send small messages; each read zero-fills this much of the buffer (it grows
        // for a larger message).
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_upgrade(move |socket| serve_websocket(sessions, socket))
}

async fn serve_websocket(sessions: Arc<Sessions>, socket: WebSocket) {
    let (mut sink, mut stream) = socket.split();
    let (client, mut events) = Client::new(sessions);
    let writer = tokio::spawn(async move {
        // Every event ready is written, then flushed once: a burst of events (a turn's end and
        // the next one's start) leaves in one write.
        while let Some(event) = events.next().await {
            let mut batch = Some(event);
            while let Some(event) = batch.take() {
                if sink
                    .feed(Message::Text(event.to_string().into()))
                    .await
                    .is_err()
                {
                    return;
                }
                batch = events.next().now_or_never().flatten();
            }
            if sink.flush().await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });
    while let Some(message) = stream.next().await {
        match message {
            Ok(Message::Text(text)) => client.receive_frame(&text).await,
            Ok(Message::Binary(bytes)) => match std::str::from_utf8(&bytes) {
                Ok(text) => client.receive_frame(text).await,
                Err(_) => client.receive_frame("not UTF-8").await,
            },
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(error) => {
                // The connection cannot go on (a message over the size limit, a broken frame):
                // say why, then close.
                client.fail(&error.to_string());
                break;
            }
        }
    }
    drop(client);
    // The writer sends what is left, then closes; a client that stopped reading is not waited for.
    if tokio::time::timeout(std::time::Duration::from_secs(2), writer)
        .await
        .is_err()
    {
        tracing::debug!("a WebSocket client did not take its last events");
    }
}
