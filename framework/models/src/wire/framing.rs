//! From a response body to model events: the body's bytes with an idle timeout
//! ([`idle_timed`]), cut into the events of its format ([`Framing`]: server-sent events, or the
//! frames of AWS's event stream), and a [`StreamDecoder`] run over them ([`decode`]).

use super::StreamDecoder;
use agentry::model::{ModelError, ModelEvent, ModelStream};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use std::collections::VecDeque;
use std::fmt::Display;
use std::pin::Pin;
use std::time::Duration;

/// A response body's bytes, as they arrive.
pub type Body = Pin<Box<dyn Stream<Item = Result<Bytes, ModelError>> + Send>>;

/// The events a body is cut into.
pub type Events<I> = Pin<Box<dyn Stream<Item = Result<I, ModelError>> + Send>>;

/// How a body is cut into the events a decoder takes.
pub trait Framing: Sized + Send + 'static {
    /// The events of `body`, each whole; an error when the body is not of this format.
    fn events(body: Body) -> Events<Self>;
}

/// A body's bytes, failing when none arrive for `idle`.
pub fn idle_timed<S, E>(body: S, idle: Duration) -> Body
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display + Send + 'static,
{
    Box::pin(futures::stream::unfold(
        Box::pin(body),
        move |mut body| async move {
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
        },
    ))
}

struct Decoding<I, D> {
    events: Events<I>,
    decoder: D,
    ready: VecDeque<ModelEvent>,
    ended: bool,
}

/// Runs `decoder` over a body's events of format `I`. The stream ends after `Finished`, or
/// with one error.
pub fn decode<I, S, E, D>(body: S, decoder: D, idle: Duration) -> ModelStream
where
    I: Framing,
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Display + Send + 'static,
    D: StreamDecoder<I> + 'static,
{
    let state = Decoding {
        events: I::events(idle_timed(body, idle)),
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
