//! Sub-agents seen from an editor: their tool calls are the session's, titled with the Agent
//! call and carrying its id in `_meta`; their own text stays inside them. An editor that
//! advertises ACP's subagent sessions sees each sub-agent as a child session instead.

use super::*;
use crate::both_ways;
use crate::loading::{Loading, as_strs};

/// A model whose Agent call `fork_1` ("Find sources") runs a sub-agent that globs `**/*.rs` and
/// reports `report`, after which the main loop answers "One Rust file.".
fn find_sources(report: &str) -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fork_1",
            "Agent",
            json!({"description": "Find sources", "prompt": "List the Rust files"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "g",
            "Glob",
            json!({"pattern": "**/*.rs"}),
        )),
        MockTurn::Reply(MockReply::text(report)),
        MockTurn::Reply(MockReply::text("One Rust file.")),
    ])
}

both_ways!(a_sub_agents_calls_show_under_its_agent_call_and_its_text_stays_inside);
fn a_sub_agents_calls_show_under_its_agent_call_and_its_text_stays_inside(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/src/lib.rs", "pub fn f() {}\n");
    let server = find_sources("SUB-AGENT REPORT: src/lib.rs");
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&[])),
        json!({"steps": session_steps(&sb, vec![prompt("find the sources")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    // Only the main loop's answer is the agent's message.
    assert_eq!(out.agent_text(), "One Rust file.");
    let agent_call = tool_updates(&out, "fork_1");
    assert_eq!(agent_call[0]["title"], "Find sources");
    assert_eq!(agent_call[0]["kind"], "think");
    assert_eq!(final_status(&out, "fork_1"), "completed");
    let glob = tool_updates(&out, "g");
    assert_eq!(glob[0]["sessionUpdate"], "tool_call");
    assert_eq!(glob[0]["title"], "Find sources \u{203a} Glob **/*.rs");
    for update in &glob {
        assert_eq!(
            update["_meta"]["agentry"]["parentToolCallId"], "fork_1",
            "{update}"
        );
    }
    assert_eq!(final_status(&out, "g"), "completed");
}

both_ways!(cancelling_the_turn_stops_a_sub_agents_running_command);
fn cancelling_the_turn_stops_a_sub_agents_running_command(loading: Loading) {
    let sb = loading.sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fork_1",
            "Agent",
            json!({"description": "Wait a while", "prompt": "Run the long job"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "sub_bash",
            "Bash",
            json!({"command": "echo $$ > pid.txt; exec sleep 30", "description": "wait"}),
        )),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&["--allow", "Bash"])),
        json!({"steps": session_steps(&sb, vec![json!({"op": "prompt", "text": "wait", "cancelAfterMs": 1500})])}),
    );
    assert_cancelled_cleanly(&out, 2);
    assert_eq!(final_status(&out, "sub_bash"), "failed");
    assert_eq!(final_status(&out, "fork_1"), "failed");
    assert!(
        process_gone(pid_in(&sb, "pid.txt")),
        "the sub-agent's command still runs"
    );
}

#[test]
fn a_reloaded_session_shows_its_sub_agents_calls_under_their_agent_call() {
    let sb = sandbox();
    sb.write("project/src/lib.rs", "pub fn f() {}\n");
    let first = find_sources("SUB-AGENT REPORT");
    let before = acp_with_model(
        &sb,
        &first,
        &[],
        json!({"steps": session_steps(&sb, vec![prompt("find the sources")])}),
    );
    let id = before.result(1)["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(before.result(2)["stopReason"], "end_turn");

    let second = MockModelServer::start_blocking([]);
    let project = sb.project().display().to_string();
    let after = acp_with_model(
        &sb,
        &second,
        &[],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "request", "method": "session/load", "params": {"sessionId": id, "cwd": project, "mcpServers": []}},
        ]}),
    );
    assert!(after.result(1).is_object());
    let replayed: Vec<&Value> = after
        .records
        .iter()
        .take(after.position_of_answer(1))
        .filter(|r| r["kind"] == "update")
        .map(|r| &r["update"])
        .collect();
    let glob = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "g")
        .expect("the sub-agent's call is replayed");
    assert_eq!(glob["title"], "Find sources \u{203a} Glob **/*.rs");
    assert_eq!(glob["_meta"]["agentry"]["parentToolCallId"], "fork_1");
    let text: String = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "One Rust file.");
}

