//! A process killed mid-turn (SIGKILL) keeps every finished turn and as much of the one in flight
//! as had been recorded; reopened — with `--resume`, ACP `session/load` or the server's messages
//! endpoint — the session shows that chat as interrupted, nothing twice, and goes on.

use crate::acp::acp_with_model;
use crate::sandbox;
use crate::serve::Server;
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use nix::sys::signal::Signal;
use serde_json::{Value, json};

/// The rows stored for `session`, after checking the database file is sound.
fn message_count(sb: &Sandbox, session: &str) -> i64 {
    let db = rusqlite::Connection::open(sb.database()).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    db.query_row(
        "SELECT COUNT(*) FROM messages m JOIN chats c ON c.id = m.chat_id WHERE c.session_id = ?1",
        [session],
        |r| r.get(0),
    )
    .unwrap()
}

/// A session whose first chat finished (a tool call, then `first answer`) and whose second was
/// killed while the model was streaming its second answer, after the tool call `c2` had run.
fn session_killed_mid_chat(sb: &Sandbox) -> String {
    let first = sb.script(
        "first",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c1", "name": "Nope", "arguments": {}}}]},
            {"events": [{"text": "first answer"}]}
        ]}),
    );
    let out = sb.run_scripted(&first, &["--output-format", "json", "first"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let id = out.json()["session_id"].as_str().unwrap().to_owned();
    assert_eq!(message_count(sb, &id), 4);

    let slow = sb.script(
        "slow",
        &json!({"responses": [
            {"events": [{"tool_call": {"id": "c2", "name": "Nope", "arguments": {}}}]},
            {"events": [{"text": "half an ans"}, {"delay_ms": 60000}, {"text": "wer"}]}
        ]}),
    );
    let mut running = sb.spawn_scripted(
        &slow,
        &["--resume", &id, "--output-format", "stream-json", "second"],
    );
    running.wait_for_line(|l| l.contains("half an ans"));
    running.signal(Signal::SIGKILL);
    let status = running.wait();
    assert_eq!(status.code(), None, "killed by a signal");
    // The prompt, the tool call and its result were recorded as they happened; the half answer
    // was still streaming.
    assert_eq!(message_count(sb, &id), 7);
    id
}

/// The texts of `messages` (an OpenAI request's), each prefixed with its role, tool calls as
/// `assistant:call ID`.
fn outline(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let role = m["role"].as_str().unwrap();
            match m["tool_calls"].as_array() {
                Some(calls) => format!("{role}:call {}", calls[0]["id"].as_str().unwrap()),
                None => format!("{role}:{}", crate::user_text(&m["content"])),
            }
        })
        .collect()
}

#[test]
fn after_sigkill_resume_shows_the_interrupted_chat_once_and_goes_on() {
    let sb = sandbox();
    let id = session_killed_mid_chat(&sb);

    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("third answer"))]);
    let out = crate::run_openai(
        &sb,
        &model,
        &["--resume", &id, "--output-format", "json", "third"],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.json()["result"], "third answer");

    let sent = outline(&model.requests()[0].body["messages"]);
    let tools_said: Vec<&String> = sent.iter().filter(|m| m.starts_with("tool:")).collect();
    assert_eq!(tools_said.len(), 2, "{sent:#?}");
    let without_results: Vec<&str> = sent
        .iter()
        .filter(|m| !m.starts_with("tool:"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        without_results[..without_results.len() - 2],
        [
            "user:first",
            "assistant:call c1",
            "assistant:first answer",
            "user:second",
            "assistant:call c2",
        ],
        "{sent:#?}"
    );
    let note = without_results[without_results.len() - 2];
    assert!(
        note.starts_with("user:[The previous request was interrupted"),
        "the model is told the last chat was cut off: {sent:#?}"
    );
    assert_eq!(without_results.last().unwrap(), &"user:third");
    // The third chat's prompt and answer are added; the note is not stored.
    assert_eq!(message_count(&sb, &id), 9);
}

#[test]
fn after_sigkill_acp_session_load_replays_the_interrupted_chat_marked() {
    let sb = sandbox();
    let id = session_killed_mid_chat(&sb);

    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Still here."))]);
    let project = sb.project().display().to_string();
    let out = acp_with_model(
        &sb,
        &model,
        &[],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "request", "method": "session/load", "params": {"sessionId": id, "cwd": project, "mcpServers": []}},
            {"op": "prompt", "text": "and now?", "sessionId": id},
        ]}),
    );
    let replayed: Vec<&Value> = out
        .records
        .iter()
        .take(out.position_of_answer(1))
        .filter(|r| r["kind"] == "update")
        .map(|r| &r["update"])
        .collect();
    let prompts: Vec<&str> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(prompts, ["first", "second"], "nothing twice, no note shown");
    let calls: Vec<&str> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .filter_map(|u| u["toolCallId"].as_str())
        .collect();
    assert_eq!(calls, ["c1", "c2"]);
    let text: String = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(
        text,
        format!("first answer\n\n[{}]", agentry::event::CHAT_INTERRUPTED)
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let history = model.requests()[0].body["messages"].to_string();
    assert!(history.contains("The previous request was interrupted"));
}

#[test]
fn after_sigkill_the_messages_endpoint_shows_an_interrupted_turn() {
    let sb = sandbox();
    let id = session_killed_mid_chat(&sb);

    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &[]);
    let (status, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(status, 200, "{messages}");
    let turns: Vec<(String, String)> = messages["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["role"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let last = turns.last().unwrap();
    assert_eq!(
        last,
        &("system".to_owned(), "interrupted".to_owned()),
        "{messages:#}"
    );
    let users = turns.iter().filter(|(role, _)| role == "user").count();
    assert_eq!(users, 2, "each prompt once: {messages:#}");
    assert_eq!(
        turns
            .iter()
            .filter(|(_, status)| status == "interrupted")
            .count(),
        1,
        "{messages:#}"
    );
}
