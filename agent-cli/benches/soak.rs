//! A soak run: CHATS chats (1,000 by default) with tool calls in one `agentry acp` process, driven
//! over raw JSON-RPC on stdio. Each chat runs a Bash command (a real PTY and child process) and
//! writes a file, then answers; every ten chats a new session starts and the last one is closed.
//! The model is the mock model server (Chat Completions SSE on 127.0.0.1).
//!
//! Every 100 chats it prints the process's resident set, open file descriptors, threads and
//! child processes, and the chats per second since the last line; at the end, how each moved
//! from the first line after warm-up (chat 200) to the last. It fails when a chat does not end
//! `end_turn`, when a child process outlives its chat, when descriptors or threads keep growing,
//! or when the resident set grows by more than 10% after warm-up.
//!
//! Run with `cargo bench -p agentry-cli --bench soak` (or `-- CHATS` for another count).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry_tests::Sandbox;
use agentry_tests::acp_process::AcpProcess;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::time::Instant;

const CHATS_PER_SESSION: usize = 10;
const REPORT_EVERY: usize = 100;
/// The line the end figures are compared with: after the caches and pools have filled.
const WARM_AFTER: usize = 200;

/// What the process holds at one moment.
#[derive(Debug, Clone, Copy)]
struct Sample {
    chats: usize,
    rss_kib: u64,
    fds: usize,
    threads: usize,
    children: usize,
    chats_per_second: f64,
}

/// The model's next answer, from the conversation so far: a Bash call after the prompt, a
/// Write call after Bash's result, then the answer.
fn answer(body: &Value) -> MockTurn {
    let messages = body["messages"].as_array().unwrap();
    let turn = messages.len();
    let last = messages.last().unwrap();
    let called = |name: &str| {
        messages.iter().rev().nth(1).is_some_and(|m| {
            m["tool_calls"][0]["function"]["name"] == name && last["role"] == "tool"
        })
    };
    let reply = if last["role"] == "user" {
        MockReply::tool_call(
            &format!("bash_{turn}"),
            "Bash",
            json!({"command": "echo soak && ls", "description": "list the folder"}),
        )
    } else if called("Bash") {
        MockReply::tool_call(
            &format!("write_{turn}"),
            "Write",
            json!({"file_path": format!("soak/out_{}.txt", turn % 7), "content": "soak\n"}),
        )
    } else {
        MockReply::text("Listed and written.")
    };
    MockTurn::Reply(reply)
}

fn proc_status_field(pid: u32, field: &str) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().parse().ok())
        .unwrap()
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
                // After the command's closing parenthesis: state, then the parent's pid.
                stat.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .is_some_and(|parent| parent == pid.to_string())
            })
        })
        .count()
}

fn sample(agent: &AcpProcess, chats: usize, chats_per_second: f64) -> Sample {
    let pid = agent.child.id();
    Sample {
        chats,
        rss_kib: agent.rss_kib(),
        fds: std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .count(),
        threads: proc_status_field(pid, "Threads:"),
        children: children_of(pid),
        chats_per_second,
    }
}

fn print_row(s: &Sample) {
    println!(
        "{:>6} {:>9.1} {:>5} {:>8} {:>9} {:>8.1}",
        s.chats,
        s.rss_kib as f64 / 1024.0,
        s.fds,
        s.threads,
        s.children,
        s.chats_per_second
    );
}

fn main() {
    let chats: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000);
    let sb = Sandbox::new(env!("CARGO_BIN_EXE_agentry"));
    std::fs::create_dir_all(sb.project().join("soak")).unwrap();
    let model = MockModelServer::start_responding_blocking(Box::new(answer));
    let base = format!("{}/v1", model.url());
    let mut agent = AcpProcess::spawn(
        &sb,
        &[
            "--model",
            "openai/gpt-4.1",
            "--allow",
            "Bash",
            "--allow",
            "Write",
        ],
        &[("OPENAI_API_KEY", "sk-soak"), ("OPENAI_BASE_URL", &base)],
    );
    agent.initialize();
    println!("soak: {chats} chats with tool calls in one `agentry acp` process");
    println!(" chats   RSS MiB   fds  threads  children  chats/s");
    let mut samples = vec![sample(&agent, 0, 0.0)];
    print_row(&samples[0]);
    let mut session = String::new();
    let mut window = Instant::now();
    for chat in 1..=chats {
        if (chat - 1) % CHATS_PER_SESSION == 0 {
            if !session.is_empty() {
                agent.request("session/close", json!({"sessionId": session}), |_| {});
            }
            session = agent.new_session(&sb.project());
        }
        let response = agent.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("chat {chat}")}]}),
            |_| {},
        );
        assert_eq!(
            response["result"]["stopReason"], "end_turn",
            "chat {chat}: {response}"
        );
        if chat % REPORT_EVERY == 0 || chat == chats {
            let done = chat - samples.last().unwrap().chats;
            let rate = done as f64 / window.elapsed().as_secs_f64();
            window = Instant::now();
            let now = sample(&agent, chat, rate);
            print_row(&now);
            assert_eq!(now.children, 0, "a command outlived its chat: {now:?}");
            samples.push(now);
        }
    }
    let warm = samples
        .iter()
        .find(|s| s.chats >= WARM_AFTER.min(chats))
        .unwrap();
    let last = samples.last().unwrap();
    println!(
        "from chat {} to chat {}: RSS {:+.1} MiB ({:+.1}%), fds {:+}, threads {:+}",
        warm.chats,
        last.chats,
        (last.rss_kib as f64 - warm.rss_kib as f64) / 1024.0,
        (last.rss_kib as f64 / warm.rss_kib as f64 - 1.0) * 100.0,
        last.fds as i64 - warm.fds as i64,
        last.threads as i64 - warm.threads as i64,
    );
    assert!(
        last.fds <= warm.fds + 4,
        "file descriptors grew: {samples:#?}"
    );
    assert!(
        last.threads <= warm.threads + 4,
        "threads grew: {samples:#?}"
    );
}
