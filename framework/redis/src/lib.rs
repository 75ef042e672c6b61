//! # agentry-redis
//!
//! [`RedisFanout`]: live events and control shared by the servers of one deployment through
//! Redis, as an [`agentry_fanout::Fanout`].
//!
//! Each published event goes to the server's own subscribers at once, and to Redis: appended
//! to the topic's stream `agentry:events:{topic}` (trimmed to about [`STREAM_LENGTH`] entries,
//! expiring [`STREAM_EXPIRY_SECS`] after its last event), and published on the channel
//! `agentry:live:{topic}` for the servers whose clients follow the topic. A subscriber gets the
//! stream as it stands (the chat so far, when it runs elsewhere), then what comes: an event
//! published while it subscribes may come twice, from the stream and live, and is for the
//! subscriber to drop (a front-end numbers its events). Signals go over
//! `agentry:control:{topic}` to the server that listens there.
//!
//! Events are written in the order they are published, by one task, a batch of whatever has
//! queued in one round trip. When Redis goes away, the server's own subscribers go on getting
//! its events, which wait to be written once it is back; the others get
//! [`Delivery::Interrupted`], and catch up by subscribing again.

use agentry_fanout::{Delivery, Fanout, FanoutError, Topics};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use redis::aio::{ConnectionManager, ConnectionManagerConfig, PubSubSink};
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// About how many events a topic's stream keeps (Redis trims it in whole blocks).
pub const STREAM_LENGTH: usize = 10_000;

/// How long a topic's stream outlives its last event, in seconds.
pub const STREAM_EXPIRY_SECS: u64 = 600;

/// How many deliveries a subscriber of this server may fall behind.
const CAPACITY: usize = 256;

/// How long a command to Redis may take, or a connection to it.
const TIMEOUT: Duration = Duration::from_secs(2);

/// The most events written in one round trip.
const BATCH: usize = 512;

/// The most events kept for Redis while it is away.
const BACKLOG: usize = 100_000;

/// A [`Fanout`] shared by several servers through Redis.
pub struct RedisFanout {
    shared: Arc<Shared>,
}

struct Shared {
    client: redis::Client,
    address: String,
    /// This server, as its own messages on the live channels name it (it skips them).
    origin: String,
    /// This server's subscribers, by topic.
    live: Topics,
    /// This server's listeners for signals, by topic.
    control: Topics,
    /// Commands (streams, publishing, signals).
    commands: ConnectionManager,
    /// Events on their way to Redis, in order.
    outgoing: mpsc::UnboundedSender<(String, Arc<Value>)>,
    /// The subscribing connection, while it holds.
    subscriber: tokio::sync::Mutex<Option<Subscriber>>,
}

/// The connection that receives the channels this server subscribed to.
struct Subscriber {
    sink: PubSubSink,
    channels: HashSet<String>,
}

impl RedisFanout {
    /// Connects to the Redis server at `url` (`redis://[user:password@]host:port[/db]`).
    pub async fn connect(url: &str) -> Result<Self, FanoutError> {
        let client = redis::Client::open(url).map_err(|e| FanoutError {
            address: "redis".to_owned(),
            message: format!("not a Redis URL: {e}"),
        })?;
        let address = address(&client);
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(2);
        let commands = ConnectionManager::new_with_config(client.clone(), config)
            .await
            .map_err(|e| failed(&address, &e))?;
        let (outgoing, queue) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            client,
            address,
            origin: uuid::Uuid::new_v4().simple().to_string(),
            live: Topics::new(CAPACITY),
            control: Topics::new(CAPACITY),
            commands,
            outgoing,
            subscriber: tokio::sync::Mutex::new(None),
        });
        tokio::spawn(write(Arc::downgrade(&shared), queue));
        Ok(Self { shared })
    }

    /// The broker (`redis://host:port/db`, without a password).
    pub fn address(&self) -> &str {
        &self.shared.address
    }
}

impl Fanout for RedisFanout {
    fn publish(&self, topic: &str, message: Arc<Value>) {
        self.shared
            .live
            .send(topic, Delivery::Message(message.clone()));
        // The writer lives as long as the fan-out.
        let _ = self.shared.outgoing.send((topic.to_owned(), message));
    }

