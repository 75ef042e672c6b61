//! What tool search saves: one scripted task of 40 model requests, run through the `agentry`
//! binary against the project's mock model (Anthropic's wire format, `claude-sonnet-4-5`, whose
//! 200,000-token window puts `auto`'s threshold at 20,000 tokens) with 5 MCP servers of 30
//! records-service tools each (the repository's `mcp-test-server --catalogue 30`, which lists
//! 9 tools of its own besides: 39 a server), once with `[tool_search] enabled = "auto"` and once
//! with `"never"`; then the same with the stock tools alone.
//!
//! The task: for each server, one step that finds its tools (a `ToolSearch` by pattern with tool
//! search on, a `Glob` in its place with it off), then calls of two of its tools; the answer
//! last. Both runs make the same MCP calls with the same results and end with the same answer.
//! Prompt tokens are what each request sends — system prompt, messages, tool definitions —
//! estimated as the agent estimates them (a token for four bytes of JSON), the same way for
//! both runs; the figure compared is their total.
//!
//! Runs the binary built beside the bench (`target/release/agentry`, else `target/debug/agentry`,
//! with `mcp-test-server` beside it): `cargo build -p agentry-cli -p agentry-tests --bins`, then
//! `cargo bench -p agentry-e2e --bench tool_search` (`--profile dev` spares a release build of
//! the bench's dependencies: the figures are counts, the same in either). Target: at least 60%
//! fewer prompt tokens in total with tool search on.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SERVERS: usize = 5;
const REQUESTS: usize = 40;

/// The `agentry` binary to measure: a release build if there is one, else the debug build.
fn binary() -> PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join("agentry"))
        .find(|path| path.exists() && path.with_file_name("mcp-test-server").exists())
        .expect(
            "no agentry and mcp-test-server: cargo build -p agentry-cli -p agentry-tests --bins",
        )
}

/// The model's turns: for each server a finding step and calls of two of its tools, the answer
/// last, 40 in all.
fn turns(with_servers: bool, search: bool) -> Vec<MockTurn> {
    let mut turns = Vec::new();
    let mut id = 0;
    let mut call = |name: &str, arguments: Value| {
        id += 1;
        MockTurn::Reply(MockReply::tool_call(
            &format!("toolu_{id}"),
            name,
            arguments,
        ))
    };
    for server in 1..=SERVERS {
        turns.push(match (with_servers, search) {
            (true, true) => call(
                "ToolSearch",
                json!({"query": format!("^mcp__records{server}__op_(3|4)$")}),
            ),
            _ => call("Glob", json!({"pattern": "*.md"})),
        });
        let calls = if server == SERVERS { 6 } else { 7 };
        for n in 0..calls {
            turns.push(if with_servers {
                call(
                    &format!("mcp__records{server}__op_{}", 3 + n % 2),
                    json!({"target": format!("REC-{server}-{n}"), "reason": "monthly close"}),
                )
            } else {
                call("Glob", json!({"pattern": "*.md"}))
            });
        }
    }
    turns.push(MockTurn::Reply(MockReply::text("All records closed.")));
    assert_eq!(turns.len(), REQUESTS);
    turns
}

/// One run's outcome: its answer, the MCP results it read, and each request's prompt tokens.
struct Run {
    answer: String,
    mcp_results: Vec<String>,
    prompt_tokens: Vec<u64>,
}

fn run(with_servers: bool, search: bool) -> Run {
    let sb = Sandbox::new(binary());
    sb.write("project/notes.md", "closing notes\n");
    let mut config = String::new();
    if with_servers {
        let server = binary().with_file_name("mcp-test-server");
        for n in 1..=SERVERS {
            config.push_str(&format!(
                "[mcp_servers.records{n}]\ncommand = {:?}\nargs = [\"--catalogue\", \"30\"]\n\n",
                server.display().to_string()
            ));
        }
    }
    let mode = if search { "auto" } else { "never" };
    config.push_str(&format!("[tool_search]\nenabled = \"{mode}\"\n"));
    sb.write("config/agentry/config.toml", &config);
    let model = MockModelServer::start_blocking(turns(with_servers, search));
    let out = sb.run_with_env(
        &[
            "run",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--permission-mode",
            "bypass",
            "--max-turn-requests",
            "60",
            "Close this month's records.",
        ],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-bench"),
            ("ANTHROPIC_BASE_URL", &model.url()),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), REQUESTS, "every scripted request was made");
    let last = &requests[REQUESTS - 1].body["messages"];
    let mcp_results = last
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].to_string())
        .filter(|text| text.contains(" done: REC-"))
        .collect();
    let prompt_tokens = requests
        .iter()
        .map(|request| {
            let body = &request.body;
            let bytes: usize = ["system", "messages", "tools"]
                .iter()
                .map(|part| body[*part].to_string().len())
                .sum();
            bytes.div_ceil(4) as u64
        })
        .collect();
    Run {
        answer: out.stdout.trim().to_owned(),
        mcp_results,
        prompt_tokens,
    }
}

fn report(label: &str, off: &Run, on: &Run) -> f64 {
    assert_eq!(on.answer, off.answer, "{label}: the task ends the same way");
    assert_eq!(
        on.mcp_results, off.mcp_results,
        "{label}: the same MCP calls, the same results"
    );
    let total = |run: &Run| run.prompt_tokens.iter().sum::<u64>();
    let saved = 1.0 - total(on) as f64 / total(off) as f64;
    println!("\n{label}: prompt tokens per request (tool search off → on)");
    for (n, (off, on)) in off.prompt_tokens.iter().zip(&on.prompt_tokens).enumerate() {
        println!("  request {:>2}: {off:>7} → {on:>7}", n + 1);
    }
    println!(
        "{label}: total {} → {} ({:.1}% fewer; {} MCP results read in each run)",
        total(off),
        total(on),
        saved * 100.0,
        off.mcp_results.len()
    );
    saved
}

fn main() {
    let mcp_off = run(true, false);
    let mcp_on = run(true, true);
    let stock_off = run(false, false);
    let stock_on = run(false, true);
    let saved = report(
        "5 MCP servers × 39 tools + the stock tools",
        &mcp_off,
        &mcp_on,
    );
    report("the stock tools alone", &stock_off, &stock_on);
    println!(
        "\ntarget: at least 60% fewer prompt tokens with 5 MCP servers: {}",
        if saved >= 0.6 { "met" } else { "MISSED" }
    );
}
