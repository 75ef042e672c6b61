//! Load bench of `agentry serve` (not a test): N concurrent sessions (100, then 1,000), each a
//! plain WebSocket client running a two-round tool chat (a tool call, then an answer) against the
//! project's mock model on 127.0.0.1 (OpenAI streaming SSE, as fast as it can). Prints, for each
//! N: chats per second, p50 / p99 latency from the model's chunk to the client's `turn:patch`,
//! and the process's resident memory per idle and per active session. The peer, measured in the
//! same run: a bare relay that streams the same mock answer over its own WebSocket with no agent
//! in between (the floor of chunk → client latency).
//!
//! `cargo bench -p agentry-serve --bench load` (`LOAD_SESSIONS=100,1000` to choose N; run one N
//! per process for memory figures untouched by the previous run). The server side (instances,
//! relay, OTLP exporter) runs on the first half of the cores, the load side (clients, mock
//! model, OTLP receiver) on the rest; `LOAD_CORES=shared` runs both on every core. By default
//! every chat starts at once, a burst that saturates the server's cores, so latency there is
//! mostly queueing; `LOAD_SPREAD_MS=T` spreads the chats' starts evenly over T ms instead, an
//! offered load of N / T chats per second with all N sessions open (chats per second then
//! counts that window too). Layout (f) is (a) observed as an operator would: chats counted in
//! the metrics and traced over OTLP to a receiver on loopback; (a) counts and traces nothing,
//! so (f) against (a) is what observation costs. With both, (a) also runs a second time each
//! round, a control: how far apart two runs of one layout fall on this machine, which (f)'s
//! ratios are read against. The layouts take turns going first. Latency percentiles printed
//! are over every round's samples pooled; ratios are medians of each round's own ratios.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod cores;
mod deploy;
mod failover;
mod observe;

use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use cores::Sides;
use deploy::{Backing, Layout, deploy};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// The bench tool's input.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Text {
    /// Some text.
    text: String,
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

/// The CPU time the whole process (server, clients and mock model) has used, its threads that
/// ended included, to the microsecond (`getrusage`; `/proc/self/stat` counts 10 ms ticks, a
/// tenth of a small run's time per chat).
fn cpu_time() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).unwrap();
    let micros = |time: nix::sys::time::TimeVal| {
        Duration::from_secs(time.tv_sec() as u64) + Duration::from_micros(time.tv_usec() as u64)
    };
    micros(usage.user_time()) + micros(usage.system_time())
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
    /// CPU milliseconds per chat, the whole process's (clients and mock model included).
    cpu_ms_per_chat: f64,
    /// Busy milliseconds of the server side's cores per chat.
    server_ms_per_chat: f64,
    /// How busy each side's cores were: server, load (0 to 1).
    busy: (f64, f64),
    latencies: Vec<u64>,
    idle_kib: f64,
    active_kib: f64,
    /// PostgreSQL statements and explicit transactions per chat, for a shared layout.
    postgres_per_chat: Option<(f64, f64)>,
    /// Redis commands per chat, for a shared layout.
    redis_per_chat: Option<f64>,
}

