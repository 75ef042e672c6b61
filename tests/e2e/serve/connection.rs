//! The connection: bad messages that keep it, the token and Origin checks, reconnection mid-chat,
//! chat:stop, size limits.

use super::{Server, events, on_both_transports, outline, send, wait_for};
use crate::sandbox;
use agentry_tests::http;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::run_chat_client;
use serde_json::{Value, json};
use std::time::Duration;

#[test]
fn bad_messages_get_system_error_and_the_connection_stays_on_both_transports() {
    on_both_transports(bad_messages);
}

fn bad_messages(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("ok"))]);
    let server = Server::start(&sb, &model, &[]);
    let id = server.new_session(&sb);
    // Socket.IO frames are the library's: only the plain WebSocket can send a broken one.
    let broken = match transport {
        "ws" => json!({"op": "raw", "text": "{not json"}),
        _ => send("chat:send", json!("not an object")),
    };
    let out = server.client_over(
        &sb,
        transport,
        vec![
            broken,
            send(
                "chat:send",
                json!({"session_id": "sess_nope", "message": "hi"}),
            ),
            send(
                "chat:send",
                json!({"session_id": id, "message": "hi", "colour": "red"}),
            ),
            send("chat:dance", json!({})),
            wait_for("system:error", 4),
            send(
                "chat:send",
                json!({"session_id": id, "message": "still there?"}),
            ),
            wait_for("chat:end", 1),
        ],
    );
    let codes: Vec<&str> = events(&out, "system:error")
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    let first = if transport == "ws" {
        "bad_request"
    } else {
        "invalid_message"
    };
    assert_eq!(
        codes,
        [first, "unknown_session", "invalid_message", "bad_request"],
        "{transport}"
    );
    assert_eq!(events(&out, "chat:end")[0]["status"], "completed");
}

#[test]
fn a_token_is_required_when_set_and_foreign_origins_may_not_open_sockets() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--token", "s3cret"]);
    let (status, _) = http::call("GET", &format!("{}/api/sessions", server.url), None, None);
    assert_eq!(status, 401);
    let (status, _) = http::call(
        "GET",
        &format!("{}/api/sessions", server.url),
        None,
        Some("s3cret"),
    );
    assert_eq!(status, 200);
    let refused = run_chat_client(
        &json!({"url": server.ws(), "headers": {"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}}),
        sb.project().parent().unwrap(),
        Duration::from_secs(30),
    );
    assert_eq!(refused.of_kind("refused")[0]["status"], 403);
    let no_token = run_chat_client(
        &json!({"url": server.ws()}),
        sb.project().parent().unwrap(),
        Duration::from_secs(30),
    );
    assert_eq!(no_token.of_kind("refused")[0]["status"], 401);
    let admitted = run_chat_client(
        &json!({"url": format!("{}?token=s3cret", server.ws()), "headers": {"Origin": server.url}}),
        sb.project().parent().unwrap(),
        Duration::from_secs(30),
    );
    assert_eq!(admitted.of_kind("open").len(), 1);
    // Socket.IO goes through the same door.
    let socket_io = |headers: Value| {
        run_chat_client(
            &json!({"transport": "socket.io", "url": server.url, "headers": headers}),
            sb.project().parent().unwrap(),
            Duration::from_secs(30),
        )
    };
    assert_eq!(socket_io(json!({})).of_kind("refused").len(), 1);
    assert_eq!(
        socket_io(json!({"Authorization": "Bearer s3cret"}))
            .of_kind("open")
            .len(),
        1
    );
}

#[test]
fn a_client_that_reconnects_mid_chat_catches_up_without_gaps_or_repeats_on_both_transports() {
    on_both_transports(reconnect);
}

fn reconnect(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "slow",
            "Bash",
            json!({"command": "sleep 1; echo slept", "description": "wait a second"}),
        )),
        MockTurn::Reply(MockReply::text("Slept well.")),
    ]);
    let server = Server::start(&sb, &model, &["--permission-mode", "bypass"]);
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send("chat:send", json!({"session_id": id, "message": "Sleep"})),
            wait_for("turn:patch", 1),
            json!({"op": "reconnect"}),
            send("session:subscribe", json!({"session_id": id})),
            wait_for("chat:end", 1),
        ],
    );
    let records = out.of_kind("event");
    let second_open = out
        .records
        .iter()
        .enumerate()
        .filter(|(_, r)| r["kind"] == "open")
        .nth(1)
        .unwrap()
        .0;
    let after: Vec<&Value> = out.records[second_open..]
        .iter()
        .filter(|r| r["kind"] == "event")
        .collect();
    assert_eq!(after[0]["event"], "session:subscribed");
    let resumed_at = after[0]["data"]["sequence"].as_u64().unwrap();
    // The open turn as it stands: the Bash call is there, still pending.
    assert_eq!(after[1]["event"], "turn:start");
    assert_eq!(after[1]["data"]["status"], "streaming");
    assert_eq!(after[1]["data"]["tool_calls"][0]["id"], "slow");
    assert_eq!(after[1]["data"]["tool_calls"][0]["status"], "pending");
    // Then only what came later, in order, each once.
    let live: Vec<u64> = after[2..]
        .iter()
        .map(|r| r["data"]["sequence"].as_u64().unwrap())
        .collect();
    assert!(
        live.iter().all(|s| *s > resumed_at),
        "{live:?} after {resumed_at}"
    );
    assert!(live.windows(2).all(|w| w[0] < w[1]), "{live:?}");
    assert_eq!(after.last().unwrap()["event"], "chat:end");
    assert!(records.len() > after.len());
}

