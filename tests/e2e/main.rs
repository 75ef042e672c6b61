//! End-to-end tests of the real `agentry` binary, compiled into one test binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::{Outcome, Sandbox};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A sandbox running the `agentry` binary under test.
fn sandbox() -> Sandbox {
    Sandbox::new(agentry_binary())
}

/// The repository's root folder.
pub(crate) fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `agentry` binary under test: cargo's build of `agentry-cli` in the target folder these
/// tests were built in, checked to be newer than every source file it was built from (those
/// cargo lists beside it, in `agentry.d`). Build it first with `cargo build -p agentry-cli`
/// (./scripts/test does).
pub(crate) fn agentry_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        // This test binary is PROFILE/deps/e2e-HASH; the agentry binary is PROFILE/agentry.
        let exe = std::env::current_exe().unwrap();
        let binary = exe.parent().and_then(Path::parent).unwrap().join("agentry");
        let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified());
        let built = modified(&binary).unwrap_or_else(|_| {
            panic!(
                "no agentry binary at {}: run `cargo build -p agentry-cli` first",
                binary.display()
            )
        });
        let sources = std::fs::read_to_string(binary.with_extension("d")).unwrap_or_default();
        let newer = sources
            .split_once(": ")
            .map_or("", |(_, files)| files)
            .split_whitespace()
            .map(Path::new)
            .find(|source| modified(source).is_ok_and(|changed| changed > built));
        if let Some(source) = newer {
            panic!(
                "{} is older than {}: run `cargo build -p agentry-cli` first",
                binary.display(),
                source.display()
            );
        }
        binary
    })
}

/// `agentry run --model anthropic/claude-sonnet-4-5 ARGS…` with Anthropic's client pointed at
/// `server`.
pub(crate) fn run_sonnet(sb: &Sandbox, server: &MockModelServer, args: &[&str]) -> Outcome {
    let mut command = vec!["run", "--model", "anthropic/claude-sonnet-4-5"];
    command.extend_from_slice(args);
    sb.run_with_env(
        &command,
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-e2e"),
            ("ANTHROPIC_BASE_URL", &server.url()),
        ],
    )
}

/// The repository's own MCP test server (`tests/mcp/server.rs`), built beside the binary.
pub(crate) fn mcp_test_server() -> PathBuf {
    agentry_binary().with_file_name("mcp-test-server")
}

/// `agentry run --model openai/gpt-4.1 ARGS…` with the OpenAI client pointed at `server`.
fn run_openai(sb: &Sandbox, server: &MockModelServer, args: &[&str]) -> Outcome {
    run_openai_with_env(sb, server, args, &[])
}

/// [`run_openai`] with more environment variables.
fn run_openai_with_env(
    sb: &Sandbox,
    server: &MockModelServer,
    args: &[&str],
    env: &[(&str, &str)],
) -> Outcome {
    let base = format!("{}/v1", server.url());
    let mut command = vec!["run", "--model", "openai/gpt-4.1"];
    command.extend_from_slice(args);
    let mut env = env.to_vec();
    env.extend([("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)]);
    sb.run_with_env(&command, &env)
}

/// Configures the reference MCP server as `everything` in the sandbox project's `.mcp.json`.
pub(crate) fn configure_everything_server(sb: &Sandbox) {
    let (command, args) = agentry_tests::peers::everything_server();
    sb.write(
        "project/.mcp.json",
        &serde_json::json!({"mcpServers": {"everything": {"command": command, "args": args}}})
            .to_string(),
    );
}

/// The text of a user message as an OpenAI request carries it, without the environment block
/// that heads the conversation's first user message.
pub(crate) fn user_text(content: &serde_json::Value) -> String {
    match content.as_array() {
        None => content.as_str().unwrap_or_default().to_owned(),
        Some(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .filter(|text| !text.starts_with("# Environment\n"))
            .collect(),
    }
}

/// The text of each user message of a model request (its body, in OpenAI's format).
pub(crate) fn user_texts(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "user")
        .map(|message| user_text(&message["content"]))
        .collect()
}

/// The text of the tool result the model got in request `n` (the last message).
pub(crate) fn tool_result_in(server: &MockModelServer, n: usize) -> String {
    let requests = server.requests();
    let messages = requests[n].body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"].to_string()
}

/// Whether process `pid` is gone (or a zombie nobody waits for), within two seconds.
pub(crate) fn process_gone(pid: i32) -> bool {
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// A model that runs `command` with Bash, then says `stopped`.
pub(crate) fn bash_then_answer(command: &str) -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_bash",
            "Bash",
            json!({"command": command, "description": "wait"}),
        )),
        MockTurn::Reply(MockReply::text("stopped")),
    ])
}

/// The built library of a plugin crate (a dev-dependency of these tests: an example plugin or
/// a stock provider's packaging).
pub(crate) fn built_plugin(crate_name: &str) -> std::path::PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let file = deps.join(format!(
        "{}{crate_name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(file.exists(), "{} was not built", file.display());
    file
}

pub(crate) fn pid_in(sb: &Sandbox, file: &str) -> i32 {
    std::fs::read_to_string(sb.project().join(file))
        .expect("the command wrote its pid")
        .trim()
        .parse()
        .unwrap()
}

mod acp;
mod bash_sandbox;
mod claude_plugins;
mod cli;
mod compaction;
mod cost;
mod crash;
mod docs;
mod hooks;
mod loading;
mod mcp;
mod mcp_conformance;
mod mcp_login;
mod mcp_serve;
mod model_faults;
mod models;
mod on_disk;
mod permissions;
mod plugin_commands;
mod plugins;
mod providers;
mod record;
mod release;
mod rewind;
mod run;
mod serve;
mod stock_plugins;
mod store_faults;
mod tool_plugins;
mod tool_search;
mod tools;
mod traces;
mod trust;
mod tui;
mod web;
