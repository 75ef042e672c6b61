//! [`Topics`]: the in-process delivery under every fan-out, a broadcast channel per topic.

use super::Delivery;
use agentry::sync::lock;
use futures::stream::BoxStream;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::broadcast;

/// A broadcast channel per topic, holding up to `capacity` deliveries for a subscriber that
/// falls behind (it then gets [`Delivery::Missed`]); a topic nobody listens to is forgotten.
pub struct Topics {
    capacity: usize,
    senders: Mutex<HashMap<String, broadcast::Sender<Delivery>>>,
}

impl Topics {
    /// Topics whose subscribers may fall `capacity` deliveries behind.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            senders: Mutex::default(),
        }
    }

    /// Delivers `delivery` to the subscribers of `topic`; whether there were any.
    pub fn send(&self, topic: &str, delivery: Delivery) -> bool {
        let mut senders = lock(&self.senders);
        let Some(sender) = senders.get(topic) else {
            return false;
        };
        if sender.send(delivery).is_err() {
            // Nobody listens any more.
            senders.remove(topic);
            return false;
        }
        true
    }

    /// Delivers `delivery` to the subscribers of every topic.
    pub fn send_to_all(&self, delivery: &Delivery) {
        lock(&self.senders).retain(|_, sender| sender.send(delivery.clone()).is_ok());
    }

    /// Whether `topic` has subscribers.
    pub fn has_subscribers(&self, topic: &str) -> bool {
        lock(&self.senders)
            .get(topic)
            .is_some_and(|sender| sender.receiver_count() > 0)
    }

    /// What is delivered under `topic` from now on.
    pub fn subscribe(&self, topic: &str) -> BoxStream<'static, Delivery> {
        let receiver = lock(&self.senders)
            .entry(topic.to_owned())
            .or_insert_with(|| broadcast::channel(self.capacity).0)
            .subscribe();
        Box::pin(futures::stream::unfold(
            receiver,
            |mut receiver| async move {
                let delivery = match receiver.recv().await {
                    Ok(delivery) => delivery,
                    Err(broadcast::error::RecvError::Lagged(missed)) => Delivery::Missed(missed),
                    Err(broadcast::error::RecvError::Closed) => return None,
                };
                Some((delivery, receiver))
            },
        ))
    }
}