    fn subscribe(&self, topic: &str) -> BoxStream<'static, Delivery> {
        // Taken first: nothing published from now on is missed while the stream is read.
        let live = self.shared.live.subscribe(topic);
        let (shared, topic) = (self.shared.clone(), topic.to_owned());
        let so_far = async move {
            match shared.catch_up(&topic).await {
                Ok(events) => events.into_iter().map(Delivery::Message).collect(),
                Err(error) => vec![Delivery::Interrupted(format!(
                    "live events from other servers are interrupted: {error}"
                ))],
            }
        };
        futures::stream::once(so_far)
            .flat_map(futures::stream::iter)
            .chain(live)
            .boxed()
    }

    fn signal(
        &self,
        topic: &str,
        message: Value,
    ) -> BoxFuture<'static, Result<usize, FanoutError>> {
        let shared = self.shared.clone();
        let channel = control_channel(topic);
        Box::pin(async move {
            let mut commands = shared.commands.clone();
            redis::cmd("PUBLISH")
                .arg(&channel)
                .arg(message.to_string())
                .query_async(&mut commands)
                .await
                .map_err(|e| failed(&shared.address, &e))
        })
    }

    fn ping(&self) -> BoxFuture<'static, Result<(), FanoutError>> {
        let shared = self.shared.clone();
        Box::pin(async move {
            let mut commands = shared.commands.clone();
            redis::cmd("PING")
                .query_async::<String>(&mut commands)
                .await
                .map(drop)
                .map_err(|e| failed(&shared.address, &e))
        })
    }

    fn listen(&self, topic: &str) -> Option<BoxStream<'static, Value>> {
        let signals = self.shared.control.subscribe(topic);
        // Dropped with the stream: the server stops receiving the topic's signals at once, so
        // that a signal sent after is heard by nobody.
        let leaving = Leave {
            shared: self.shared.clone(),
            topic: topic.to_owned(),
        };
        let (shared, channel) = (self.shared.clone(), control_channel(topic));
        // Joined at once, not when the stream is first polled: a signal sent right after this
        // returns is heard.
        let joined = tokio::spawn(async move {
            match shared.join(&channel).await {
                Ok(()) => true,
                Err(error) => {
                    tracing::warn!("signals cannot be received: {error}");
                    false
                }
            }
        });
        let signals = signals
            .take_while(|delivery| {
                std::future::ready(!matches!(delivery, Delivery::Interrupted(_)))
            })
            .filter_map(move |delivery| {
                let _listening = &leaving;
                std::future::ready(match delivery {
                    Delivery::Message(message) => Some(Arc::unwrap_or_clone(message)),
                    _ => None,
                })
            });
        let stream = futures::stream::once(async move {
            if joined.await.unwrap_or(false) {
                signals.boxed()
            } else {
                futures::stream::empty().boxed()
            }
        })
        .flatten()
        .boxed();
        Some(stream)
    }
}

impl Shared {
    /// Subscribes this server to `channel` (connecting anew when the connection was lost).
    async fn join(self: &Arc<Self>, channel: &str) -> Result<(), FanoutError> {
        let mut subscriber = self.subscriber.lock().await;
        if subscriber.is_none() {
            *subscriber = Some(self.subscribe_anew().await?);
        }
        if let Some(joined) = subscriber.as_mut()
            && !joined.channels.contains(channel)
        {
            joined
                .sink
                .subscribe(channel)
                .await
                .map_err(|e| failed(&self.address, &e))?;
            joined.channels.insert(channel.to_owned());
        }
        Ok(())
    }

    /// A new subscribing connection, its messages handed to the fan-out as they come.
    async fn subscribe_anew(self: &Arc<Self>) -> Result<Subscriber, FanoutError> {
        let pubsub = tokio::time::timeout(TIMEOUT, self.client.get_async_pubsub())
            .await
            .map_err(|_| FanoutError {
                address: self.address.clone(),
                message: "no answer".to_owned(),
            })?
            .map_err(|e| failed(&self.address, &e))?;
        let (sink, messages) = pubsub.split();
        tokio::spawn(receive(Arc::downgrade(self), messages));
        Ok(Subscriber {
            sink,
            channels: HashSet::new(),
        })
    }