#[test]
fn chat_stop_interrupts_the_chat_and_a_second_chat_send_meanwhile_is_refused_on_both_transports() {
    on_both_transports(stop);
}

fn stop(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::tool_call(
        "slow",
        "Bash",
        json!({"command": "sleep 30", "description": "wait"}),
    ))]);
    let server = Server::start(&sb, &model, &["--permission-mode", "bypass"]);
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send("chat:send", json!({"session_id": id, "message": "Wait"})),
            wait_for("turn:patch", 1),
            send(
                "chat:send",
                json!({"session_id": id, "message": "And this?"}),
            ),
            wait_for("system:error", 1),
            send("chat:stop", json!({"session_id": id})),
            wait_for("chat:end", 1),
        ],
    );
    let error = events(&out, "system:error")[0];
    assert_eq!(error["code"], "chat_running");
    assert_eq!(error["session_id"], id.as_str());
    let end = events(&out, "chat:end")[0];
    assert_eq!(end["status"], "interrupted");
    let outline = outline(&out);
    assert!(
        outline.contains(&"turn:end assistant interrupted".to_owned()),
        "{outline:?}"
    );
    let result = events(&out, "turn:patch")
        .into_iter()
        .find(|p| p["patch_type"] == "tool_result")
        .unwrap();
    assert_eq!(result["data"]["status"], "cancelled");
}

#[test]
fn oversized_messages_are_refused_and_unoffered_models_are_an_error_on_both_transports() {
    on_both_transports(oversized);
}

fn oversized(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--max-message-bytes", "4096"]);
    let id = server.new_session(&sb);
    let big = "x".repeat(6_000);
    let (status, _) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": big})),
    );
    assert_eq!(status, 413);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send(
                "chat:send",
                json!({"session_id": id, "message": "hi", "model": "nowhere/nothing"}),
            ),
            wait_for("system:error", 1),
            send("chat:send", json!({"session_id": id, "message": big})),
            wait_for("system:error", 2),
            json!({"op": "sleep", "ms": 300}),
        ],
    );
    let error = events(&out, "system:error")[0];
    assert_eq!(error["code"], "invalid_message");
    assert_eq!(error["detail"], "model");
    assert!(
        error["message"].as_str().unwrap().contains("not offered"),
        "{error}"
    );
    // A message over the limit is said, then the server closes the connection.
    assert_eq!(
        events(&out, "system:error")[1]["code"],
        "too_large",
        "{transport}: {:#?}",
        out.records
    );
    let closed = out.of_kind("closed");
    assert_eq!(closed.len(), 1, "{transport}: {closed:?}");
    assert_eq!(closed[0]["by"], "server", "{transport}: {closed:?}");
}
