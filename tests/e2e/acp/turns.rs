//! The prompt turn: what `initialize` offers, streamed chunks, plans, prompt content, the model option, limits, and bad input.

use super::*;

#[test]
fn initialize_advertises_what_works() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": [{"op": "initialize", "protocolVersion": 99}]}),
    );
    let init = out.result(0);
    assert_eq!(
        init["protocolVersion"], 1,
        "answers with the version it speaks"
    );
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    for method in ["list", "resume", "close", "delete"] {
        assert!(caps["sessionCapabilities"][method].is_object(), "{caps}");
    }
    assert_eq!(init["agentInfo"]["name"], "agentry");
}

#[test]
fn a_plain_turn_streams_chunks_before_ending_the_turn() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
        piece: 4,
        ..MockReply::new(
            vec![
                Part::Thinking {
                    text: "A greeting will do.".into(),
                    signature: String::new(),
                },
                Part::Text("Hello from the mock model.".into()),
            ],
            Stop::EndTurn,
        )
    })]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![prompt("hi")])}),
    );
    let session = out.result(1);
    assert!(session["sessionId"].as_str().unwrap().starts_with("sess_"));
    assert_eq!(session["modes"]["currentModeId"], "default");
    let modes: Vec<&str> = session["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["default", "accept_edits", "plan", "bypass"]);
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(out.agent_text(), "Hello from the mock model.");
    let thought: String = out
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_thought_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(thought, "A greeting will do.");
    let chunks = out
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .count();
    assert!(chunks > 1, "the answer streams in pieces ({chunks})");
    let last_update = out
        .records
        .iter()
        .rposition(|r| r["kind"] == "update")
        .unwrap();
    assert!(
        last_update < out.position_of_answer(2),
        "updates come before the response"
    );
    let request = &server.requests()[0].body;
    assert_eq!(
        crate::user_text(&request["messages"].as_array().unwrap().last().unwrap()["content"]),
        "hi"
    );
    let usage = out
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "usage_update")
        .expect("a usage update");
    assert_eq!(usage["used"], 25, "20 input + 5 output tokens");
    assert_eq!(usage["size"], 1_047_576, "gpt-4.1's context window");
}

