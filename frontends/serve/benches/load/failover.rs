//! Two figures of the shared layouts: how long a subscriber takes to catch up from a session's
//! Redis stream, against the stream's length; and how long after its instance dies a running
//! chat is seen interrupted on another instance.

use super::deploy::{Backing, Instance, start_instance};
use agentry_fanout::{Delivery, Fanout};
use agentry_postgres::PostgresStore;
use agentry_redis::RedisFanout;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// The time a new subscriber on another server takes to receive a stream of `length` events
/// (chunk-sized `turn:patch` events, as a chat's are).
pub async fn catch_up(backing: &Backing, length: usize) -> Duration {
    let topic = format!("catch-up-{length}-{}", super::now_micros());
    let (writer, reader) = (
        RedisFanout::connect(&backing.redis.url()).await.unwrap(),
        RedisFanout::connect(&backing.redis.url()).await.unwrap(),
    );
    for sequence in 1..=length {
        writer.publish(
            &topic,
            Arc::new(json!({"event": "turn:patch", "data": {"sequence": sequence,
                "patch_type": "add_content", "data": {"type": "text", "text_delta": "word "}}})),
        );
    }
    // Written: a subscriber on the writer's side sees the last event once Redis has it.
    let key = format!("agentry:events:{topic}");
    while stream_length(backing, &key) < length {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let mut subscription = reader.subscribe(&topic);
    let mut received = 0;
    while received < length {
        match subscription.next().await {
            Some(Delivery::Message(_)) => received += 1,
            Some(_) => {}
            None => break,
        }
    }
    started.elapsed()
}

fn stream_length(backing: &Backing, key: &str) -> usize {
    let out = std::process::Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &backing.redis.port().to_string()])
        .args(["XLEN", key])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// Two instances with leases of `lease`: a chat runs on the first (its own runtime), whose
/// client is on the second; the first dies (its runtime dropped, as a killed process's tasks
/// end); the time until the second's client hears the chat end interrupted.
pub async fn failover(backing: &Backing, lease: Duration) -> Duration {
    let endless = MockReply {
        pause_before_last: Some(Duration::from_secs(600)),
        ..MockReply::text("Never finished.")
    };
    let model = MockModelServer::start_blocking([MockTurn::Reply(endless)]);
    let (model_url, database, redis) = (
        model.url(),
        backing.postgres.database(),
        backing.redis.url(),
    );
    let folder = tempfile::tempdir().unwrap();
    let cwd = folder.path().to_path_buf();
    // The instance that dies, on a runtime of its own.
    let (kill, killed) = tokio::sync::oneshot::channel::<()>();
    let (ready, address) = tokio::sync::oneshot::channel();
    let owner = {
        let (model_url, database, redis, cwd) = (
            model_url.clone(),
            database.clone(),
            redis.clone(),
            cwd.clone(),
        );
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let instance = open(&model_url, &database, &redis, &cwd, lease).await;
                let _ = ready.send(instance.address);
                let _ = killed.await;
                // Dropped with the runtime, unstopped: as a killed process.
                std::mem::forget(instance);
            });
            runtime.shutdown_background();
        })
    };
    let owner_address = address.await.unwrap();
    let other = open(&model_url, &database, &redis, &cwd, lease).await;
    let other_address = other.address;
    let http = reqwest::Client::new();
    let id = super::create_session(&http, owner_address).await;
    let (mut socket, _) = super::connect(other_address).await.unwrap();
    let subscribe = json!({"event": "session:subscribe", "data": {"session_id": id}});
    socket
        .send(Message::text(subscribe.to_string()))
        .await
        .unwrap();
    let request = http
        .post(format!("http://{owner_address}/api/sessions/{id}/chat"))
        .json(&json!({"message": "go"}));
    tokio::spawn(async move { request.send().await });
    while model.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = kill.send(());
    let died = Instant::now();
    owner.join().unwrap();
    while let Some(Ok(message)) = socket.next().await {
        if let Message::Text(text) = message
            && text.starts_with(r#"{"event":"chat:end""#)
        {
            let frame: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(frame["data"]["status"], "interrupted", "{frame}");
            let failover = died.elapsed();
            drop(socket);
            other.stop().await;
            return failover;
        }
    }
    panic!("the chat's end was never heard");
}

/// An instance on the shared store and broker.
async fn open(
    model_url: &str,
    database: &str,
    redis: &str,
    cwd: &std::path::Path,
    lease: Duration,
) -> Instance {
    let store = Arc::new(PostgresStore::open(database).unwrap());
    let fanout: Arc<dyn Fanout> = Arc::new(RedisFanout::connect(redis).await.unwrap());
    start_instance(model_url, store, fanout, cwd, lease, false).await
}
