//! The interactive chat measured in a real terminal (tmux), beside `agentry run` printing the
//! same answer as plain text:
//!
//! - a 20,000-chunk Markdown answer (paragraphs, lists, code blocks, a table): the time from
//!   the mock model's last byte to the answer's last line on the screen (tmux capture, polled
//!   every 2 ms), and the agent process's CPU time (from its start) when it shows;
//! - a Bash call printing 5,000 lines, then a short answer: the time from sending the prompt
//!   to the answer on the screen, and the CPU time.
//!
//! Medians of 5 runs, the chat and `agentry run` alternating. Run with
//! `cargo bench -p agentry-cli --bench tui` (tmux must be installed).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::tmux::Tmux;
use serde_json::json;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 5;
const CHUNKS: usize = 20_000;
const LAST_LINE: &str = "The end of the long answer.";

/// What one run took.
struct Figures {
    /// From the reference point (the model's last byte, or the prompt) to the screen.
    latency: Duration,
    /// The agent's CPU time.
    cpu: Duration,
}

/// A long Markdown answer of about `chunks` × 5 characters.
fn long_answer() -> String {
    let mut answer = String::from("# A long review\n\n");
    let mut section = 0;
    while answer.len() < CHUNKS * 5 - 400 {
        section += 1;
        answer.push_str(&format!(
            "## Part {section}\n\nThe module number {section} reads **well**, but `parse_{section}` \
             allocates in its loop and the error paths lose the input's position, which the \
             callers then guess.\n\n- keep the position\n- reuse the buffer\n- test the empty case\n\n\
             ```rust\nfn parse_{section}(input: &str) -> Result<Ast, Error> {{\n    let mut buffer = Vec::new();\n    \
             buffer.extend(input.bytes());\n    Ast::from(&buffer)\n}}\n```\n\n| check | result |\n|---|---|\n\
             | allocations | {section} |\n| errors | fine |\n\n"
        ));
    }
    answer.push_str(LAST_LINE);
    answer.push('\n');
    answer
}

fn answer_reply() -> MockTurn {
    let answer = long_answer();
    let mut reply = MockReply::text(&answer);
    reply.piece = answer.len().div_ceil(CHUNKS);
    reply.pause_before_last = Some(Duration::from_millis(300));
    MockTurn::Reply(reply)
}

fn bash_turns() -> Vec<MockTurn> {
    vec![
        MockTurn::Reply(MockReply::tool_call(
            "call_seq",
            "Bash",
            json!({"command": "seq 1 5000 | sed 's/^/output line /'", "description": "Print 5000 lines"}),
        )),
        MockTurn::Reply(MockReply::text(LAST_LINE)),
    ]
}

/// Clock ticks of CPU (user + system) a process used so far.
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
    // Linux reports these in USER_HZ, 100 per second on every architecture it runs on.
    Duration::from_micros(ticks * 10_000)
}

fn environment(sb: &Sandbox, server: &MockModelServer) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = sb
        .environment()
        .into_iter()
        .map(|(k, v)| (k, v.display().to_string()))
        .collect();
    env.push(("TERM".into(), "xterm-256color".into()));
    env.push(("OPENAI_API_KEY".into(), "sk-bench".into()));
    env.push(("OPENAI_BASE_URL".into(), format!("{}/v1", server.url())));
    env
}

/// One turn in the chat; `from_last_byte` measures from the model's last byte, else from the
/// prompt.
fn chat_run(sb: &Sandbox, turns: Vec<MockTurn>, from_last_byte: bool) -> Figures {
    let server = MockModelServer::start_blocking(turns);
    let tmux = Tmux::start(
        Path::new(env!("CARGO_BIN_EXE_agentry")),
        &["--model", "openai/gpt-4.1", "--allow", "Bash"],
        &environment(sb, &server),
        &sb.project(),
        (100, 40),
    );
    tmux.wait_for_text("/help");
    let agent = agentry_pid(&sb.project().canonicalize().unwrap());
    tmux.type_text("review");
    let sent = Instant::now();
    tmux.keys(&["Enter"]);
    loop {
        if tmux.screen().contains(LAST_LINE) && !tmux.screen().contains("ctrl-c to interrupt") {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let shown = Instant::now();
    figures(&server, from_last_byte, sent, shown, cpu_of(agent))
}

/// The figures of a run: the latency from the model's last byte (or from `sent`) to `shown`.
fn figures(
    server: &MockModelServer,
    from_last_byte: bool,
    sent: Instant,
    shown: Instant,
    cpu: Duration,
) -> Figures {
    let reference = if from_last_byte {
        server.last_byte_at().expect("the model answered")
    } else {
        sent
    };
    Figures {
        latency: shown.saturating_duration_since(reference),
        cpu,
    }
}

/// The chat's process: the `agentry` working in the sandbox's project.
fn agentry_pid(project: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
            if comm.trim() == "agentry" && cwd == project {
                return pid;
            }
        }
        assert!(Instant::now() < deadline, "agentry did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The same turn through `agentry run`, its answer read from a pipe.
fn run_run(sb: &Sandbox, turns: Vec<MockTurn>, from_last_byte: bool) -> Figures {
    let server = MockModelServer::start_blocking(turns);
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentry"));
    command
        .args([
            "run",
            "--model",
            "openai/gpt-4.1",
            "--allow",
            "Bash",
            "review",
        ])
        .env_clear()
        .envs(environment(sb, &server))
        .current_dir(sb.project())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let sent = Instant::now();
    let mut child = command.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 65536];
    let (shown, cpu) = loop {
        let n = stdout.read(&mut buffer).unwrap();
        seen.extend_from_slice(&buffer[..n]);
        if n == 0 || String::from_utf8_lossy(&seen).contains(LAST_LINE) {
            break (Instant::now(), cpu_of(child.id()));
        }
    };
    child.wait().unwrap();
    figures(&server, from_last_byte, sent, shown, cpu)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn compare(name: &str, chat: impl Fn() -> Figures, run: impl Fn() -> Figures) {
    let (mut chat_latency, mut chat_cpu, mut run_latency, mut run_cpu) =
        (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        let figures = chat();
        chat_latency.push(figures.latency.as_secs_f64() * 1e3);
        chat_cpu.push(figures.cpu.as_secs_f64() * 1e3);
        let figures = run();
        run_latency.push(figures.latency.as_secs_f64() * 1e3);
        run_cpu.push(figures.cpu.as_secs_f64() * 1e3);
    }
    let (cl, cc, rl, rc) = (
        median(chat_latency),
        median(chat_cpu),
        median(run_latency),
        median(run_cpu),
    );
    println!("{name}");
    println!(
        "  latency: chat {cl:.1} ms, agentry run {rl:.1} ms (ratio {:.2})",
        cl / rl.max(0.001)
    );
    println!(
        "  CPU:     chat {cc:.0} ms, agentry run {rc:.0} ms (ratio {:.2})",
        cc / rc.max(0.001)
    );
}

fn main() {
    let sb = Sandbox::new(env!("CARGO_BIN_EXE_agentry"));
    println!("medians of {RUNS} runs; tmux 100×40");
    compare(
        &format!("{CHUNKS}-chunk Markdown answer, model's last byte → last line shown"),
        || chat_run(&sb, vec![answer_reply()], true),
        || run_run(&sb, vec![answer_reply()], true),
    );
    compare(
        "Bash printing 5,000 lines then an answer, prompt → answer shown",
        || chat_run(&sb, bash_turns(), false),
        || run_run(&sb, bash_turns(), false),
    );
}