#[test]
fn max_turn_requests_stops_the_turn() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::tool_call(
        "call_read",
        "Read",
        json!({"file_path": "missing.txt"}),
    ))]);
    let out = acp_with_model(
        &sb,
        &server,
        &["--max-turn-requests", "1"],
        json!({"steps": session_steps(&sb, vec![prompt("read")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "max_turn_requests");
}

#[test]
fn usage_updates_carry_the_sessions_cost_and_a_budget_ends_the_turn() {
    let sb = sandbox();
    // Each answer: a million prompt tokens, $2 on GPT-4.1.
    let answer = |text: &str| {
        let mut reply = MockReply::text(text);
        reply.usage = [1_000_000, 0, 0, 0];
        MockTurn::Reply(reply)
    };
    let server = MockModelServer::start_blocking([answer("One."), answer("Two."), answer("never")]);
    let out = acp_with_model(
        &sb,
        &server,
        &["--max-budget-usd", "3.9"],
        json!({"steps": session_steps(&sb, vec![prompt("one"), prompt("two"), prompt("three")])}),
    );
    let costs: Vec<(f64, String)> = out
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .map(|u| {
            (
                u["cost"]["amount"]
                    .as_f64()
                    .expect("a cost with each usage update"),
                u["cost"]["currency"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(costs.len(), 2, "{costs:?}");
    assert!(
        (costs[0].0 - 2.0).abs() < 1e-9 && costs[0].1 == "USD",
        "{costs:?}"
    );
    assert!(
        (costs[1].0 - 4.0).abs() < 1e-9,
        "the session's cost so far: {costs:?}"
    );
    let first = out.result(2);
    assert_eq!(first["stopReason"], "end_turn");
    assert!(
        (first["_meta"]["agentry"]["costUsd"].as_f64().unwrap() - 2.0).abs() < 1e-9,
        "{first}"
    );
    // Past the budget: ACP's nearest stop reason, agentry's own in `_meta`.
    let third = out.result(4);
    assert_eq!(third["stopReason"], "max_turn_requests", "{third}");
    assert_eq!(
        third["_meta"]["agentry"]["stopReason"], "max_budget",
        "{third}"
    );
    assert_eq!(server.requests().len(), 2);
}

/// Bad input the SDK cannot produce, sent as raw lines: each gets its JSON-RPC error and the
/// agent keeps answering.
#[test]
fn malformed_input_gets_json_rpc_errors_and_the_agent_survives() {
    use std::io::{BufRead, BufReader, Write};
    let sb = sandbox();
    let mut child = sb
        .agentry(&["acp", "--model", &format!("scripted:{}", hello_script())])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Sends one line, reads one reply (and its length).
    let mut raw = |bytes: &[u8]| -> (Value, usize) {
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        let reply = lines.next().unwrap().unwrap();
        (serde_json::from_str(&reply).unwrap(), reply.len())
    };
    macro_rules! ask {
        ($line:expr $(,)?) => {
            raw($line.as_bytes()).0
        };
    }
    let init = ask!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    );
    assert_eq!(init["result"]["protocolVersion"], 1);
    let parse = ask!("{this is not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert!(parse["id"].is_null());
    // Not UTF-8, a megabyte of garbage, a line over the 64 MiB limit: each is a parse error
    // quoting at most the line's start, and the connection goes on.
    let (not_utf8, _) = raw(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xff\xfe\"}");
    assert_eq!(not_utf8["error"]["code"], -32700, "{not_utf8}");
    assert!(
        not_utf8["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not UTF-8"),
        "{not_utf8}"
    );
    let (garbage, length) = raw(format!("{{{}", "x".repeat(1 << 20)).as_bytes());
    assert_eq!(garbage["error"]["code"], -32700, "{garbage}");
    assert!(
        length < 500,
        "the reply quotes the whole line: {length} bytes"
    );
    let (oversized, length) = raw(&vec![b' '; 65 << 20]);
    assert_eq!(oversized["error"]["code"], -32700, "{oversized}");
    assert!(
        oversized["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the most is"),
        "{oversized}"
    );
    assert!(length < 500);
    let unknown = ask!(r#"{"jsonrpc":"2.0","id":2,"method":"session/teleport","params":{}}"#);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let invalid = ask!(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":42}}"#);
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    let missing = ask!(
        r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"sess_x","prompt":[]}}"#,
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let project = sb.project().display().to_string();
    let fine = ask!(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"session/new","params":{{"cwd":{project:?},"mcpServers":[]}}}}"#
    ));
    assert!(fine["result"]["sessionId"].is_string(), "{fine}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "EOF on stdin ends the agent cleanly: {status}"
    );
    // What follows is the new session's notifications (its commands), nothing else.
    for line in lines {
        let line = line.unwrap();
        let message: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("nothing but protocol messages on stdout: {line}"));
        assert_eq!(message["method"], "session/update", "{line}");
    }
}

#[test]
fn without_a_model_key_sessions_are_refused_with_auth_required() {
    let sb = sandbox();
    let out = sb.acp(
        &[],
        &[],
        json!({"steps": [
            {"op": "initialize"},
            {"op": "new_session", "cwd": sb.project().display().to_string()},
            {"op": "request", "method": "authenticate", "params": {"methodId": "environment"}},
        ]}),
    );
    let methods = &out.result(0)["authMethods"];
    assert_eq!(methods[0]["id"], "environment", "{methods}");
    for step in [1, 2] {
        let refused = out.answer(step);
        assert_eq!(refused["code"], -32000, "{refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
    }
}

#[test]
fn the_model_is_a_session_config_option() {
    let sb = sandbox();
    sb.write(
        "config/agentry/config.toml",
        "models = [\"openai/gpt-4.1-mini\"]\n",
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("small"))]);
    let set = |value: &str| {
        json!({"op": "request", "method": "session/set_config_option",
               "params": {"sessionId": "$session", "configId": "model", "value": value}})
    };
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![set("openai/gpt-4.1-mini"), set("openai/gpt-9"), prompt("hi")])}),
    );
    let option = &out.result(1)["configOptions"][0];
    assert_eq!(option["id"], "model");
    assert_eq!(option["category"], "model");
    assert_eq!(option["currentValue"], "openai/gpt-4.1");
    let values: Vec<&str> = option["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["openai/gpt-4.1", "openai/gpt-4.1-mini"]);
    assert_eq!(
        out.result(2)["configOptions"][0]["currentValue"],
        "openai/gpt-4.1-mini"
    );
    let refused = out.answer(3);
    assert_eq!(refused["code"], -32602, "{refused}");
    assert_eq!(out.result(4)["stopReason"], "end_turn");
    assert_eq!(server.requests()[0].body["model"], "gpt-4.1-mini");
}

