//! Sessions: unknown ids, load with replay, several at once, list / resume / close / delete.

use super::*;

#[test]
fn unknown_sessions_are_clear_errors() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "hi"}]}},
            {"op": "request", "method": "session/load", "params": {"sessionId": "sess_nope", "cwd": "/", "mcpServers": []}},
            {"op": "request", "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}},
        ]}),
    );
    for step in [1, 2] {
        let error = out.answer(step);
        assert_eq!(error["code"], -32002, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains("sess_nope"),
            "{error}"
        );
    }
    let relative = out.answer(3);
    assert_eq!(relative["code"], -32602);
    assert!(
        relative["message"].as_str().unwrap().contains("absolute"),
        "{relative}"
    );
}

#[test]
fn session_load_replays_the_history_after_a_restart() {
    let sb = sandbox();
    let first = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_0",
            "Write",
            json!({"file_path": "notes.txt", "content": "remember\n"}),
        )),
        MockTurn::Reply(MockReply::text("Noted.")),
    ]);
    let before = acp_with_model(
        &sb,
        &first,
        &["--allow", "Write"],
        json!({"steps": session_steps(&sb, vec![prompt("remember this")])}),
    );
    let id = before.result(1)["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(before.result(2)["stopReason"], "end_turn");

    let second = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("Still here."))]);
    let project = sb.project().display().to_string();
    let after = acp_with_model(
        &sb,
        &second,
        &[],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "request", "method": "session/load", "params": {"sessionId": id, "cwd": project, "mcpServers": []}},
            {"op": "prompt", "text": "and now?", "sessionId": id},
        ]}),
    );
    let loaded = after.result(1);
    assert_eq!(loaded["modes"]["currentModeId"], "default");
    let replayed: Vec<&Value> = after
        .records
        .iter()
        .take(after.position_of_answer(1))
        .filter(|r| r["kind"] == "update")
        .map(|r| &r["update"])
        .collect();
    assert!(
        replayed
            .iter()
            .all(|u| u["sessionUpdate"] != "tool_call" || u["toolCallId"] == "call_0")
    );
    assert_eq!(replayed[0]["sessionUpdate"], "user_message_chunk");
    assert_eq!(replayed[0]["content"]["text"], "remember this");
    let tool_call = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .expect("the tool call is replayed");
    assert_eq!(tool_call["title"], "Write notes.txt");
    let finished = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .expect("with its final status");
    assert_eq!(finished["content"][0]["type"], "diff");
    let text: String = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "Noted.");
    assert_eq!(after.result(2)["stopReason"], "end_turn");
    let history = second.requests()[0].body["messages"].to_string();
    assert!(
        history.contains("remember this") && history.contains("Noted."),
        "the loaded session continues with its history: {history}"
    );
}

#[test]
fn several_sessions_run_their_turns_side_by_side() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply {
            pause_before_last: Some(std::time::Duration::from_millis(500)),
            ..MockReply::text("one")
        }),
        MockTurn::Reply(MockReply {
            pause_before_last: Some(std::time::Duration::from_millis(500)),
            ..MockReply::text("two")
        }),
    ]);
    let project = sb.project().display().to_string();
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new_session", "cwd": project},
            {"op": "prompt", "text": "first", "noWait": true},
            {"op": "new_session", "cwd": project},
            {"op": "prompt", "text": "second", "noWait": true},
            {"op": "wait"},
        ]}),
    );
    let first = out.result(1)["sessionId"].clone();
    let second = out.result(3)["sessionId"].clone();
    assert_ne!(first, second);
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(out.result(4)["stopReason"], "end_turn");
    let sessions_updated: std::collections::BTreeSet<String> = out
        .of_kind("update")
        .iter()
        .map(|r| r["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        sessions_updated.len(),
        2,
        "each session got its own updates"
    );
    let second_began = out
        .records
        .iter()
        .position(|r| r["kind"] == "update" && r["sessionId"] == second)
        .unwrap();
    assert!(
        second_began < out.position_of_answer(2),
        "the second session streamed while the first turn was still running"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn sessions_are_listed_resumed_closed_and_deleted() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("first")),
        MockTurn::Reply(MockReply::text("again")),
    ]);
    let project = sb.project().display().to_string();
    let session = |method: &str| json!({"op": "request", "method": method, "params": {"sessionId": "$session", "cwd": project, "mcpServers": []}});
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            prompt("name this session"),
            json!({"op": "request", "method": "session/list", "params": {"cwd": project}}),
            json!({"op": "request", "method": "session/list", "params": {"cwd": "/elsewhere"}}),
            session("session/close"),
            json!({"op": "prompt", "text": "closed?"}),
            session("session/resume"),
            json!({"op": "prompt", "text": "resumed"}),
            session("session/delete"),
            json!({"op": "request", "method": "session/list", "params": {}}),
            session("session/load"),
        ])}),
    );
    let id = out.result(1)["sessionId"].clone();
    let listed = &out.result(3)["sessions"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["sessionId"], id);
    assert_eq!(listed[0]["title"], "name this session");
    assert!(listed[0]["updatedAt"].is_string());
    assert_eq!(out.result(4)["sessions"], json!([]), "filtered by cwd");
    out.result(5);
    assert_eq!(
        out.answer(6)["code"],
        -32002,
        "a closed session takes no prompts"
    );
    out.result(7);
    assert_eq!(out.result(8)["stopReason"], "end_turn");
    let history = server.requests()[1].body["messages"].to_string();
    assert!(
        history.contains("name this session"),
        "resumed with its history: {history}"
    );
    out.result(9);
    assert_eq!(out.result(10)["sessions"], json!([]));
    assert_eq!(
        out.answer(11)["code"],
        -32002,
        "a deleted session cannot be loaded"
    );
}
