//! `agentry acp` measured from outside, as an editor sees it, over raw JSON-RPC on stdio:
//!
//! - start-up: spawn → `initialize` answered, and → first `session/new` answered (median of 30),
//!   beside the floor: `acp-floor` (`agent-cli/benches/acp-floor`), an agent on the same
//!   `agent-client-protocol` crate and runtime that only answers those two requests. The two
//!   are run alternately and compared as a ratio (target: `initialize` within 1.3× the floor);
//! - idle memory: resident set after `initialize` and one session (target: under 20 MiB), and
//!   where it is (`/proc/PID/smaps`: the executable's pages, shared libraries, heap and other
//!   anonymous memory), for both;
//! - streaming against the floor: a turn whose mock model streams 2,000 and then 20,000
//!   one-character chunks, `session/prompt` sent → answered, agentry and the floor (which relays
//!   the same stream as bare `agent_message_chunk`s) run alternately (median of 21; target:
//!   within 1.15× the floor), with how long each took to its first chunk;
//! - streaming flow: a turn whose mock model streams 50,000 one-character chunks: chunks per
//!   second delivered to the client, and the model's last byte → the `session/prompt` response
//!   (median of 5).
//!
//! Run with `cargo bench -p agentry-cli --bench acp` (the first run builds the floor, in
//! `target/acp-floor`); `-- startup`, `-- floor` or `-- flow` runs only that part.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry_tests::Sandbox;
use agentry_tests::acp_process::AcpProcess as Agent;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const STARTUP_RUNS: usize = 30;
const STREAM_RUNS: usize = 5;
const CHUNKS: usize = 50_000;
const TURN_RUNS: usize = 21;
const TURN_CHUNKS: [usize; 2] = [2_000, 20_000];

/// Resident KiB by where it is: the executable's own pages, shared libraries, the heap,
/// other anonymous memory (thread stacks, the allocator's arenas).
fn memory_by_region(agent: &Agent) -> BTreeMap<&'static str, u64> {
    let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", agent.child.id())).unwrap();
    let exe = std::fs::read_link(format!("/proc/{}/exe", agent.child.id())).unwrap();
    let mut regions = BTreeMap::new();
    let mut region = "anonymous";
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            let path = fields.nth(4).unwrap_or_default();
            region = match path {
                "[heap]" => "heap",
                p if Path::new(p) == exe => "executable",
                p if p.starts_with('/') => "shared libraries",
                _ => "anonymous",
            };
        } else if first == "Rss:" {
            let kib: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            *regions.entry(region).or_default() += kib;
        }
    }
    regions
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Builds the floor agent (once; later runs find it built) and returns its path.
fn floor_binary() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A target directory of its own: the bench's own build holds the workspace's.
    let target = workspace.join("target").join("acp-floor");
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--locked",
            "--quiet",
            "-p",
            "agentry-acp-floor",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&workspace)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the floor agent did not build");
    target.join("release").join("acp-floor")
}

/// One start of an agent: spawn → `initialize` answered and → `session/new` answered (ms),
/// then its resident memory by region.
struct Start {
    to_initialize: f64,
    to_session: f64,
    memory: BTreeMap<&'static str, u64>,
}

fn start(sb: &Sandbox, spawn: impl Fn() -> Agent) -> Start {
    let started = Instant::now();
    let mut agent = spawn();
    agent.initialize();
    let to_initialize = millis(started.elapsed());
    agent.new_session(&sb.project());
    let to_session = millis(started.elapsed());
    std::thread::sleep(Duration::from_millis(50));
    assert!(agent.rss_kib() > 0);
    Start {
        to_initialize,
        to_session,
        memory: memory_by_region(&agent),
    }
}

/// Whether an executable is position-independent (ELF type `ET_DYN`), as ASLR needs.
fn elf_kind(binary: &Path) -> &'static str {
    let header = std::fs::read(binary).unwrap_or_default();
    match header.get(16..18) {
        Some([3, 0]) => "PIE",
        Some([2, 0]) => "position-dependent",
        _ => "not ELF",
    }
}

fn startup(sb: &Sandbox, script: &str) {
    let floor = floor_binary();
    let mut agentry = Vec::new();
    let mut floors = Vec::new();
    // Alternately, so both see the machine in the same state.
    for _ in 0..STARTUP_RUNS {
        agentry.push(start(sb, || Agent::spawn(sb, &["--model", script], &[])));
        floors.push(start(sb, || Agent::spawn_other(sb, &floor)));
    }
    let median_of = |starts: &[Start], value: &dyn Fn(&Start) -> f64| {
        median(starts.iter().map(value).collect())
    };
    let initialize = |s: &Start| s.to_initialize;
    let session = |s: &Start| s.to_session;
    let (ours, theirs) = (
        median_of(&agentry, &initialize),
        median_of(&floors, &initialize),
    );
    println!(
        "start-up, spawn → initialize answered: agentry ({}) {ours:.2} ms, floor {theirs:.2} ms, ratio {:.2}× (target ≤ 1.3×; medians of {STARTUP_RUNS})",
        elf_kind(Path::new(env!("CARGO_BIN_EXE_agentry"))),
        ours / theirs
    );
    let (ours, theirs) = (median_of(&agentry, &session), median_of(&floors, &session));
    println!(
        "start-up, spawn → first session/new answered: agentry {ours:.2} ms, floor {theirs:.2} ms, ratio {:.2}×",
        ours / theirs
    );
    for (name, starts) in [("agentry", &agentry), ("floor", &floors)] {
        let total = median_of(starts, &|s| s.memory.values().sum::<u64>() as f64 / 1024.0);
        let regions: Vec<String> = ["executable", "shared libraries", "heap", "anonymous"]
            .iter()
            .map(|region| {
                let kib = median_of(starts, &|s| *s.memory.get(region).unwrap_or(&0) as f64);
                format!("{region} {:.1}", kib / 1024.0)
            })
            .collect();
        println!(
            "memory after initialize + one session/new, {name}: {total:.1} MiB resident ({} MiB; medians of {STARTUP_RUNS}){}",
            regions.join(", "),
            if name == "agentry" {
                " (target < 20 MiB)"
            } else {
                ""
            }
        );
    }
}

