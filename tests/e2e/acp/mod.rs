//! `agentry acp` driven by the official ACP TypeScript SDK (`tests/peers/acp-client.mjs`), with
//! the model served by the mock model server; one module per behaviour, the helpers they
//! share here.

use crate::{bash_then_answer, pid_in, process_gone, sandbox};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Part, Stop};
use agentry_tests::peers::Transcript;
use serde_json::{Value, json};

/// `agentry acp --model openai/gpt-4.1 ARGS` against `server`, under the test client.
pub(crate) fn acp_with_model(
    sb: &Sandbox,
    server: &MockModelServer,
    args: &[&str],
    client: Value,
) -> Transcript {
    let base = format!("{}/v1", server.url());
    let mut agent_args = vec!["--model", "openai/gpt-4.1"];
    agent_args.extend_from_slice(args);
    sb.acp(
        &agent_args,
        &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
        client,
    )
}

/// `initialize`, then `session/new` in the sandbox's project, then `steps`.
pub(super) fn session_steps(sb: &Sandbox, steps: Vec<Value>) -> Vec<Value> {
    let mut all = vec![
        json!({"op": "initialize"}),
        json!({"op": "new_session", "cwd": sb.project().display().to_string()}),
    ];
    all.extend(steps);
    all
}

pub(super) fn prompt(text: &str) -> Value {
    json!({"op": "prompt", "text": text})
}

/// A model that writes `greeting.txt`, then answers `done`.
pub(super) fn write_then_answer(turns: usize) -> MockModelServer {
    let mut script = Vec::new();
    for n in 0..turns {
        script.push(MockTurn::Reply(MockReply::tool_call(
            &format!("call_{n}"),
            "Write",
            json!({"file_path": format!("greeting{n}.txt"), "content": "hello\n"}),
        )));
        script.push(MockTurn::Reply(MockReply::text("done")));
    }
    MockModelServer::start_blocking(script)
}

pub(super) fn tool_updates<'a>(out: &'a Transcript, id: &str) -> Vec<&'a Value> {
    out.updates()
        .into_iter()
        .filter(|u| u["toolCallId"] == id)
        .collect()
}

pub(super) fn final_status(out: &Transcript, id: &str) -> String {
    tool_updates(out, id)
        .iter()
        .filter_map(|u| u["status"].as_str())
        .next_back()
        .unwrap_or_default()
        .to_owned()
}

pub(super) fn assert_cancelled_cleanly(out: &Transcript, step: usize) {
    assert_eq!(
        out.result(step)["stopReason"],
        "cancelled",
        "{:#?}",
        out.records
    );
    let last_update = out.records.iter().rposition(|r| r["kind"] == "update");
    assert!(
        last_update.is_none_or(|last| last < out.position_of_answer(step)),
        "no update after the prompt's response"
    );
}

pub(super) fn hello_script() -> String {
    crate::repository()
        .join("examples/scripts/hello.json")
        .display()
        .to_string()
}

/// Step `step` was answered with -32602 (invalid params) and a message that mentions `word`.
pub(super) fn assert_invalid_params(out: &Transcript, step: usize, word: &str) {
    let answer = out.answer(step);
    assert_eq!(answer["code"], -32602, "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains(word),
        "{answer}"
    );
}

/// A session in the sandbox's project that runs `steps` with a model that answers `text` once.
pub(super) fn answering(
    sb: &Sandbox,
    text: &str,
    steps: Vec<Value>,
) -> (MockModelServer, Transcript) {
    answering_with(sb, &[], text, steps)
}

/// [`answering`], with `args` for `agentry acp`.
pub(super) fn answering_with(
    sb: &Sandbox,
    args: &[&str],
    text: &str,
    steps: Vec<Value>,
) -> (MockModelServer, Transcript) {
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text(text))]);
    let out = acp_with_model(
        sb,
        &server,
        args,
        json!({"steps": session_steps(sb, steps)}),
    );
    (server, out)
}

/// `write_then_answer(turns)` under a client that answers the permission questions with
/// `answers`, in a session that gets `prompts`.
pub(super) fn write_with_answers(
    sb: &Sandbox,
    turns: usize,
    answers: &[&str],
    prompts: &[&str],
) -> (MockModelServer, Transcript) {
    let server = write_then_answer(turns);
    let steps = session_steps(sb, prompts.iter().map(|text| prompt(text)).collect());
    let out = acp_with_model(
        sb,
        &server,
        &[],
        json!({"permissions": answers, "steps": steps}),
    );
    (server, out)
}

/// `initialize`, then `session/new` with the reference MCP server (and `another`), then `steps`.
pub(super) fn with_everything_server(
    sb: &Sandbox,
    another: Option<Value>,
    steps: Vec<Value>,
) -> Vec<Value> {
    let (command, args) = agentry_tests::peers::everything_server();
    let mut servers =
        vec![json!({"name": "everything", "command": command, "args": args, "env": []})];
    servers.extend(another);
    let mut all = vec![
        json!({"op": "initialize"}),
        json!({"op": "new_session", "cwd": sb.project().display().to_string(), "mcpServers": servers}),
    ];
    all.extend(steps);
    all
}

mod cancellation;
mod client_services;
mod clouds;
mod commands;
mod mcp_questions;
mod permissions;
mod questions;
mod rewind;
mod sessions;
mod subagents;
mod turns;
