//! What flows to one client: the events it is told directly (answers, errors, a subscription's
//! catch-up) and the live events of the sessions it subscribed to, merged into one ordered
//! stream that the transport's writer drains. A subscription is polled by that writer itself,
//! so a session's event goes from the chat's task to the client's socket in one hop, with no
//! forwarding task per subscription.

use crate::error::ServeError;
use crate::metering::ServeMetrics;
use agentry_fanout::Delivery;
use futures::stream::{AbortHandle, Abortable, BoxStream, SelectAll};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// One `{"event": NAME, "data": {...}}` value on its way to a client.
pub type Event = Arc<Value>;

/// What a [`Client`](crate::client::Client) hands its [`ClientEvents`], in order.
pub(crate) enum Outgoing {
    /// One event.
    Event(Event),
    /// A new subscription: `catch_up` first, then the session's live events after `after`.
    Subscribe {
        session_id: String,
        catch_up: Vec<Event>,
        live: BoxStream<'static, Delivery>,
        after: u64,
    },
    /// The end of a subscription.
    Unsubscribe(String),
}

/// The sending side, kept by the client.
pub(crate) type Outbox = mpsc::UnboundedSender<Outgoing>;

/// A client's events, in order; the stream ends when the client is dropped.
pub struct ClientEvents {
    metrics: Arc<ServeMetrics>,
    outgoing: mpsc::UnboundedReceiver<Outgoing>,
    ready: VecDeque<Event>,
    live: SelectAll<Abortable<BoxStream<'static, Event>>>,
    subscriptions: HashMap<String, AbortHandle>,
}

impl ClientEvents {
    /// A new pair: the client's outbox and the stream its transport drains, counted in
    /// `metrics`.
    pub(crate) fn channel(metrics: Arc<ServeMetrics>) -> (Outbox, ClientEvents) {
        let (outbox, outgoing) = mpsc::unbounded_channel();
        let events = ClientEvents {
            metrics,
            outgoing,
            ready: VecDeque::new(),
            live: SelectAll::new(),
            subscriptions: HashMap::new(),
        };
        (outbox, events)
    }

    fn take(&mut self, outgoing: Outgoing) {
        match outgoing {
            Outgoing::Event(event) => self.ready.push_back(event),
            Outgoing::Subscribe {
                session_id,
                catch_up,
                live,
                after,
            } => {
                self.ready.extend(catch_up);
                let (handle, registration) = AbortHandle::new_pair();
                if let Some(previous) = self.subscriptions.insert(session_id.clone(), handle) {
                    previous.abort();
                }
                let live = after_sequence(live, after, session_id, self.metrics.clone()).boxed();
                self.live.push(Abortable::new(live, registration));
            }
            Outgoing::Unsubscribe(session_id) => {
                if let Some(handle) = self.subscriptions.remove(&session_id) {
                    handle.abort();
                }
            }
        }
    }
}

impl Stream for ClientEvents {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let next = self.as_mut().next_event(cx);
        if let Poll::Ready(Some(_)) = &next {
            self.metrics.events_sent.inc();
        }
        next
    }
}

