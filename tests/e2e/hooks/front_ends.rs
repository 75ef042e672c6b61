//! The hook events of an editor's session (ACP) and a served one (the chat protocol's REST
//! API): the same events, with the same input, as a headless run's; and, in a session of
//! several prompts, what an `async` hook said reaching the model with the next one.

use super::events::{recorded, recording};
use crate::acp::{acp_with_model, prompt, session_steps};
use crate::sandbox;
use crate::serve::Server;
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The events both front-ends' sessions are heard at.
const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "SessionEnd",
];

/// A model that runs `echo hi` in Bash, then answers `done`.
fn echo_then_answer() -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "Bash",
            json!({"command": "echo hi", "description": "Greet"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ])
}

/// The recorded inputs, once `SessionEnd` is among them (it runs after the session is let go).
fn recorded_to_the_end(sb: &Sandbox) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let inputs = recorded(sb);
        let ended = inputs.iter().any(|i| i["hook_event_name"] == "SessionEnd");
        if ended || Instant::now() > deadline {
            return inputs;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Checks that every one of [`EVENTS`] was heard, in one session, in order of the turn.
fn heard_in_order(inputs: &[Value]) {
    let names: Vec<&str> = inputs
        .iter()
        .map(|i| i["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, EVENTS, "{inputs:#?}");
    let session = &inputs[0]["session_id"];
    assert!(inputs.iter().all(|i| &i["session_id"] == session));
    assert_eq!(inputs[1]["prompt"], "greet");
    assert_eq!(inputs[2]["tool_input"]["command"], "echo hi");
    assert_eq!(inputs[4]["last_assistant_message"], "done");
    assert_eq!(inputs[5]["reason"], "other");
}

#[test]
fn an_editors_session_fires_the_hook_events_and_closing_it_ends_it() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &recording(EVENTS, &[]).to_string(),
    );
    let model = echo_then_answer();
    let out = acp_with_model(
        &sb,
        &model,
        &["--allow", "Bash"],
        json!({"steps": session_steps(&sb, vec![
            prompt("greet"),
            json!({"op": "request", "method": "session/close", "params": {"sessionId": "$session"}}),
            json!({"op": "sleep", "ms": 300}),
        ])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    heard_in_order(&recorded_to_the_end(&sb));
}

#[test]
fn a_served_session_fires_the_hook_events_and_deleting_it_ends_it() {
    let sb = sandbox();
    sb.write(
        "project/.claude/settings.json",
        &recording(EVENTS, &[]).to_string(),
    );
    let model = echo_then_answer();
    let server = Server::start(&sb, &model, &["--allow", "Bash"]);
    let id = server.new_session(&sb);
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "greet", "headless": true})),
    );
    assert_eq!(status, 200, "{end}");
    assert_eq!(end["finish_reason"], "completed", "{end}");
    let (status, _) = server.call("DELETE", &format!("/api/sessions/{id}"), None);
    assert!(status < 300, "{status}");
    let inputs = recorded_to_the_end(&sb);
    heard_in_order(&inputs);
    assert_eq!(inputs[0]["session_id"], id.as_str());
}

#[test]
fn an_async_hooks_context_goes_to_the_model_with_the_sessions_next_prompt() {
    let sb = sandbox();
    let said = json!({"systemMessage": "the linter ran",
        "hookSpecificOutput": {"hookEventName": "PostToolUse",
            "additionalContext": "lint found 2 warnings"}});
    sb.write(
        "project/.claude/settings.json",
        &json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "async": true,
            "command": format!("echo '{said}'; touch \"$CLAUDE_PROJECT_DIR/linted\"")}]}]}})
        .to_string(),
    );
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_1",
            "Bash",
            json!({"command": "echo hi", "description": "Greet"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
        MockTurn::Reply(MockReply::text("noted")),
    ]);
    let server = Server::start(&sb, &model, &["--allow", "Bash"]);
    let id = server.new_session(&sb);
    let chat = |message: &str| {
        let (status, end) = server.call(
            "POST",
            &format!("/api/sessions/{id}/chat"),
            Some(json!({"message": message, "headless": true})),
        );
        assert_eq!(status, 200, "{end}");
    };
    chat("greet");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sb.project().join("linted").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The hook's output is read when it exits, just after it made the file.
    std::thread::sleep(Duration::from_millis(500));
    chat("and now?");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let sent = |n: usize| requests[n].body["messages"].to_string();
    assert!(!sent(1).contains("lint found"), "{}", sent(1));
    let next = sent(2);
    assert!(
        next.contains("Async hook output:\\nlint found 2 warnings\\nthe linter ran"),
        "{next}"
    );
}