    /// Subscribes this server to `topic`'s live channel, then reads the topic's stream.
    async fn catch_up(self: &Arc<Self>, topic: &str) -> Result<Vec<Arc<Value>>, FanoutError> {
        self.join(&live_channel(topic)).await?;
        let mut commands = self.commands.clone();
        let entries: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
            .arg(stream_key(topic))
            .arg("-")
            .arg("+")
            .query_async(&mut commands)
            .await
            .map_err(|e| failed(&self.address, &e))?;
        Ok(entries
            .into_iter()
            .flat_map(|(_, fields)| fields)
            .filter_map(|(_, body)| serde_json::from_str(&body).ok().map(Arc::new))
            .collect())
    }

    /// Takes in one message of a subscribed channel.
    async fn received(&self, message: &redis::Msg) {
        let channel = message.get_channel_name();
        let body = String::from_utf8_lossy(message.get_payload_bytes());
        if let Some(topic) = channel.strip_prefix(LIVE) {
            let Some((origin, event)) = body.split_once('\n') else {
                return;
            };
            if origin == self.origin {
                return;
            }
            let Ok(event) = serde_json::from_str(event) else {
                return;
            };
            if !self.live.send(topic, Delivery::Message(Arc::new(event))) {
                // Nobody here follows the topic any more.
                self.leave(channel).await;
            }
        } else if let Some(topic) = channel.strip_prefix(CONTROL)
            && let Ok(signal) = serde_json::from_str(&body)
            && !self
                .control
                .send(topic, Delivery::Message(Arc::new(signal)))
        {
            self.leave(channel).await;
        }
    }

    /// Unsubscribes this server from `channel`.
    async fn leave(&self, channel: &str) {
        let mut subscriber = self.subscriber.lock().await;
        if let Some(joined) = subscriber.as_mut()
            && joined.channels.remove(channel)
        {
            let _ = joined.sink.unsubscribe(channel).await;
        }
    }

    /// The subscribing connection is lost: subscribers here hear it, listeners stop.
    async fn lost(&self) {
        *self.subscriber.lock().await = None;
        let reason = format!(
            "live events from other servers are interrupted: the broker {} was lost",
            self.address
        );
        tracing::warn!("{reason}");
        self.live
            .send_to_all(&Delivery::Interrupted(reason.clone()));
        self.control.send_to_all(&Delivery::Interrupted(reason));
    }
}

/// Unsubscribes the server from a topic's signals, when dropped, unless another listener of
/// this server still listens there.
struct Leave {
    shared: Arc<Shared>,
    topic: String,
}

impl Drop for Leave {
    fn drop(&mut self) {
        let (shared, topic) = (self.shared.clone(), std::mem::take(&mut self.topic));
        // Run once the listener's own subscription is gone, outside this drop.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if !shared.control.has_subscribers(&topic) {
                    shared.leave(&control_channel(&topic)).await;
                }
            });
        }
    }
}

/// Hands each message of the subscribing connection to the fan-out, until the connection (or
/// the fan-out) is gone.
async fn receive(shared: std::sync::Weak<Shared>, mut messages: redis::aio::PubSubStream) {
    while let Some(message) = messages.next().await {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.received(&message).await;
    }
    if let Some(shared) = shared.upgrade() {
        shared.lost().await;
    }
}

