//! MCP servers passed with a session, and slash commands: prompt templates and MCP prompts;
//! with the MCP client linked and loaded as a plugin.

use super::*;
use crate::both_ways;
use crate::loading::{Loading, as_strs};

both_ways!(mcp_servers_passed_with_the_session_serve_its_tools);
fn mcp_servers_passed_with_the_session_serve_its_tools(loading: Loading) {
    let sb = loading.sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_echo",
            "mcp__everything__echo",
            json!({"message": "over ACP"}),
        )),
        MockTurn::Reply(MockReply::text("echoed")),
    ]);
    let broken = json!({"name": "broken", "command": "/nonexistent/server", "args": [], "env": []});
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&[])),
        json!({"permissions": ["allow_once"], "steps": with_everything_server(&sb, Some(broken), vec![
            // The server starts in the background; its prompts say it is up.
            json!({"op": "wait_for_command", "name": "simple-prompt"}),
            prompt("echo it"),
        ])}),
    );
    assert_eq!(
        out.result(0)["agentCapabilities"]["mcpCapabilities"]["http"],
        true
    );
    assert_eq!(out.result(3)["stopReason"], "end_turn");
    assert_eq!(final_status(&out, "call_echo"), "completed");
    let told = server.requests()[1].body["messages"].to_string();
    assert!(told.contains("Echo: over ACP"), "{told}");
    assert!(
        out.stderr.contains("MCP server `broken` did not start"),
        "{}",
        out.stderr
    );
}

#[test]
fn prompt_templates_are_slash_commands() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/prompts/review.md",
        "---\ndescription: Review a file\narguments:\n  - name: file\n    required: true\n  - name: focus\n---\nReview {{file}}; focus on {{focus}}.\n",
    );
    sb.write(
        "config/agentry/prompts/explain.md",
        "Explain the project.\n",
    );
    let (server, out) = answering(
        &sb,
        "reviewed",
        vec![prompt("/review src/lib.rs error paths"), prompt("/review")],
    );
    let announced = out
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .expect("the commands are announced");
    assert!(
        out.records
            .iter()
            .position(|r| r["kind"] == "update")
            .unwrap()
            > out.position_of_answer(1),
        "after the session exists"
    );
    assert_eq!(
        announced["availableCommands"],
        json!([
            {"name": "explain", "description": "Explain the project."},
            {"name": "review", "description": "Review a file", "input": {"hint": "<file> [focus]"}},
            {"name": "rewind", "description": "Rewind the files and the conversation to before a message", "input": {"hint": "[N] [files|conversation] [overwrite|keep]"}},
            {"name": "compact", "description": "Replace the conversation by a summary, to free the context", "input": {"hint": "[what the summary should keep]"}},
        ])
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("Review src/lib.rs; focus on error paths."),
        "{sent}"
    );
    assert_invalid_params(&out, 3, "file");
}

both_ways!(a_session_servers_prompts_are_slash_commands);
fn a_session_servers_prompts_are_slash_commands(loading: Loading) {
    let sb = loading.sandbox();
    sb.write("project/.agentry/prompts/tidy.md", "Tidy the code.\n");
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("sunny"))]);
    let steps = vec![
        json!({"op": "wait_for_command", "name": "args-prompt"}),
        prompt("/args-prompt Paris"),
        prompt("/args-prompt"),
    ];
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&[])),
        json!({"steps": with_everything_server(&sb, None, steps)}),
    );
    // The templates are announced at once; the server's prompts when it has started.
    let announced = out
        .updates()
        .into_iter()
        .rev()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .expect("the commands are announced");
    let commands = announced["availableCommands"].as_array().unwrap();
    let args_prompt = commands
        .iter()
        .find(|c| c["name"] == "args-prompt")
        .unwrap_or_else(|| panic!("{announced}"));
    assert_eq!(args_prompt["input"]["hint"], "<city> [state]");
    assert!(
        commands.iter().any(|c| c["name"] == "tidy"),
        "templates too: {announced}"
    );
    assert_eq!(out.result(3)["stopReason"], "end_turn");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("What's weather in Paris?"), "{sent}");
    assert_invalid_params(&out, 4, "city");
}

both_ways!(a_servers_new_prompts_are_announced_again);
fn a_servers_new_prompts_are_announced_again(loading: Loading) {
    let sb = loading.sandbox();
    // The session's MCP server is agentry itself (`agentry mcp serve`), with prompt
    // templates of its own.
    let served_config = sb.project().parent().unwrap().join("served-config");
    sb.write(
        "served-config/agentry/prompts/standup.md",
        "Write the standup notes.\n",
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("deployed"))]);
    let agentry = json!({
        "name": "templates",
        "command": crate::agentry_binary(),
        "args": ["mcp", "serve"],
        "env": [{"name": "XDG_CONFIG_HOME", "value": served_config.display().to_string()}],
    });
    let new_template = served_config.join("agentry/prompts/deploy.md");
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&[])),
        json!({"steps": [
            json!({"op": "initialize"}),
            json!({"op": "new_session", "cwd": sb.project().display().to_string(), "mcpServers": [agentry]}),
            json!({"op": "wait_for_command", "name": "standup"}),
            json!({"op": "write_file", "path": new_template, "text": "---\ndescription: Ship it\n---\nDeploy the service.\n"}),
            json!({"op": "wait_for_command", "name": "deploy"}),
            prompt("/deploy"),
        ]}),
    );
    let last = out
        .updates()
        .into_iter()
        .rev()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .unwrap();
    let deploy = last["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "deploy")
        .unwrap_or_else(|| panic!("{last}"));
    assert_eq!(deploy["description"], "Ship it");
    assert_eq!(out.result(5)["stopReason"], "end_turn");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("Deploy the service."), "{sent}");
}

