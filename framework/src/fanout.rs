//! Live-event fan-out: a front-end publishes each session's events under a topic (the
//! session's id), and every connection subscribed to that topic receives them, in order.
//!
//! [`LocalFanout`] does it inside one process. Several server instances behind a load balancer
//! would share one through a broker instead (a [`Fanout`] over Redis or PostgreSQL
//! `LISTEN`/`NOTIFY`), with the sessions in a shared [`SessionStore`](crate::session::SessionStore):
//! a reconnecting client then needs from any instance only the session's turns so far (from the
//! store) and the live events after the sequence number it has.

use crate::sync::lock;
use futures::stream::BoxStream;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// What a subscriber receives: a message, or how many it missed by falling behind.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// The next message.
    Message(Arc<Value>),
    /// This many messages were dropped because the subscriber fell behind; it should catch up
    /// from the store.
    Missed(u64),
}

/// Delivers messages published under a topic to its subscribers.
pub trait Fanout: Send + Sync {
    /// Publishes `message` to the current subscribers of `topic`.
    fn publish(&self, topic: &str, message: Arc<Value>);
    /// The messages published under `topic` from now on.
    fn subscribe(&self, topic: &str) -> BoxStream<'static, Delivery>;
}

/// The in-process [`Fanout`]: a broadcast channel per topic, holding up to `capacity` messages
/// for a subscriber that falls behind.
pub struct LocalFanout {
    capacity: usize,
    topics: Mutex<HashMap<String, broadcast::Sender<Arc<Value>>>>,
}

impl LocalFanout {
    /// A fan-out whose subscribers may fall `capacity` messages behind before missing some.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            topics: Mutex::default(),
        }
    }
}

impl Default for LocalFanout {
    /// 256 messages per topic: a subscriber's task forwards them as they come, so it falls that
    /// far behind only when starved; each topic's buffer is allocated whole, so a larger one
    /// costs every open session.
    fn default() -> Self {
        Self::new(256)
    }
}

impl Fanout for LocalFanout {
    fn publish(&self, topic: &str, message: Arc<Value>) {
        let mut topics = lock(&self.topics);
        if let Some(sender) = topics.get(topic)
            && sender.send(message).is_err()
        {
            // Nobody listens any more.
            topics.remove(topic);
        }
    }

    fn subscribe(&self, topic: &str) -> BoxStream<'static, Delivery> {
        let receiver = lock(&self.topics)
            .entry(topic.to_owned())
            .or_insert_with(|| broadcast::channel(self.capacity).0)
            .subscribe();
        Box::pin(futures::stream::unfold(
            receiver,
            |mut receiver| async move {
                let delivery = match receiver.recv().await {
                    Ok(message) => Delivery::Message(message),
                    Err(broadcast::error::RecvError::Lagged(missed)) => Delivery::Missed(missed),
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
                Some((delivery, receiver))
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use serde_json::json;

    #[tokio::test]
    async fn subscribers_get_their_topics_messages_in_order_and_hear_when_they_fell_behind() {
        let fanout = LocalFanout::new(2);
        let mut a = fanout.subscribe("s1");
        let mut other = fanout.subscribe("s2");
        fanout.publish("s0", Arc::new(json!("nobody")));
        for n in 1..=2 {
            fanout.publish("s1", Arc::new(json!(n)));
        }
        fanout.publish("s2", Arc::new(json!("two")));
        assert_eq!(a.next().await, Some(Delivery::Message(Arc::new(json!(1)))));
        assert_eq!(a.next().await, Some(Delivery::Message(Arc::new(json!(2)))));
        assert_eq!(
            other.next().await,
            Some(Delivery::Message(Arc::new(json!("two"))))
        );
        for n in 3..=5 {
            fanout.publish("s1", Arc::new(json!(n)));
        }
        assert_eq!(a.next().await, Some(Delivery::Missed(1)));
        assert_eq!(a.next().await, Some(Delivery::Message(Arc::new(json!(4)))));
    }
}