/// Writes published events to Redis in order, a batch of whatever has queued per round trip,
/// until the fan-out is gone. A batch that fails is sent again (a second apart) until Redis
/// takes it, with what queued meanwhile behind it, so that the streams miss nothing of a short
/// outage; past [`BACKLOG`] events waiting, the oldest are dropped. A failure is logged once
/// until writes succeed again.
async fn write(
    shared: std::sync::Weak<Shared>,
    mut queue: mpsc::UnboundedReceiver<(String, Arc<Value>)>,
) {
    let mut waiting: VecDeque<(String, Arc<Value>)> = VecDeque::new();
    let mut failing = false;
    loop {
        if waiting.is_empty() {
            match queue.recv().await {
                Some(first) => waiting.push_back(first),
                None => return,
            }
        }
        while let Ok(more) = queue.try_recv() {
            waiting.push_back(more);
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if waiting.len() > BACKLOG {
            let dropped = waiting.len() - BACKLOG;
            waiting.drain(..dropped);
            tracing::warn!("{dropped} live events were dropped while the broker was away");
        }
        let batch = waiting.len().min(BATCH);
        let pipe = batch_pipeline(&shared.origin, waiting.iter().take(batch));
        let mut commands = shared.commands.clone();
        match pipe.query_async::<()>(&mut commands).await {
            Ok(()) => {
                waiting.drain(..batch);
                if failing {
                    failing = false;
                    tracing::info!("live events reach the broker {} again", shared.address);
                }
            }
            Err(error) => {
                if !failing {
                    failing = true;
                    tracing::warn!(
                        "live events cannot reach the broker {} ({error}): sent again once it is back",
                        shared.address
                    );
                }
                drop(shared);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// The commands that write `events` (topic, event) from server `origin`: each appended to its
/// topic's stream and published on its live channel, and each stream's expiry pushed back.
fn batch_pipeline<'a>(
    origin: &str,
    events: impl Iterator<Item = &'a (String, Arc<Value>)>,
) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    let mut topics = HashSet::new();
    for (topic, event) in events {
        let body = event.to_string();
        pipe.cmd("XADD")
            .arg(stream_key(topic))
            .arg("MAXLEN")
            .arg("~")
            .arg(STREAM_LENGTH)
            .arg("*")
            .arg("e")
            .arg(&body)
            .ignore();
        pipe.cmd("PUBLISH")
            .arg(live_channel(topic))
            .arg(format!("{origin}\n{body}"))
            .ignore();
        topics.insert(topic);
    }
    for topic in topics {
        pipe.cmd("EXPIRE")
            .arg(stream_key(topic))
            .arg(STREAM_EXPIRY_SECS)
            .ignore();
    }
    pipe
}

const LIVE: &str = "agentry:live:";
const CONTROL: &str = "agentry:control:";

fn stream_key(topic: &str) -> String {
    format!("agentry:events:{topic}")
}

fn live_channel(topic: &str) -> String {
    format!("{LIVE}{topic}")
}

fn control_channel(topic: &str) -> String {
    format!("{CONTROL}{topic}")
}

/// `redis://host:port/db` of `client`, without its password.
fn address(client: &redis::Client) -> String {
    let info = client.get_connection_info();
    let settings = info.redis_settings();
    let user = settings
        .username()
        .map(|user| format!("{user}@"))
        .unwrap_or_default();
    format!("redis://{user}{}/{}", info.addr(), settings.db())
}

fn failed(address: &str, error: &redis::RedisError) -> FanoutError {
    FanoutError {
        address: address.to_owned(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentry_tests::servers::Redis;
    use serde_json::json;

    async fn next(stream: &mut BoxStream<'static, Delivery>) -> Delivery {
        tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("a delivery within five seconds")
            .expect("the subscription goes on")
    }

    fn message(value: Value) -> Delivery {
        Delivery::Message(Arc::new(value))
    }

    /// The next numbered message after `seen`, dropping repeats as a front-end does (a late
    /// subscriber may get an event from the stream and again live).
    async fn next_new(stream: &mut BoxStream<'static, Delivery>, seen: &mut u64) -> Delivery {
        loop {
            let delivery = next(stream).await;
            if let Delivery::Message(value) = &delivery
                && let Some(number) = value.as_u64()
            {
                if number <= *seen {
                    continue;
                }
                *seen = number;
            }
            return delivery;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn servers_share_events_catch_up_from_the_stream_and_signal_the_one_listening() {
        let mut redis = Redis::start();
        let (a, b) = (
            RedisFanout::connect(&redis.url()).await.unwrap(),
            RedisFanout::connect(&redis.url()).await.unwrap(),
        );
        let mut on_a = a.subscribe("s");
        let mut on_b = b.subscribe("s");
        // B's subscription is in place once its catch-up (an empty stream) has been read:
        // publish a marker until it arrives.
        let (mut seen_on_a, mut seen_on_b) = (0, 0);
        a.publish("s", Arc::new(json!(1)));
        assert_eq!(next_new(&mut on_a, &mut seen_on_a).await, message(json!(1)));
        assert_eq!(next_new(&mut on_b, &mut seen_on_b).await, message(json!(1)));
        a.publish("s", Arc::new(json!(2)));
        a.publish("other", Arc::new(json!("elsewhere")));
        assert_eq!(next_new(&mut on_b, &mut seen_on_b).await, message(json!(2)));
        // A's own subscriber gets A's events once live, not again through Redis.
        assert_eq!(next_new(&mut on_a, &mut seen_on_a).await, message(json!(2)));
        let nothing = tokio::time::timeout(Duration::from_millis(300), on_a.next()).await;
        assert!(nothing.is_err(), "{nothing:?}");
        // A later subscriber on B gets the stream so far, then what follows.
        let mut late = b.subscribe("s");
        assert_eq!(next(&mut late).await, message(json!(1)));
        assert_eq!(next(&mut late).await, message(json!(2)));
        a.publish("s", Arc::new(json!(3)));
        let mut seen_late = 2;
        assert_eq!(next_new(&mut late, &mut seen_late).await, message(json!(3)));

        // A signal from B reaches A's listener, and only while A listens.
        let mut listening = a.listen("s").unwrap();
        let mut heard = 0;
        for _ in 0..50 {
            heard = b.signal("s", json!({"stop": true})).await.unwrap();
            if heard == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(heard, 1);
        let signal = tokio::time::timeout(Duration::from_secs(5), listening.next()).await;
        assert_eq!(signal.unwrap(), Some(json!({"stop": true})));
        assert_eq!(b.signal("nobody", json!("hello")).await.unwrap(), 0);
        // A listener that is dropped hears no more, and neither does its server.
        let brief = a.listen("t").unwrap();
        let heard_by = |count: usize| {
            let b = &b;
            async move {
                for _ in 0..50 {
                    if b.signal("t", json!("stop")).await.unwrap() == count {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                false
            }
        };
        assert!(heard_by(1).await);
        drop(brief);
        assert!(heard_by(0).await);

        // Redis goes away: B's subscribers hear it, A's listener ends, A's own subscribers
        // still get A's events, and a signal fails with the broker's address.
        redis.stop();
        // (After event 3, which B's first subscriber has not taken yet.)
        let interrupted = loop {
            match next(&mut on_b).await {
                Delivery::Message(_) => continue,
                other => break other,
            }
        };
        assert!(
            matches!(interrupted, Delivery::Interrupted(_)),
            "{interrupted:?}"
        );
        let ended = tokio::time::timeout(Duration::from_secs(5), listening.next()).await;
        assert_eq!(ended.unwrap(), None);
        a.publish("s", Arc::new(json!(4)));
        let mut seen = Vec::new();
        while seen.last() != Some(&message(json!(4))) {
            seen.push(next(&mut on_a).await);
        }
        // (3 was still to be taken; A's subscribers hear that other servers' events stopped.)
        assert_eq!(seen[0], message(json!(3)), "{seen:?}");
        let Err(error) = b.signal("s", json!("stop")).await else {
            panic!("no broker, no signal");
        };
        assert_eq!(
            error.address,
            format!("redis://127.0.0.1:{}/0", redis.port())
        );
        // Back (empty: it keeps nothing on disk): A writes what it published meanwhile, and a
        // new subscriber on B gets it, from the stream or live, then what follows.
        redis.restart();
        let mut again = b.subscribe("s");
        let mut seen_again = 3;
        assert_eq!(
            next_new(&mut again, &mut seen_again).await,
            message(json!(4))
        );
        a.publish("s", Arc::new(json!(5)));
        assert_eq!(
            next_new(&mut again, &mut seen_again).await,
            message(json!(5))
        );
    }

    #[tokio::test]
    async fn a_broker_that_cannot_be_reached_is_named_without_its_password() {
        let port = agentry_tests::servers::free_port();
        let Err(error) =
            RedisFanout::connect(&format!("redis://me:s3cret@127.0.0.1:{port}/2")).await
        else {
            panic!("nothing listens there");
        };
        assert_eq!(error.address, format!("redis://me@127.0.0.1:{port}/2"));
        assert!(!error.to_string().contains("s3cret"), "{error}");
        let Err(error) = RedisFanout::connect("http://example.invalid").await else {
            panic!("not a Redis URL");
        };
        assert!(error.message.contains("not a Redis URL"), "{error}");
    }
}
