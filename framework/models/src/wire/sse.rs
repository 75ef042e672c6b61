//! SSE framing over a byte stream, with an idle timeout, and the glue that runs a
//! [`StreamDecoder`] over it to give a [`ModelStream`].

use super::{SseEvent, StreamDecoder};
use agentry::model::{ModelError, ModelEvent, ModelStream};
use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use std::collections::VecDeque;
use std::fmt::Display;
use std::pin::Pin;
use std::time::Duration;

type SseStream = Pin<Box<dyn Stream<Item = Result<SseEvent, ModelError>> + Send>>;

/// SSE events from a body, failing when no bytes arrive for `idle`.
pub fn sse_events<S, E>(body: S, idle: Duration) -> SseStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display + Send + 'static,
{
    let timed = futures::stream::unfold(Box::pin(body), move |mut body| async move {
        match tokio::time::timeout(idle, body.next()).await {
            Ok(Some(Ok(bytes))) => Some((Ok(bytes), body)),
            Ok(Some(Err(error))) => Some((
                Err(ModelError::Connection(format!(
                    "the response broke off: {error}"
                ))),
                body,
            )),
            Ok(None) => None,
            Err(_) => Some((
                Err(ModelError::Connection(format!(
                    "no data from the model for {} s (idle timeout)",
                    idle.as_secs_f32()
                ))),
                body,
            )),
        }
    });
    Box::pin(timed.eventsource().map(|item| match item {
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

struct Decoding<D> {
    events: SseStream,
    decoder: D,
    ready: VecDeque<ModelEvent>,
    ended: bool,
}

/// Runs `decoder` over a body's SSE events. The stream ends after `Finished`, or with one error.
pub fn decode<S, E, D>(body: S, decoder: D, idle: Duration) -> ModelStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display + Send + 'static,
    D: StreamDecoder + 'static,
{
    let state = Decoding {
        events: sse_events(body, idle),
        decoder,
        ready: VecDeque::new(),
        ended: false,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if state.ended {
                return None;
            }
            let decoded = match state.events.next().await {
                Some(Ok(event)) => state.decoder.feed(&event),
                Some(Err(error)) => Err(error),
                None => {
                    state.ended = true;
                    state.decoder.finish()
                }
            };
            match decoded {
                Ok(events) => {
                    if events
                        .iter()
                        .any(|e| matches!(e, ModelEvent::Finished { .. }))
                    {
                        state.ended = true;
                    }
                    state.ready.extend(events);
                }
                Err(error) => {
                    state.ended = true;
                    state.ready.clear();
                    return Some((Err(error), state));
                }
            }
        }
    }))
}
