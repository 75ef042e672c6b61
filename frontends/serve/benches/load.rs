//! Load bench of `agentry serve` (not a test): N concurrent sessions (100, then 1,000), each a
//! plain WebSocket client running a two-round tool chat (a tool call, then an answer) against the
//! project's mock model on 127.0.0.1 (OpenAI streaming SSE, as fast as it can). Prints, for each
//! N: chats per second, p50 / p99 latency from the model's chunk to the client's `turn:patch`,
//! and the process's resident memory per idle and per active session. The peer, measured in the
//! same run: a bare relay that streams the same mock answer over its own WebSocket with no agent
//! in between (the floor of chunk → client latency).
//!
//! `cargo bench -p agentry-serve --bench load` (`LOAD_SESSIONS=100,1000` to choose N; run one N
//! per process for memory figures untouched by the previous run). By default every chat starts
//! at once, a burst that saturates the machine (the clients and the mock share its cores with
//! the server), so latency there is mostly queueing; `LOAD_SPREAD_MS=T` spreads the chats'
//! starts evenly over T ms instead, an offered load of N / T chats per second with all N
//! sessions open (chats per second then counts that window too).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::admission::Admission;
use agentry::agent::Agent;
use agentry::model::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use agentry::permission::PermissionPolicy;
use agentry::provider::SimpleProvider;
use agentry::session::SqliteStore;
use agentry::tool::{ToolError, ToolKind, tool_fn};
use agentry_serve::ServeSettings;
use agentry_serve::live::SessionDefaults;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    /// Some text.
    text: String,
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

/// The process's resident memory, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// A tool call first; once the tool's result is in, an answer stamped with the time it is sent.
fn two_rounds(body: &Value) -> MockTurn {
    let answered = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "tool");
    if answered {
        MockTurn::Reply(MockReply::text(&format!("t={} done", now_micros())))
    } else {
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "Echo",
            json!({"text": "hi"}),
        ))
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index] as f64 / 1000.0
}

struct Run {
    chats_per_second: f64,
    latencies: Vec<u64>,
    idle_kib: f64,
    active_kib: f64,
}

