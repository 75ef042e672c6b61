//! # agentry-serve
//!
//! agentry's server front-end: the chat-flow protocol over Socket.IO and plain WebSocket, and a
//! REST API,
//! over persistent sessions. Like every front-end, it is a projection of the framework's one
//! event stream ([`projection`]); it depends on the framework only.
//!
//! Live events reach clients through a [`Fanout`](agentry_fanout::Fanout) (in-process by
//! default) and sessions live in the agent's [`SessionStore`](agentry::session::SessionStore):
//! several instances sharing both (PostgreSQL and Redis) behind a load balancer serve the same
//! sessions. A chat claims its session's lease first (one chat of a session
//! across every instance, its events numbered after every earlier one's); `chat:stop` and
//! permission answers reach it from any instance. A client that reconnects to any
//! instance subscribes (`session:subscribe`, with `after_sequence` when it moves from another),
//! gets `session:subscribed` with the session's sequence so far and the open turns as they
//! stand (a chat running on another instance: its events so far), then every later event once;
//! `GET /api/sessions/{id}/messages` gives every turn with its `sequence`.

mod admit;
mod app;
pub mod chat;
pub mod client;
mod control;
pub mod error;
mod guard;
mod health;
pub mod live;
pub mod markdown;
pub mod metering;
pub mod metrics;
mod openapi;
mod outbox;
mod ownership;
mod page;
pub mod projection;
pub mod protocol;
pub mod rest;
pub mod rewind;
mod socketio;

pub use app::{App, Drain, ServeSettings, app, metrics_routes, router, router_with_fanout};
pub use guard::{Guarded, GuardedListener, Timeouts};
pub use outbox::ClientEvents;
pub use ownership::DEFAULT_LEASE;