/// What the client saw of one streamed turn.
struct StreamedTurn {
    /// `session/prompt` sent.
    sent: Instant,
    /// The first `agent_message_chunk`.
    first_chunk: Instant,
    /// The last `agent_message_chunk`.
    last_chunk: Instant,
    /// The `session/prompt` response.
    answered: Instant,
    /// When the mock model handed over its last byte.
    model_done: Instant,
}

/// One turn whose mock model streams `chunks` one-character chunks (pausing before the last
/// for `pause`), in a fresh agent from `spawn` (given the model's environment).
fn stream_turn(
    sb: &Sandbox,
    chunks: usize,
    pause: Option<Duration>,
    spawn: impl Fn(&[(&str, &str)]) -> Agent,
) -> StreamedTurn {
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
        piece: 1,
        pause_before_last: pause,
        ..MockReply::text(&"x".repeat(chunks))
    })]);
    let base = format!("{}/v1", server.url());
    let mut agent = spawn(&[("OPENAI_API_KEY", "sk-bench"), ("OPENAI_BASE_URL", &base)]);
    agent.initialize();
    let session = agent.new_session(&sb.project());
    let mut delivered = 0usize;
    let mut first_chunk = None;
    let mut last_chunk = Instant::now();
    let sent = Instant::now();
    let response = agent.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "stream"}]}),
        |message| {
            if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                delivered += 1;
                last_chunk = Instant::now();
                first_chunk.get_or_insert(last_chunk);
            }
        },
    );
    let answered = Instant::now();
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(delivered, chunks, "every chunk arrived as its own update");
    StreamedTurn {
        sent,
        first_chunk: first_chunk.unwrap(),
        last_chunk,
        answered,
        model_done: server.last_byte_at().unwrap(),
    }
}

/// agentry, as the benchmarks run it against the mock model.
fn agentry(sb: &Sandbox) -> impl Fn(&[(&str, &str)]) -> Agent {
    |env| Agent::spawn(sb, &["--model", "openai/gpt-4.1"], env)
}

fn streaming_against_floor(sb: &Sandbox) {
    let floor = floor_binary();
    let the_floor = |env: &[(&str, &str)]| {
        let mut command = Command::new(&floor);
        command
            .envs(sb.environment())
            .envs(env.iter().copied())
            .current_dir(sb.project());
        Agent::start(command)
    };
    // The whole turn, and the part of it before the first chunk reached the client.
    let times = |turn: StreamedTurn| {
        (
            millis(turn.answered.duration_since(turn.sent)),
            millis(turn.first_chunk.duration_since(turn.sent)),
        )
    };
    for chunks in TURN_CHUNKS {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        // Alternately, so both see the machine in the same state.
        for _ in 0..TURN_RUNS {
            ours.push(times(stream_turn(sb, chunks, None, agentry(sb))));
            theirs.push(times(stream_turn(sb, chunks, None, the_floor)));
        }
        let whole = |turns: &[(f64, f64)]| median(turns.iter().map(|t| t.0).collect());
        let first = |turns: &[(f64, f64)]| median(turns.iter().map(|t| t.1).collect());
        let (ours_whole, theirs_whole) = (whole(&ours), whole(&theirs));
        println!(
            "streaming turn of {chunks} chunks, session/prompt → answered: agentry {ours_whole:.1} ms, floor {theirs_whole:.1} ms, ratio {:.2}× (target ≤ 1.15×; first chunk after {:.1} and {:.1} ms; medians of {TURN_RUNS})",
            ours_whole / theirs_whole,
            first(&ours),
            first(&theirs)
        );
    }
}

fn streaming(sb: &Sandbox) {
    let mut rates = Vec::new();
    let mut tails = Vec::new();
    for _ in 0..STREAM_RUNS {
        let turn = stream_turn(sb, CHUNKS, Some(Duration::from_millis(300)), agentry(sb));
        // The last chunk waits for the paced final piece; measure the flow before it.
        let flowing = turn.last_chunk.duration_since(turn.first_chunk);
        rates.push(CHUNKS as f64 / flowing.as_secs_f64().max(f64::EPSILON));
        tails.push(millis(turn.answered.duration_since(turn.model_done)));
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
    // `cargo bench` passes `--bench`; any other argument names the parts to run.
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let runs = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);
    if runs("startup") {
        startup(&sb, &script);
    }
    if runs("floor") {
        streaming_against_floor(&sb);
    }
    if runs("flow") {
        streaming(&sb);
    }
}