async fn agentry_run(n: usize, spread: Duration, model_url: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let model = OpenAiModel::new(OpenAiSettings {
        display_name: "openai/gpt-4.1".to_owned(),
        model: "gpt-4.1".to_owned(),
        base_url: format!("{model_url}/v1"),
        api_key: Some("sk-bench".to_owned()),
        api: OpenAiApi::ChatCompletions,
        context_window: None,
        images: false,
        max_output_tokens: None,
        http: Default::default(),
    })
    .unwrap();
    let agent = Agent::builder()
        .model(Arc::new(model))
        .provider(SimpleProvider::new("bench", "").with_tool(tool_fn(
            "Echo",
            "Echoes.",
            ToolKind::Read,
            |input: Text, _| async move { Ok::<_, ToolError>(input.text) },
        )))
        .store(Arc::new(
            SqliteStore::open(dir.path().join("sessions.db")).unwrap(),
        ))
        .build()
        .unwrap();
    let settings = ServeSettings {
        defaults: SessionDefaults {
            cwd: dir.path().to_path_buf(),
            policy: PermissionPolicy::default(),
            max_message_bytes: 1 << 20,
            lease: agentry_serve::DEFAULT_LEASE,
        },
        admission: Admission::new(None, "127.0.0.1:0".parse().unwrap(), &[], &[]),
        models: None,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let listener = agentry_serve::without_delay(listener);
        axum::serve(listener, agentry_serve::router(agent, settings))
            .await
            .unwrap();
    });
    let http = reqwest::Client::new();
    let before = rss_kib();
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let created: Value = http
            .post(format!("http://{addr}/api/sessions"))
            .json(&json!({}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        ids.push(created["session_id"].as_str().unwrap().to_owned());
    }
    let idle = rss_kib();
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(idle));
    let sampler = {
        let peak = peak.clone();
        tokio::spawn(async move {
            loop {
                peak.fetch_max(rss_kib(), std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let started = Instant::now();
    let chats = ids.into_iter().enumerate().map(|(i, id)| async move {
        tokio::time::sleep(start_offset(i, n, spread)).await;
        let (mut socket, _) = connect(addr).await.unwrap();
        let send = json!({"event": "chat:send", "data": {"session_id": id, "message": "go"}});
        socket.send(Message::text(send.to_string())).await.unwrap();
        let mut latencies = Vec::new();
        while let Some(Ok(message)) = socket.next().await {
            let Message::Text(text) = message else {
                continue;
            };
            // Read as the relay's client reads: by looking for the stamp, not parsing every
            // frame (the clients share the server's two cores).
            let received = now_micros();
            if text.starts_with(r#"{"event":"chat:end""#) {
                let frame: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(frame["data"]["status"], "completed", "{frame}");
                break;
            }
            if let Some(sent) = stamp_after(&text, r#""text_delta":"t="#) {
                latencies.push(received.saturating_sub(sent));
            }
        }
        latencies
    });
    let mut latencies: Vec<u64> = futures::future::join_all(chats)
        .await
        .into_iter()
        .flatten()
        .collect();
    let elapsed = started.elapsed();
    sampler.abort();
    latencies.sort_unstable();
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    Run {
        chats_per_second: n as f64 / elapsed.as_secs_f64(),
        latencies,
        idle_kib: idle.saturating_sub(before) as f64 / n as f64,
        active_kib: peak.saturating_sub(before) as f64 / n as f64,
    }
}

/// The peer: a bare relay that, for each WebSocket message, streams the mock's answer (the same
/// two requests, the second stamped) and forwards each chunk's text as it comes.
async fn relay_run(n: usize, spread: Duration, model_url: &str) -> Vec<u64> {
    use axum::extract::ws::{Message as AxumMessage, WebSocketUpgrade};
    let url = format!("{model_url}/v1/chat/completions");
    let http = reqwest::Client::new();
    let app = axum::Router::new().route(
        "/ws",
        axum::routing::get(move |upgrade: WebSocketUpgrade| {
            let (url, http) = (url.clone(), http.clone());
            async move {
                upgrade
                    .read_buffer_size(4 * 1024)
                    .on_upgrade(move |mut socket| async move {
                        let Some(Ok(_)) = socket.recv().await else {
                            return;
                        };
                        for messages in [
                            json!([{"role": "user", "content": "go"}]),
                            json!([{"role": "tool", "content": "hi"}]),
                        ] {
                            let response = http
                            .post(&url)
                            .json(
                                &json!({"model": "gpt-4.1", "stream": true, "messages": messages}),
                            )
                            .send()
                            .await
                            .unwrap();
                            let mut body = response.bytes_stream();
                            while let Some(Ok(chunk)) = body.next().await {
                                let text = String::from_utf8_lossy(&chunk).into_owned();
                                if socket.send(AxumMessage::Text(text.into())).await.is_err() {
                                    return;
                                }
                            }
                        }
                        let _ = socket.send(AxumMessage::Text("END".into())).await;
                    })
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = agentry_serve::without_delay(listener);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let runs = (0..n).map(|i| async move {
        tokio::time::sleep(start_offset(i, n, spread)).await;
        let (mut socket, _) = connect(addr).await.unwrap();
        socket.send(Message::text("go")).await.unwrap();
        let mut latencies = Vec::new();
        while let Some(Ok(Message::Text(text))) = socket.next().await {
            if text.as_str() == "END" {
                break;
            }
            let received = now_micros();
            if let Some(sent) = stamp_after(&text, "t=") {
                latencies.push(received.saturating_sub(sent));
            }
        }
        latencies
    });
    let mut latencies: Vec<u64> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    latencies.sort_unstable();
    latencies
}

/// The microsecond stamp that follows `marker` in `text`, if any.
fn stamp_after(text: &str, marker: &str) -> Option<u64> {
    let (_, rest) = text.split_once(marker)?;
    rest.split(' ').next()?.parse().ok()
}

/// A load-generating client of `ws://ADDR/ws`, the same for agentry and the relay: a small read
/// buffer (each read zero-fills it whole) and no Nagle delay, so the clients, which share the
/// machine with the server, cost as little as they can.
async fn connect(
    addr: std::net::SocketAddr,
) -> Result<
    (
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
        tokio_tungstenite::tungstenite::handshake::client::Response,
    ),
    tokio_tungstenite::tungstenite::Error,
> {
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(4 * 1024);
    tokio_tungstenite::connect_async_with_config(format!("ws://{addr}/ws"), Some(config), true)
        .await
}

/// When chat `i` of `n` starts: evenly over `spread` (all at once when it is zero).
fn start_offset(i: usize, n: usize, spread: Duration) -> Duration {
    spread.mul_f64(i as f64 / n as f64)
}

/// The median of `values`.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::var("LOAD_SESSIONS")
        .unwrap_or_else(|_| "100,1000".to_owned())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let rounds: usize = std::env::var("LOAD_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let spread = Duration::from_millis(
        std::env::var("LOAD_SPREAD_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0),
    );
    let model = MockModelServer::start_responding(Box::new(two_rounds)).await;
    println!("agentry serve under load: two-round tool chats, one WebSocket client per session");
    match spread.as_millis() {
        0 => println!("all chats start at once (LOAD_SPREAD_MS=0)"),
        ms => println!("chat starts spread evenly over {ms} ms (LOAD_SPREAD_MS)"),
    }
    println!(
        "peer: a bare WebSocket relay of the same mock answers (no agent); medians of {rounds} rounds, alternating"
    );
    for n in sizes {
        let (mut rates, mut p50s, mut p99s, mut relay50s, mut relay99s) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut memory = None;
        for _ in 0..rounds {
            // agentry first: the first round's memory figures are read before the relay has
            // touched the heap.
            let run = agentry_run(n, spread, &model.url()).await;
            let relay = relay_run(n, spread, &model.url()).await;
            rates.push(run.chats_per_second);
            p50s.push(percentile(&run.latencies, 0.5));
            p99s.push(percentile(&run.latencies, 0.99));
            relay50s.push(percentile(&relay, 0.5));
            relay99s.push(percentile(&relay, 0.99));
            memory.get_or_insert((run.idle_kib, run.active_kib));
        }
        let (p50, p99) = (median(p50s), median(p99s));
        let (relay50, relay99) = (median(relay50s), median(relay99s));
        let (idle, active) = memory.unwrap_or_default();
        println!("N = {n}");
        println!("  chats per second            {:.1}", median(rates));
        println!(
            "  chunk -> client p50 / p99   {p50:.2} / {p99:.2} ms   (relay {relay50:.2} / {relay99:.2} ms; ratio {:.2} / {:.2})",
            p50 / relay50,
            p99 / relay99
        );
        println!("  RSS per idle session        {idle:.1} KiB");
        println!("  RSS per active session      {active:.1} KiB (peak, clients included)");
        println!("  targets: p99 < 50 ms at 1,000 sessions; idle session < 50 KiB");
    }
}
