//! `agentry acp` measured from outside, as an editor sees it, over raw JSON-RPC on stdio:
//!
//! - start-up: spawn → `initialize` answered, and → first `session/new` answered (median of 30);
//! - streaming: a turn whose mock model streams 50,000 one-character chunks: chunks per second
//!   delivered to the client, and the model's last byte → the `session/prompt` response
//!   (median of 5);
//! - idle memory: resident set after `initialize` and one session.
//!
//! Run with `cargo bench -p agentry-cli --bench acp`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Lines, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

const STARTUP_RUNS: usize = 30;
const STREAM_RUNS: usize = 5;
const CHUNKS: usize = 50_000;

/// An `agentry acp` process and its pipes.
struct Agent {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Agent {
    fn spawn(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = sb.agentry(&[&["acp"], args].concat());
        command
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    /// Sends a request; calls `on_message` for each message until its response, which it returns.
    fn request(
        &mut self,
        method: &str,
        params: Value,
        mut on_message: impl FnMut(&Value),
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        loop {
            let line = self.lines.next().unwrap().unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            on_message(&message);
        }
    }

    fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
            |_| {},
        )
    }

    fn new_session(&mut self, cwd: &std::path::Path) -> String {
        let response = self.request(
            "session/new",
            json!({"cwd": cwd.display().to_string(), "mcpServers": []}),
            |_| {},
        );
        response["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn startup(sb: &Sandbox, script: &str) {
    let mut to_initialize = Vec::new();
    let mut to_session = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..STARTUP_RUNS {
        let started = Instant::now();
        let mut agent = Agent::spawn(sb, &["--model", script], &[]);
        agent.initialize();
        to_initialize.push(millis(started.elapsed()));
        agent.new_session(&sb.project());
        to_session.push(millis(started.elapsed()));
        std::thread::sleep(Duration::from_millis(50));
        rss.push(agent.rss_kib() as f64 / 1024.0);
    }
    println!(
        "start-up: spawn → initialize answered {:.1} ms, → first session/new answered {:.1} ms (medians of {STARTUP_RUNS})",
        median(to_initialize),
        median(to_session)
    );
    println!(
        "idle memory after initialize + one session: {:.1} MiB resident (median of {STARTUP_RUNS})",
        median(rss)
    );
}

fn streaming(sb: &Sandbox) {
    let mut rates = Vec::new();
    let mut tails = Vec::new();
    for _ in 0..STREAM_RUNS {
        let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
            piece: 1,
            pause_before_last: Some(Duration::from_millis(300)),
            ..MockReply::text(&"x".repeat(CHUNKS))
        })]);
        let base = format!("{}/v1", server.url());
        let mut agent = Agent::spawn(
            sb,
            &["--model", "openai/gpt-4.1"],
            &[("OPENAI_API_KEY", "sk-bench"), ("OPENAI_BASE_URL", &base)],
        );
        agent.initialize();
        let session = agent.new_session(&sb.project());
        let mut chunks = 0usize;
        let mut first: Option<Instant> = None;
        let mut last = Instant::now();
        let response = agent.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "stream"}]}),
            |message| {
                if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                    chunks += 1;
                    last = Instant::now();
                    first.get_or_insert(last);
                }
            },
        );
        let answered = Instant::now();
        assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
        assert_eq!(chunks, CHUNKS, "every chunk arrived as its own update");
        // The last chunk waits for the paced final piece; measure the flow before it.
        let flowing = last.duration_since(first.unwrap()).as_secs_f64();
        rates.push(chunks as f64 / flowing.max(f64::EPSILON));
        tails.push(millis(
            answered.duration_since(server.last_byte_at().unwrap()),
        ));
    }
    println!(
        "streaming {CHUNKS} chunks: {:.0} chunks/s delivered to the client; model's last byte → session/prompt response {:.2} ms (medians of {STREAM_RUNS})",
        median(rates),
        median(tails)
    );
}

fn main() {
    let sb = Sandbox::new(env!("CARGO_BIN_EXE_agentry"));
    let script = format!(
        "scripted:{}",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/scripts/hello.json"
        )
    );
    startup(&sb, &script);
    streaming(&sb);
}
