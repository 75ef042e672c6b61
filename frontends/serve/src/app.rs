//! The server: its routes (Socket.IO at `/socket.io/`, the plain WebSocket at `/ws`, the REST
//! API under `/api`, the web page at `/`), who may connect (see [`crate::admit`]) and the size
//! limits.

use crate::client::Client;
use crate::live::{SessionDefaults, Sessions};
use crate::metering::ServeMetrics;
use crate::rest;
use agentry::agent::Agent;
use agentry::model::ModelChoices;
use agentry_admission::Admission;
use agentry_fanout::{Fanout, LocalFanout};
use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, State};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::{FutureExt, SinkExt, StreamExt};
use std::sync::Arc;

/// How the server runs.
#[derive(Clone)]
pub struct ServeSettings {
    /// What new sessions get.
    pub defaults: SessionDefaults,
    /// Who may connect: the token (`Authorization: Bearer …`, the page's cookie, or `?token=…`
    /// where a client cannot set headers), the `Host` names and the other sites' pages allowed.
    pub admission: Admission,
    /// The models a chat may switch its session to (`model` in `chat:send`); none, no switching.
    pub models: Option<Arc<dyn ModelChoices>>,
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
    app(agent, settings, fanout).router
}

/// The server: its routes, and how it stops.
pub struct App {
    /// The routes.
    pub router: Router,
    /// Its drain, for when the server is asked to stop.
    pub drain: Drain,
    /// Its metrics (served at `/metrics`, and by [`metrics_routes`] elsewhere).
    pub metrics: Arc<ServeMetrics>,
}

/// `GET /metrics` alone, without the token: for a separate address that only the monitoring
/// reaches.
pub fn metrics_routes(metrics: Arc<ServeMetrics>) -> Router {
    Router::new()
        .route("/metrics", get(exposition))
        .with_state(metrics)
}

/// `GET /metrics`: every metric, in the Prometheus text format.
async fn exposition(State(metrics): State<Arc<ServeMetrics>>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics.agent.encode(),
    )
        .into_response()
}

/// How a server stops without losing chats.
pub struct Drain(Arc<Sessions>);

impl Drain {
    /// Takes no new chat from now on (`/readyz` answers 503, `chat:send` gets `draining`),
    /// lets the running chats finish within `timeout`, then stops the rest, which end
    /// interrupted and are stored whole (each gives its session's lease up as it ends); waits
    /// at most ten seconds more for them to end.
    pub async fn run(&self, timeout: std::time::Duration) {
        let sessions = &self.0;
        sessions.start_draining();
        let deadline = tokio::time::Instant::now() + timeout;
        while sessions.running_chats() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(DRAIN_POLL).await;
        }
        if sessions.running_chats() == 0 {
            return;
        }
        tracing::warn!(
            "{} chats outlived the drain time: they are stopped as interrupted",
            sessions.running_chats()
        );
        sessions.stop_all();
        let stopped = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while sessions.running_chats() > 0 && tokio::time::Instant::now() < stopped {
            tokio::time::sleep(DRAIN_POLL).await;
        }
    }
}

/// How often a drain looks whether chats still run.
const DRAIN_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The server over `agent`, publishing live events through `fanout`.
pub fn app(agent: Agent, settings: ServeSettings, fanout: Arc<dyn Fanout>) -> App {
    let sessions = Arc::new(Sessions::new(
        agent,
        settings.defaults.clone(),
        settings.models.clone(),
        fanout,
    ));
    crate::ownership::keep_sweeping(&sessions);
    let admission = Arc::new(settings.admission.clone());
    let api = Router::new()
        .route("/sessions", post(rest::create).get(rest::list))
        .route(
            "/sessions/{session_id}",
            axum::routing::delete(rest::delete).patch(rest::update),
        )
        .route("/options", get(rest::options))
        .route("/sessions/{session_id}/messages", get(rest::messages))
        .route("/sessions/{session_id}/chat", post(rest::chat))
        .route("/sessions/{session_id}/cancel", post(rest::cancel))
        .route("/sessions/{session_id}/rewind", post(crate::rewind::rewind))
        .route("/render", post(rest::render))
        .route(
            "/openapi.json",
            get(|| async { axum::Json(crate::openapi::document()) }),
        );
    let socket_io = crate::socketio::layer(sessions.clone());
    let admitted = Router::new()
        .nest("/api", api)
        .route("/ws", get(websocket))
        .merge(crate::page::routes(admission.clone()))
        .with_state(sessions.clone())
        .merge(metrics_routes(sessions.metrics().clone()))
        .layer(socket_io)
        .layer(DefaultBodyLimit::max(settings.defaults.max_message_bytes))
        .layer(middleware::from_fn_with_state(
            admission,
            crate::admit::admit,
        ));
    // Outside the door: probes carry no token, and come to whatever name reaches the server.
    let health = Router::new()
        .route("/healthz", get(crate::health::healthz))
        .route("/readyz", get(crate::health::readyz))
        .with_state(sessions.clone());
    App {
        router: health.merge(admitted),
        metrics: sessions.metrics().clone(),
        drain: Drain(sessions),
    }
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