#[test]
fn a_client_with_subagent_sessions_sees_each_sub_agent_as_a_child_session() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fork_1",
            "Agent",
            json!({"description": "Take notes", "prompt": "Write the notes"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "w",
            "Write",
            json!({"file_path": sb.project().join("notes.txt"), "content": "notes\n"}),
        )),
        MockTurn::Reply(MockReply::text("SUB-AGENT REPORT")),
        MockTurn::Reply(MockReply::text("Notes taken.")),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({
            "unstable": true,
            "clientCapabilities": {"subagents": {}},
            "permissions": ["allow_once"],
            "steps": session_steps(&sb, vec![prompt("take notes")]),
        }),
    );
    assert_eq!(
        out.result(2)["stopReason"],
        "end_turn",
        "{:#?}",
        out.records
    );
    let main = out.result(1)["sessionId"].as_str().unwrap().to_owned();
    let child = format!("{main}~loop_fork_1");
    let updates: Vec<(&str, &Value)> = out
        .of_kind("update")
        .into_iter()
        .map(|r| (r["sessionId"].as_str().unwrap(), &r["update"]))
        .collect();
    let position = |wanted: &dyn Fn(&str, &Value) -> bool| {
        updates
            .iter()
            .position(|(session, update)| wanted(session, update))
            .unwrap_or_else(|| panic!("not sent: {updates:#?}"))
    };
    // Announced on the main session, with the Agent call's title, before its own traffic.
    let announced = position(&|session, u| {
        session == main && u["sessionUpdate"] == "subagent_update" && u["sessionId"] == child
    });
    assert_eq!(updates[announced].1["title"], "Take notes");
    let first_of_child = position(&|session, _| session == child);
    assert!(announced < first_of_child);
    // Its calls and its text are the child session's, shown as any session's.
    let write = position(&|_, u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "w");
    assert_eq!(updates[write].0, child);
    let title = updates[write].1["title"].as_str().unwrap();
    assert!(
        title.starts_with("Write ") && title.ends_with("notes.txt"),
        "no sub-agent prefix: {title}"
    );
    assert!(updates[write].1.get("_meta").is_none());
    let text_of = |wanted: &str| -> String {
        updates
            .iter()
            .filter(|(session, u)| {
                *session == wanted && u["sessionUpdate"] == "agent_message_chunk"
            })
            .filter_map(|(_, u)| u["content"]["text"].as_str())
            .collect()
    };
    assert_eq!(text_of(&child), "SUB-AGENT REPORT");
    assert_eq!(text_of(&main), "Notes taken.");
    // Its permission question is asked in its session.
    let asked = out.of_kind("permission");
    assert_eq!(asked[0]["sessionId"], child);
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "w");
    assert_eq!(
        std::fs::read_to_string(sb.project().join("notes.txt")).unwrap(),
        "notes\n"
    );
    // When the Agent call ends, the child goes idle.
    let agent_done = position(&|session, u| {
        session == main && u["toolCallId"] == "fork_1" && u["status"] == "completed"
    });
    let idle = position(&|session, u| {
        session == main
            && u["sessionUpdate"] == "subagent_update"
            && u["sessionId"] == child
            && u.get("title").is_none()
    });
    assert!(agent_done < idle, "{updates:#?}");
    assert!(
        updates[idle].1["state"].to_string().contains("idle"),
        "{}",
        updates[idle].1
    );
}