both_ways!(the_configured_servers_prompts_are_slash_commands_too);
fn the_configured_servers_prompts_are_slash_commands_too(loading: Loading) {
    let sb = loading.sandbox();
    crate::configure_everything_server(&sb);
    let (server, out) = answering_with(
        &sb,
        &as_strs(&loading.args(&[])),
        "simple",
        vec![
            json!({"op": "wait_for_command", "name": "simple-prompt"}),
            prompt("/simple-prompt"),
        ],
    );
    assert_eq!(out.result(3)["stopReason"], "end_turn");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("This is a simple prompt"), "{sent}");
}

both_ways!(a_configured_server_that_hangs_holds_up_nothing);
fn a_configured_server_that_hangs_holds_up_nothing(loading: Loading) {
    let sb = loading.sandbox();
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"silent": {"command": "sleep", "args": ["600"]}}}).to_string(),
    );
    let (server, out) = answering_with(
        &sb,
        &as_strs(&loading.args(&[])),
        "here",
        vec![prompt("hi")],
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    // Waiting for it would have taken its 30 s startup timeout, and said so.
    assert!(!out.stderr.contains("no answer within"), "{}", out.stderr);
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("mcp__silent__"), "{offered}");
}

both_ways!(a_starting_servers_tools_are_disabled_by_the_names_the_mcp_provider_gives_them);
fn a_starting_servers_tools_are_disabled_by_the_names_the_mcp_provider_gives_them(
    loading: Loading,
) {
    let sb = loading.sandbox();
    // `docs.v2` is `docs_v2` in its tools' names; it never answers, so its tools are unknown.
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"docs.v2": {"command": "sleep", "args": ["600"]}}}).to_string(),
    );
    sb.write(
        "project/.agentry/config.toml",
        "[tools]\ndisabled = [\"mcp__docs_v2__search\"]\n",
    );
    let (_, out) = answering_with(
        &sb,
        &as_strs(&loading.args(&[])),
        "here",
        vec![prompt("hi")],
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn", "{}", out.stderr);
    assert!(!out.stderr.contains("[tools] disabled"), "{}", out.stderr);
}

both_ways!(the_users_mcp_timeouts_apply_to_the_servers_a_client_passes);
fn the_users_mcp_timeouts_apply_to_the_servers_a_client_passes(loading: Loading) {
    let sb = loading.sandbox();
    sb.write(
        "config/agentry/config.toml",
        "[mcp]\nstartup_timeout_secs = 1\n",
    );
    let silent = json!({"name": "silent", "command": "sleep", "args": ["600"], "env": []});
    let out = acp_with_model(
        &sb,
        &MockModelServer::start_blocking([]),
        &as_strs(&loading.args(&[])),
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new_session", "cwd": sb.project().display().to_string(), "mcpServers": [silent]},
            {"op": "sleep", "ms": 2500},
        ]}),
    );
    assert!(out.result(1)["sessionId"].is_string(), "{out:?}");
    // With the default (30 s) it would still be starting.
    assert!(
        out.stderr
            .contains("MCP server `silent` did not start: no answer within 1 s"),
        "{}",
        out.stderr
    );
}

#[test]
fn compact_replaces_the_conversation_by_a_summary_written_as_the_user_asks() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("The parser lives in src/parse.rs.")),
        MockTurn::Reply(MockReply::text("We found the parser in src/parse.rs.")),
        MockTurn::Reply(MockReply::text("Yes.")),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            prompt("Where is the parser?"),
            prompt("/compact Keep the file names."),
            prompt("Still there?"),
        ])}),
    );
    assert_eq!(out.result(3)["stopReason"], "end_turn");
    assert!(
        out.agent_text().contains(
            "The conversation was compacted as asked: 2 earlier messages were summarised"
        ),
        "{}",
        out.agent_text()
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let asked = requests[1].body["messages"].to_string();
    assert!(
        asked.contains("The user's instructions for this summary: Keep the file names."),
        "{asked}"
    );
    let after = requests[2].body["messages"].to_string();
    assert!(
        after.contains("[Summary of the earlier conversation]"),
        "{after}"
    );
    assert!(!after.contains("Where is the parser?"), "{after}");
}

#[test]
fn an_automatic_compaction_shows_as_a_thought_of_the_agent() {
    let sb = sandbox();
    let server = crate::compaction::pruning_in_a_small_window(&sb, "openai");
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![prompt("What is in big.txt?"), prompt("And now?")])}),
    );
    assert_eq!(out.result(3)["stopReason"], "end_turn");
    let thoughts: String = out
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_thought_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(
        thoughts.contains(
            "The conversation was compacted: 1 older tool results were replaced by a note"
        ),
        "{thoughts}"
    );
    assert!(
        !out.agent_text().contains("compacted"),
        "not part of the answer: {}",
        out.agent_text()
    );
}
