//! # agentry-fanout
//!
//! Live-event fan-out for servers of agents: a front-end publishes each session's events under
//! a topic (the session's id), and every connection subscribed to that topic receives them, in
//! order.
//!
//! [`LocalFanout`] does it inside one process. Several servers behind a load balancer share
//! one through a broker instead (`agentry-redis`'s `RedisFanout`), with the sessions in a shared
//! [`SessionStore`](agentry::session::SessionStore): a subscriber on any server gets the events
//! of a chat running on another, and a server can signal the one running a session's chat (to
//! stop it, or to answer its permission question).

mod topics;

pub use topics::Topics;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde_json::Value;
use std::sync::Arc;

/// What a subscriber receives: a message, or why it may have missed some.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// The next message.
    Message(Arc<Value>),
    /// This many messages were dropped because the subscriber fell behind; it should catch up
    /// from the store.
    Missed(u64),
    /// Messages from other servers stopped coming (the broker went away): those published
    /// meanwhile are missed, and subscribing again catches up once it is back.
    Interrupted(String),
}

/// Why a signal could not be sent.
#[derive(Debug, Clone, thiserror::Error)]
#[error("broker {address}: {message}")]
pub struct FanoutError {
    /// The broker (without a password).
    pub address: String,
    /// What failed.
    pub message: String,
}

/// Delivers messages published under a topic to its subscribers.
pub trait Fanout: Send + Sync {
    /// Publishes `message` to the current subscribers of `topic`.
    fn publish(&self, topic: &str, message: Arc<Value>);
    /// The messages published under `topic`: those a broker still keeps of the topic's
    /// recent past (none in process), then those published from now on.
    fn subscribe(&self, topic: &str) -> BoxStream<'static, Delivery>;
    /// Sends `message` to what [`listen`](Self::listen)s on `topic` in other processes (the
    /// server running a session's chat); how many heard it. The in-process fan-out reaches no
    /// other process: none.
    fn signal(
        &self,
        topic: &str,
        message: Value,
    ) -> BoxFuture<'static, Result<usize, FanoutError>> {
        let _ = (topic, message);
        Box::pin(std::future::ready(Ok(0)))
    }
    /// Whether the broker answers (for a server's readiness check); the in-process fan-out
    /// always does.
    fn ping(&self) -> BoxFuture<'static, Result<(), FanoutError>> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// What other processes [`signal`](Self::signal) on `topic` from now on, until the broker
    /// is lost; `None` for a fan-out that reaches no other process.
    fn listen(&self, topic: &str) -> Option<BoxStream<'static, Value>> {
        let _ = topic;
        None
    }
}

/// The in-process [`Fanout`]: a broadcast channel per topic, holding up to `capacity` messages
/// for a subscriber that falls behind.
pub struct LocalFanout {
    topics: Topics,
}

impl LocalFanout {
    /// A fan-out whose subscribers may fall `capacity` messages behind before missing some.
    pub fn new(capacity: usize) -> Self {
        Self {
            topics: Topics::new(capacity),
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
        self.topics.send(topic, Delivery::Message(message));
    }

    fn subscribe(&self, topic: &str) -> BoxStream<'static, Delivery> {
        self.topics.subscribe(topic)
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

    #[tokio::test]
    async fn the_in_process_fanout_reaches_no_other_process() {
        let fanout = LocalFanout::default();
        assert!(fanout.listen("s1").is_none());
        assert_eq!(fanout.signal("s1", json!("stop")).await.unwrap(), 0);
    }
}
