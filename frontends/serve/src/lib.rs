//! # agentry-serve
//!
//! agentry's server front-end: the chat-flow protocol over Socket.IO and plain WebSocket, a
//! REST API and a web page, over persistent sessions. Like every front-end, it is a projection
//! of the framework's one event stream ([`projection`]).

pub mod projection;
pub mod protocol;