/// `n` chats in `layout`, its instances on the `server` runtime.
async fn agentry_run(
    layout: Layout,
    n: usize,
    spread: Duration,
    model_url: &str,
    backing: Option<&Backing>,
    sides: &Sides,
) -> Run {
    let server = &sides.server;
    let _observing =
        (layout == Layout::Observed && observe::observes("traces")).then(observe::Observing::start);
    let before = rss_kib();
    let shared = layout.shared().then(|| {
        backing
            .expect("a shared layout needs PostgreSQL and Redis")
            .fresh()
    });
    let lease = agentry_serve::DEFAULT_LEASE;
    let deployment = server
        .spawn(deploy(layout, model_url.to_owned(), shared, lease))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        ids.push(create_session(&http, deployment.addresses[layout.owner(i)]).await);
    }
    let idle = rss_kib();
    let counted = |backing: &Backing, database: &str| {
        backing.reset_statements(database);
        backing.redis_commands()
    };
    let start_counts = match (backing, &deployment.database) {
        (Some(backing), Some(database)) => Some(counted(backing, database)),
        _ => None,
    };
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
    let cpu_before = cpu_time();
    let busy_before = sides.cores.busy();
    let chats = ids.into_iter().enumerate().map(|(i, id)| {
        let owner = deployment.addresses[layout.owner(i)];
        let follower = deployment.addresses[layout.follower(i)];
        let http = http.clone();
        async move {
            tokio::time::sleep(start_offset(i, n, spread)).await;
            follow_chat(&http, owner, follower, &id).await
        }
    });
    let mut latencies: Vec<u64> = futures::future::join_all(chats)
        .await
        .into_iter()
        .flatten()
        .collect();
    let elapsed = started.elapsed();
    let cpu = cpu_time() - cpu_before;
    let busy = sides.cores.busy();
    let (server_ms, load_ms) = (
        busy.server_ms - busy_before.server_ms,
        busy.load_ms - busy_before.load_ms,
    );
    sampler.abort();
    latencies.sort_unstable();
    let peak = peak.load(std::sync::atomic::Ordering::Relaxed);
    let database = deployment.database.clone();
    server.spawn(deployment.stop()).await.unwrap();
    let (postgres_per_chat, redis_per_chat) = match (backing, &database, start_counts) {
        (Some(backing), Some(database), Some(commands)) => {
            let (statements, transactions) = backing.postgres_work(database);
            let per_chat = |count: u64| count as f64 / n as f64;
            (
                Some((per_chat(statements), per_chat(transactions))),
                Some(per_chat(backing.redis_commands().saturating_sub(commands))),
            )
        }
        _ => (None, None),
    };
    Run {
        chats_per_second: n as f64 / elapsed.as_secs_f64(),
        cpu_ms_per_chat: cpu.as_secs_f64() * 1000.0 / n as f64,
        server_ms_per_chat: server_ms / n as f64,
        busy: {
            let (server_cores, load_cores) = sides.cores.counts();
            let elapsed_ms = elapsed.as_secs_f64() * 1000.0;
            (
                server_ms / (elapsed_ms * server_cores as f64),
                load_ms / (elapsed_ms * load_cores as f64),
            )
        },
        latencies,
        idle_kib: idle.saturating_sub(before) as f64 / n as f64,
        active_kib: peak.saturating_sub(before) as f64 / n as f64,
        postgres_per_chat,
        redis_per_chat,
    }
}