#[test]
fn a_turn_with_a_plan_sends_plan_updates() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_plan",
            "TodoWrite",
            json!({"todos": [
                {"content": "Check for syntax errors", "status": "in_progress", "priority": "high"},
                {"content": "Suggest improvements", "status": "pending", "priority": "low"},
            ]}),
        )),
        MockTurn::Reply(MockReply::text("planned")),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![prompt("plan it")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert!(
        out.of_kind("permission").is_empty(),
        "planning needs no permission"
    );
    let plan = out
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .expect("a plan update");
    assert_eq!(
        plan["entries"],
        json!([
            {"content": "Check for syntax errors", "priority": "high", "status": "in_progress"},
            {"content": "Suggest improvements", "priority": "low", "status": "pending"},
        ])
    );
    assert_eq!(final_status(&out, "call_plan"), "completed");
}

#[test]
fn the_task_tools_chosen_in_configuration_send_the_whole_plan_with_each_change() {
    let sb = sandbox();
    sb.write(
        "config/agentry/config.toml",
        "[builtin]\ntask_list = \"tasks\"\n",
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "create",
            "TaskCreate",
            json!({"subject": "Write the parser", "description": "Tokens first"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "start",
            "TaskUpdate",
            json!({"taskId": "1", "status": "in_progress"}),
        )),
        MockTurn::Reply(MockReply::text("working on it")),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![prompt("plan it")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let offered: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"TaskCreate".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"TodoWrite".to_owned()), "{offered:?}");
    let plans: Vec<Value> = out
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .map(|u| u["entries"].clone())
        .collect();
    assert_eq!(
        plans,
        [
            json!([{"content": "Write the parser", "priority": "medium", "status": "pending"}]),
            json!([{"content": "Write the parser", "priority": "medium", "status": "in_progress"}]),
        ]
    );
}

#[test]
fn prompts_carry_images_embedded_resources_and_links_to_the_model() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("seen"))]);
    let blocks = json!([
        {"type": "text", "text": "Review this"},
        {"type": "resource", "resource": {"uri": "file:///p/main.py", "mimeType": "text/x-python", "text": "print(1)"}},
        {"type": "resource_link", "uri": "file:///p/notes.md", "name": "notes.md"},
        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![json!({"op": "prompt", "prompt": blocks})])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let content = server.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .clone();
    let text = content.to_string();
    assert!(text.contains("Review this"), "{text}");
    assert!(
        text.contains("file:///p/main.py") && text.contains("print(1)"),
        "{text}"
    );
    assert!(
        text.contains("notes.md") && text.contains("file:///p/notes.md"),
        "{text}"
    );
    assert!(
        content
            .as_array()
            .unwrap()
            .iter()
            .any(|part| part["type"] == "image_url"
                && part["image_url"]["url"] == "data:image/png;base64,aGVsbG8="),
        "{text}"
    );
}
