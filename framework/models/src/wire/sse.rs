//! Server-sent events: the framing of every streamed response but Bedrock's, and the glue that
//! runs a [`StreamDecoder`] over a body of them to give a [`ModelStream`].

use super::framing::{self, Body, Events, Framing};
use super::{SseEvent, StreamDecoder};
use agentry::model::{ModelError, ModelStream};
use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use std::fmt::Display;
use std::time::Duration;

impl Framing for SseEvent {
    fn events(body: Body) -> Events<Self> {
        Box::pin(body.eventsource().map(|item| match item {
            Ok(event) => Ok(SseEvent {
                event: event.event,
                data: event.data,
            }),
            Err(eventsource_stream::EventStreamError::Transport(error)) => Err(error),
            Err(error) => Err(ModelError::Protocol(format!(
                "the response is not a valid event stream: {error}"
            ))),
        }))
    }
}

/// SSE events from a body, failing when no bytes arrive for `idle`.
pub fn sse_events<S, E>(body: S, idle: Duration) -> Events<SseEvent>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display + Send + 'static,
{
    SseEvent::events(framing::idle_timed(body, idle))
}

/// Runs `decoder` over a body's SSE events. The stream ends after `Finished`, or with one error.
pub fn decode<S, E, D>(body: S, decoder: D, idle: Duration) -> ModelStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display + Send + 'static,
    D: StreamDecoder + 'static,
{
    framing::decode::<SseEvent, _, _, _>(body, decoder, idle)
}