/// A new session on the instance at `address`: its id.
pub async fn create_session(http: &reqwest::Client, address: std::net::SocketAddr) -> String {
    let created: Value = http
        .post(format!("http://{address}/api/sessions"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    created["session_id"].as_str().unwrap().to_owned()
}

/// One chat of session `id`, run by `owner` and followed by a client of `follower`: the
/// client sends `chat:send` itself when the two are one; otherwise it subscribes, and the chat
/// is started on the owner through the REST API. The chunk → client latencies it saw.
async fn follow_chat(
    http: &reqwest::Client,
    owner: std::net::SocketAddr,
    follower: std::net::SocketAddr,
    id: &str,
) -> Vec<u64> {
    let (mut socket, _) = connect(follower).await.unwrap();
    if owner == follower {
        let send = json!({"event": "chat:send", "data": {"session_id": id, "message": "go"}});
        socket.send(Message::text(send.to_string())).await.unwrap();
    } else {
        let subscribe = json!({"event": "session:subscribe", "data": {"session_id": id}});
        socket
            .send(Message::text(subscribe.to_string()))
            .await
            .unwrap();
        while let Some(Ok(message)) = socket.next().await {
            if let Message::Text(text) = message
                && text.starts_with(r#"{"event":"session:subscribed""#)
            {
                break;
            }
        }
        let request = http
            .post(format!("http://{owner}/api/sessions/{id}/chat"))
            .json(&json!({"message": "go"}));
        tokio::spawn(async move { request.send().await });
    }
    let mut latencies = Vec::new();
    while let Some(Ok(message)) = socket.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        // Read as the relay's client reads: by looking for the stamp, not parsing every frame
        // (the clients share the server's two cores).
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
}

/// The peer: a bare relay on the `server` runtime that, for each WebSocket message, streams the
/// mock's answer (the same two requests, the second stamped) and forwards each chunk's text as
/// it comes.
async fn relay_run(n: usize, spread: Duration, model_url: &str, sides: &Sides) -> Vec<u64> {
    let server = &sides.server;
    let relay = server.spawn(relay(model_url.to_owned())).await.unwrap();
    let addr = relay.address;
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
    // Its connections freed for the next run.
    server.spawn(relay.stop()).await.unwrap();
    latencies
}

/// The relay, listening on a free port of 127.0.0.1 on the current runtime.
async fn relay(model_url: String) -> deploy::Instance {
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
    deploy::Instance::serve(listener, app)
}

/// The microsecond stamp that follows `marker` in `text`, if any.
fn stamp_after(text: &str, marker: &str) -> Option<u64> {
    let (_, rest) = text.split_once(marker)?;
    rest.split(' ').next()?.parse().ok()
}

/// A load-generating client of `ws://ADDR/ws`, the same for agentry and the relay: a small read
/// buffer (each read zero-fills it whole) and no Nagle delay, so the clients, which share the
/// machine with the server, cost as little as they can.
pub async fn connect(
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

fn main() {
    let cores = cores::Cores::of_this_process();
    // The load side's runtime and every thread this one starts from now on (the mock model's,
    // the OTLP receiver's) inherit this.
    cores.pin_to_load();
    let server = cores.server_runtime();
    let sides = Sides {
        cores: cores.clone(),
        server: server.handle().clone(),
    };
    cores.load_runtime().block_on(bench(&sides));
}

/// The whole bench, the instances and the relay on the server side.
async fn bench(sides: &Sides) {
    let cores = &sides.cores;
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
    let chosen = std::env::var("LOAD_LAYOUTS").unwrap_or_else(|_| "a,b,c,d,e,f".to_owned());
    let layouts: Vec<Layout> = Layout::ALL
        .into_iter()
        .filter(|layout| {
            chosen
                .split(',')
                .any(|l| l.trim().starts_with(layout.letter()))
        })
        .collect();
    let backing = layouts
        .iter()
        .any(|layout| layout.shared())
        .then(Backing::start);
    let traces = layouts
        .contains(&Layout::Observed)
        .then(|| observe::Traces::install(cores));
    let model = MockModelServer::start_responding(Box::new(two_rounds)).await;
    println!("agentry serve under load: two-round tool chats, one WebSocket client per session");
    println!("{}", cores.describe());
    match spread.as_millis() {
        0 => println!("all chats start at once (LOAD_SPREAD_MS=0)"),
        ms => println!("chat starts spread evenly over {ms} ms (LOAD_SPREAD_MS)"),
    }
    println!(
        "peer: a bare WebSocket relay of the same mock answers (no agent); {rounds} rounds, the layouts taking turns to go first; latency percentiles over all rounds' samples, ratios the medians of each round's"
    );
    println!(
        "shared layouts: one throwaway PostgreSQL and Redis on loopback; every instance in this process"
    );
    for n in sizes {
        let backing = backing.as_ref();
        report(n, rounds, spread, &layouts, &model.url(), backing, sides).await;
    }
    if let Some(traces) = traces {
        let received = traces.shutdown().spans().len();
        println!("spans the OTLP receiver got from (f): {received}");
    }
    if let Some(backing) = &backing {
        println!("catch-up of a subscriber on another instance, against the stream's length");
        for length in [100, 1_000, 10_000] {
            let times: Vec<f64> = futures::stream::iter(0..rounds)
                .then(|_| failover::catch_up(backing, length))
                .map(|time| time.as_secs_f64() * 1000.0)
                .collect()
                .await;
            println!("  {length:>6} events   {:.1} ms", median(times));
        }
        let lease = Duration::from_secs(2);
        let failover = failover::failover(backing, lease).await;
        println!(
            "failover (owner dies -> interrupted seen on the other), lease {} s: {:.2} s   (target: under lease + 5 s)",
            lease.as_secs(),
            failover.as_secs_f64()
        );
    }
}

/// What one layout measured over the rounds.
#[derive(Default)]
struct Figures {
    /// Chats per second, one a round.
    rates: Vec<f64>,
    /// CPU milliseconds per chat, one a round.
    cpus: Vec<f64>,
    /// Busy milliseconds of the server side's cores per chat, one a round.
    server_cpus: Vec<f64>,
    /// How busy each side's cores were (server, load), one a round.
    busy: Vec<(f64, f64)>,
    /// Every round's chunk -> client latencies, pooled (a round of 100 chats has too few for
    /// its own p99).
    latencies: Vec<u64>,
    /// Each round's own chunk -> client p50 and p99, in ms.
    round_percentiles: Vec<(f64, f64)>,
    memory: Option<(f64, f64)>,
    postgres: Option<(f64, f64)>,
    redis: Option<f64>,
}

impl Figures {
    fn add(&mut self, run: Run) {
        self.rates.push(run.chats_per_second);
        self.cpus.push(run.cpu_ms_per_chat);
        self.server_cpus.push(run.server_ms_per_chat);
        self.busy.push(run.busy);
        self.round_percentiles.push((
            percentile(&run.latencies, 0.5),
            percentile(&run.latencies, 0.99),
        ));
        self.latencies.extend(run.latencies);
        // The first round's memory: read before later runs have grown the heap.
        self.memory.get_or_insert((run.idle_kib, run.active_kib));
        self.postgres = self.postgres.or(run.postgres_per_chat);
        self.redis = self.redis.or(run.redis_per_chat);
    }

    /// Pooled chunk -> client p50 and p99, in ms (once the rounds are over and the latencies
    /// sorted).
    fn percentiles(&self) -> (f64, f64) {
        (
            percentile(&self.latencies, 0.5),
            percentile(&self.latencies, 0.99),
        )
    }

    /// Against `base`, measured in the same rounds: the medians of each round's ratios (a
    /// ratio of two runs of one round, side by side in time, is spared the drift between
    /// rounds).
    fn against(&self, base: &Figures) -> Ratios {
        let paired = |ours: &[f64], theirs: &[f64]| {
            median(ours.iter().zip(theirs).map(|(o, t)| o / t).collect())
        };
        let (p50s, p99s): (Vec<f64>, Vec<f64>) = self.round_percentiles.iter().copied().unzip();
        let (base50s, base99s): (Vec<f64>, Vec<f64>) =
            base.round_percentiles.iter().copied().unzip();
        Ratios {
            p50: paired(&p50s, &base50s),
            p99: paired(&p99s, &base99s),
            rate: paired(&self.rates, &base.rates),
            cpu: paired(&self.cpus, &base.cpus),
            server_cpu: paired(&self.server_cpus, &base.server_cpus),
        }
    }

    /// The medians of how busy each side's cores were: server, load.
    fn busy(&self) -> (f64, f64) {
        let (server, load) = self.busy.iter().copied().unzip();
        (median(server), median(load))
    }
}

/// One layout's figures against another's, as ratios.
struct Ratios {
    p50: f64,
    p99: f64,
    /// Chats per second.
    rate: f64,
    /// The whole process's CPU time per chat.
    cpu: f64,
    /// The server side's cores' busy time per chat.
    server_cpu: f64,
}

impl Ratios {
    /// Prints the ratios other than latency's.
    fn print_costs(&self, split: bool) {
        println!("    chats per second            {:.2} x (a)", self.rate);
        println!("    CPU per chat                {:.2} x (a)", self.cpu);
        if split {
            println!(
                "    server cores' time per chat {:.2} x (a)",
                self.server_cpu
            );
        }
    }
}

/// Runs `rounds` rounds of `n` chats in each of `layouts` (and the relay), and prints the
/// medians, each layout's latencies also as ratios to (a)'s when (a) ran. With (a) and (f), (a)
/// runs a second time each round, a control: (a) against itself is how far apart two runs of
/// one layout fall here, the noise (f)'s ratios are read against.
async fn report(
    n: usize,
    rounds: usize,
    spread: Duration,
    layouts: &[Layout],
    model_url: &str,
    backing: Option<&Backing>,
    sides: &Sides,
) {
    let base = layouts.iter().position(|layout| *layout == Layout::Local);
    let control = base.filter(|_| layouts.contains(&Layout::Observed));
    // The layouts run in turn, the control last; each round starts one later in that order,
    // so that no layout always runs first after the relay (or right after another).
    let turns: Vec<Layout> = layouts
        .iter()
        .copied()
        .chain(control.map(|_| Layout::Local))
        .collect();
    let mut figures: Vec<Figures> = turns.iter().map(|_| Figures::default()).collect();
    let mut relay = Vec::new();
    for round in 0..rounds {
        for turn in 0..turns.len() {
            let at = (round + turn) % turns.len();
            let run = agentry_run(turns[at], n, spread, model_url, backing, sides).await;
            figures[at].add(run);
        }
        relay.extend(relay_run(n, spread, model_url, sides).await);
    }
    relay.sort_unstable();
    let (relay50, relay99) = (percentile(&relay, 0.5), percentile(&relay, 0.99));
    println!("N = {n}   (relay: chunk -> client p50 / p99 {relay50:.2} / {relay99:.2} ms)");
    for figures in &mut figures {
        figures.latencies.sort_unstable();
    }
    let again = control.and_then(|_| figures.pop());
    let base = base.map(|at| &figures[at]);
    let split = sides.cores.split();
    for (layout, figures) in layouts.iter().zip(&figures) {
        let (p50, p99) = figures.percentiles();
        let (idle, active) = figures.memory.unwrap_or_default();
        println!("  {}", layout.name());
        println!(
            "    chats per second            {:.1}",
            median(figures.rates.clone())
        );
        println!(
            "    CPU per chat                {:.3} ms (the whole process)",
            median(figures.cpus.clone())
        );
        if split {
            let (server, load) = figures.busy();
            println!(
                "    server cores' time per chat {:.3} ms (busy {:.0}% of the run; load cores {:.0}%)",
                median(figures.server_cpus.clone()),
                server * 100.0,
                load * 100.0
            );
        }
        print!("    chunk -> client p50 / p99   {p50:.2} / {p99:.2} ms");
        let ratios = base.filter(|_| *layout != Layout::Local);
        match ratios.map(|base| figures.against(base)) {
            Some(ratios) => {
                println!("   ({:.2} / {:.2} x (a))", ratios.p50, ratios.p99);
                if *layout == Layout::Observed {
                    ratios.print_costs(split);
                }
            }
            None => println!(),
        }
        println!("    RSS per idle session        {idle:.1} KiB");
        println!("    RSS per active session      {active:.1} KiB (peak, clients included)");
        if let Some((statements, transactions)) = figures.postgres {
            println!(
                "    PostgreSQL per chat         {statements:.1} statements ({transactions:.1} explicit transactions)"
            );
        }
        if let Some(commands) = figures.redis {
            println!("    Redis commands per chat     {commands:.1}");
        }
    }
    if let (Some(base), Some(again)) = (base, again) {
        let ratios = again.against(base);
        println!("  control: (a) against itself, run once more each round (the noise)");
        println!(
            "    chunk -> client p50 / p99   {:.2} / {:.2} x (a)",
            ratios.p50, ratios.p99
        );
        ratios.print_costs(split);
    }
    println!(
        "  targets: p99 < 50 ms at 1,000 sessions; idle session < 50 KiB; (d)'s p99 within 2x (a)'s at 100; (f) within 5% of (a); store statements per chat <= model rounds + 3 (2 rounds here; a client on another instance reads the session besides)"
    );
}
