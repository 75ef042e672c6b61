//! Sub-agents seen from an editor: their tool calls are the session's, titled with the Agent
//! call and carrying its id in `_meta`; their own text stays inside them.

use super::*;

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

#[test]
fn a_sub_agents_calls_show_under_its_agent_call_and_its_text_stays_inside() {
    let sb = sandbox();
    sb.write("project/src/lib.rs", "pub fn f() {}\n");
    let server = find_sources("SUB-AGENT REPORT: src/lib.rs");
    let out = acp_with_model(
        &sb,
        &server,
        &[],
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

#[test]
fn cancelling_the_turn_stops_a_sub_agents_running_command() {
    let sb = sandbox();
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
        &["--allow", "Bash"],
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