impl ClientEvents {
    /// The next event, as [`Stream::poll_next`] gives it.
    fn next_event(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = &mut *self;
        // What the client was told directly comes first, in the order it was told.
        loop {
            if let Some(event) = this.ready.pop_front() {
                return Poll::Ready(Some(event));
            }
            match this.outgoing.poll_recv(cx) {
                Poll::Ready(Some(outgoing)) => this.take(outgoing),
                // The client is gone: so are its subscriptions.
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => break,
            }
        }
        match this.live.poll_next_unpin(cx) {
            Poll::Ready(Some(event)) => Poll::Ready(Some(event)),
            // No subscription has anything (or there is none): the outbox's waker is set.
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}

/// A session's live events after sequence `after` (those up to it were in the catch-up), each
/// once: an event that comes again (from a broker's stream and live) is dropped, as is any
/// numbered at or below the last one passed on. A subscriber that fell behind is told to fetch
/// the turns instead; one that lost the other servers' events, to subscribe again.
fn after_sequence(
    live: BoxStream<'static, Delivery>,
    after: u64,
    session_id: String,
    metrics: Arc<ServeMetrics>,
) -> impl Stream<Item = Event> {
    let mut last = after;
    live.filter_map(move |delivery| {
        let event = match delivery {
            Delivery::Message(event) => match event["data"]["sequence"].as_u64() {
                Some(sequence) if sequence <= last => None,
                Some(sequence) => {
                    last = sequence;
                    Some(event)
                }
                None => Some(event),
            },
            Delivery::Missed(count) => {
                metrics.subscribers_behind.inc();
                Some(system_error(
                &ServeError::Internal(format!(
                    "this connection fell behind and missed {count} events: fetch GET /api/sessions/{session_id}/messages"
                )),
                Some(&session_id),
            ))
            }
            Delivery::Interrupted(reason) => {
                metrics.broker_errors.inc();
                Some(system_error(
                &ServeError::LiveEventsInterrupted(format!(
                    "{reason}; send session:subscribe again to catch up"
                )),
                Some(&session_id),
            ))
            }
        };
        std::future::ready(event)
    })
}

/// A `system:error` event.
pub(crate) fn system_error(error: &ServeError, session_id: Option<&str>) -> Event {
    Arc::new(json!({"event": "system:error", "data": error.to_json(session_id)}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry_fanout::{Fanout, LocalFanout};

    fn event(name: &str, sequence: u64) -> Event {
        Arc::new(json!({"event": name, "data": {"sequence": sequence}}))
    }

    fn names(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| format!("{} {}", e["event"], e["data"]["sequence"]))
            .collect()
    }

    #[tokio::test]
    async fn catch_up_comes_first_then_only_later_live_events_until_unsubscribed() {
        let fanout = LocalFanout::new(8);
        let (outbox, mut events) = ClientEvents::channel(ServeMetrics::new());
        let live = fanout.subscribe("s1");
        // Published after subscribing but already in the catch-up: skipped.
        fanout.publish("s1", event("turn:patch", 5));
        fanout.publish("s1", event("turn:patch", 6));
        outbox
            .send(Outgoing::Subscribe {
                session_id: "s1".into(),
                catch_up: vec![event("session:subscribed", 5)],
                live,
                after: 5,
            })
            .unwrap();
        outbox
            .send(Outgoing::Event(event("system:error", 0)))
            .unwrap();
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(events.next().await.unwrap());
        }
        assert_eq!(
            names(&seen),
            [
                "\"session:subscribed\" 5",
                "\"system:error\" 0",
                "\"turn:patch\" 6"
            ]
        );
        outbox.send(Outgoing::Unsubscribe("s1".into())).unwrap();
        fanout.publish("s1", event("turn:patch", 7));
        outbox.send(Outgoing::Event(event("marker", 0))).unwrap();
        assert_eq!(names(&[events.next().await.unwrap()]), ["\"marker\" 0"]);
        let nothing = tokio::time::timeout(std::time::Duration::from_millis(50), events.next());
        assert!(nothing.await.is_err(), "no events after unsubscribing");
        drop(outbox);
        assert!(events.next().await.is_none(), "ends with the client");
    }

    #[tokio::test]
    async fn a_subscriber_that_fell_behind_is_told_to_fetch_the_turns() {
        let fanout = LocalFanout::new(1);
        let (outbox, mut events) = ClientEvents::channel(ServeMetrics::new());
        outbox
            .send(Outgoing::Subscribe {
                session_id: "s1".into(),
                catch_up: Vec::new(),
                live: fanout.subscribe("s1"),
                after: 0,
            })
            .unwrap();
        for sequence in 1..=3 {
            fanout.publish("s1", event("turn:patch", sequence));
        }
        let error = events.next().await.unwrap();
        assert_eq!(error["event"], "system:error");
        assert!(
            error["data"]["message"]
                .as_str()
                .unwrap()
                .contains("missed 2 events"),
            "{error}"
        );
        assert_eq!(names(&[events.next().await.unwrap()]), ["\"turn:patch\" 3"]);
    }
}
