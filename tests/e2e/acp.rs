//! `agentry acp` driven by the official ACP TypeScript SDK (`tests/peers/acp-client.mjs`), with
//! the model served by the mock model server.

use crate::{bash_then_answer, pid_in, process_gone, sandbox};
use agentry_tests::Sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Part, Stop};
use agentry_tests::peers::Transcript;
use serde_json::{Value, json};

/// `agentry acp --model openai/gpt-4.1 ARGS` against `server`, under the test client.
fn acp_with_model(
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
fn session_steps(sb: &Sandbox, steps: Vec<Value>) -> Vec<Value> {
    let mut all = vec![
        json!({"op": "initialize"}),
        json!({"op": "new_session", "cwd": sb.project().display().to_string()}),
    ];
    all.extend(steps);
    all
}

fn prompt(text: &str) -> Value {
    json!({"op": "prompt", "text": text})
}

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
        request["messages"].as_array().unwrap().last().unwrap()["content"],
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

/// A model that writes `greeting.txt`, then answers `done`.
fn write_then_answer(turns: usize) -> MockModelServer {
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

fn tool_updates<'a>(out: &'a Transcript, id: &str) -> Vec<&'a Value> {
    out.updates()
        .into_iter()
        .filter(|u| u["toolCallId"] == id)
        .collect()
}

fn final_status(out: &Transcript, id: &str) -> String {
    tool_updates(out, id)
        .iter()
        .filter_map(|u| u["status"].as_str())
        .next_back()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn allowing_once_runs_the_call_and_its_diff_reaches_the_client() {
    let sb = sandbox();
    let server = write_then_answer(1);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"permissions": ["allow_once"], "steps": session_steps(&sb, vec![prompt("write it")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let asked = out.of_kind("permission");
    assert_eq!(asked.len(), 1);
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert_eq!(asked[0]["toolCall"]["toolCallId"], "call_0");
    assert_eq!(asked[0]["toolCall"]["kind"], "edit");
    let file = sb.project().join("greeting0.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");
    let updates = tool_updates(&out, "call_0");
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    // `pending` is the default status, which the SDK's types leave out of the wire.
    assert!(updates[0]["status"].is_null() || updates[0]["status"] == "pending");
    assert_eq!(updates[0]["title"], "Write greeting0.txt");
    assert_eq!(updates[0]["rawInput"]["content"], "hello\n");
    assert!(
        updates[0]["locations"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("/greeting0.txt")
    );
    let statuses: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["status"].as_str())
        .collect();
    assert_eq!(statuses, ["in_progress", "completed"]);
    let diff = updates
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .find(|c| c["type"] == "diff")
        .expect("a diff");
    assert_eq!(diff["newText"], "hello\n");
    assert!(diff["oldText"].is_null());
    assert!(diff["path"].as_str().unwrap().ends_with("/greeting0.txt"));
}

#[test]
fn rejecting_once_fails_the_call_and_leaves_the_file_alone() {
    let sb = sandbox();
    let server = write_then_answer(1);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"permissions": ["reject_once"], "steps": session_steps(&sb, vec![prompt("write it")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(final_status(&out, "call_0"), "failed");
    assert!(!sb.project().join("greeting0.txt").exists());
    let told = &server.requests()[1].body["messages"];
    assert!(told.to_string().contains("rejected"), "{told}");
}

#[test]
fn always_answers_are_not_asked_again_in_the_session() {
    for (answer, second_status, file_written) in [
        ("allow_always", "completed", true),
        ("reject_always", "failed", false),
    ] {
        let sb = sandbox();
        let server = write_then_answer(2);
        let out = acp_with_model(
            &sb,
            &server,
            &[],
            json!({"permissions": [answer], "steps": session_steps(&sb, vec![prompt("one"), prompt("two")])}),
        );
        assert_eq!(out.of_kind("permission").len(), 1, "{answer}: asked once");
        assert_eq!(final_status(&out, "call_1"), second_status, "{answer}");
        assert_eq!(
            sb.project().join("greeting1.txt").exists(),
            file_written,
            "{answer}"
        );
    }
}

#[test]
fn set_mode_answers_with_current_mode_update_and_applies_to_the_next_turn() {
    let sb = sandbox();
    let server = write_then_answer(1);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "request", "method": "session/set_mode", "params": {"sessionId": "$session", "modeId": "accept_edits"}}),
            prompt("write it"),
            json!({"op": "request", "method": "session/set_mode", "params": {"sessionId": "$session", "modeId": "yolo"}}),
        ])}),
    );
    out.result(2);
    assert!(out.updates().iter().any(
        |u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "accept_edits"
    ));
    assert!(
        out.of_kind("permission").is_empty(),
        "accept_edits runs file edits without asking"
    );
    assert_eq!(final_status(&out, "call_0"), "completed");
    let bad = out.answer(4);
    assert_eq!(bad["code"], -32602);
    assert!(bad["message"].as_str().unwrap().contains("yolo"), "{bad}");
}

#[test]
fn a_second_prompt_while_a_turn_runs_is_refused_and_the_first_goes_on() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
        pause_before_last: Some(std::time::Duration::from_millis(800)),
        piece: 3,
        ..MockReply::text("slow answer")
    })]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "prompt", "text": "first", "noWait": true}),
            json!({"op": "prompt", "text": "second", "cancelAfterMs": 2000}),
            json!({"op": "wait"}),
        ])}),
    );
    let refused = out.answer(3);
    assert_eq!(refused["kind"], "error");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("already running"),
        "{refused}"
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(server.requests().len(), 1);
}

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

fn assert_cancelled_cleanly(out: &Transcript, step: usize) {
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

#[test]
fn cancelling_during_the_model_stream_ends_the_turn_cancelled() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply {
        stall_after: Some(600),
        piece: 2,
        ..MockReply::text("this answer never finishes arriving")
    })]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![json!({"op": "prompt", "text": "hi", "cancelAfterMs": 1000})])}),
    );
    assert_cancelled_cleanly(&out, 2);
    assert!(!out.agent_text().is_empty(), "the answer had begun");
    assert!(server.client_hung_up(), "the model request was dropped");
}

#[test]
fn cancelling_during_a_command_ends_the_turn_and_the_process() {
    let sb = sandbox();
    let server = bash_then_answer("echo $$ > pid.txt; exec sleep 30");
    let out = acp_with_model(
        &sb,
        &server,
        &["--allow", "Bash"],
        json!({"steps": session_steps(&sb, vec![json!({"op": "prompt", "text": "wait", "cancelAfterMs": 1500})])}),
    );
    assert_cancelled_cleanly(&out, 2);
    assert_eq!(final_status(&out, "call_bash"), "failed");
    assert!(
        process_gone(pid_in(&sb, "pid.txt")),
        "the command still runs"
    );
}

#[test]
fn cancelling_while_permission_is_asked_ends_the_turn_cancelled() {
    let sb = sandbox();
    let server = write_then_answer(1);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"permissions": ["cancel"], "steps": session_steps(&sb, vec![prompt("write it")])}),
    );
    assert_eq!(out.of_kind("permission").len(), 1);
    assert_cancelled_cleanly(&out, 2);
    assert_eq!(final_status(&out, "call_0"), "failed");
    assert!(!sb.project().join("greeting0.txt").exists());
    assert_eq!(
        server.requests().len(),
        1,
        "no model request after the cancellation"
    );
}

#[test]
fn hanging_up_stops_running_commands_and_the_agent() {
    let sb = sandbox();
    let server = bash_then_answer("echo $$ > pid.txt; exec sleep 30");
    let out = acp_with_model(
        &sb,
        &server,
        &["--allow", "Bash"],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "prompt", "text": "wait", "noWait": true}),
            json!({"op": "sleep", "ms": 1500}),
            json!({"op": "close_stdin"}),
        ])}),
    );
    let exit = out.of_kind("exit");
    assert_eq!(exit[0]["code"], 0, "{:#?}", out.records);
    assert!(
        process_gone(pid_in(&sb, "pid.txt")),
        "the command outlived the agent"
    );
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
    let mut ask = |line: &str| -> Value {
        writeln!(stdin, "{line}").unwrap();
        serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap()
    };
    let init = ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#,
    );
    assert_eq!(init["result"]["protocolVersion"], 1);
    let parse = ask("{this is not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert!(parse["id"].is_null());
    let unknown = ask(r#"{"jsonrpc":"2.0","id":2,"method":"session/teleport","params":{}}"#);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let invalid = ask(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":42}}"#);
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    let missing = ask(
        r#"{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"sess_x","prompt":[]}}"#,
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let project = sb.project().display().to_string();
    let fine = ask(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"session/new","params":{{"cwd":{project:?},"mcpServers":[]}}}}"#
    ));
    assert!(fine["result"]["sessionId"].is_string(), "{fine}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "EOF on stdin ends the agent cleanly: {status}"
    );
    assert!(
        lines.next().is_none(),
        "nothing but protocol messages on stdout"
    );
}

fn hello_script() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/scripts/hello.json"
    )
    .to_owned()
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
fn file_tools_go_through_the_clients_fs_methods_when_offered() {
    let sb = sandbox();
    let file = sb.project().join("app.py");
    std::fs::write(&file, "print('saved')\n").unwrap();
    let path = file.display().to_string();
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "call_read",
            "Read",
            json!({"file_path": "app.py"}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "call_edit",
            "Edit",
            json!({"file_path": "app.py", "old_string": "unsaved", "new_string": "edited"}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &["--permission-mode", "accept_edits"],
        json!({
            "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}},
            "buffers": {path.clone(): "print('unsaved')\n"},
            "steps": session_steps(&sb, vec![prompt("edit it")]),
        }),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let fs: Vec<(String, String)> = out
        .of_kind("fs")
        .iter()
        .map(|r| {
            (
                r["op"].as_str().unwrap().to_owned(),
                r["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        fs,
        [
            ("read".into(), path.clone()),
            ("read".into(), path.clone()),
            ("write".into(), path.clone())
        ]
    );
    let written = out.of_kind("fs").last().unwrap()["content"].clone();
    assert_eq!(written, "print('edited')\n");
    let read_result = server.requests()[1].body["messages"].to_string();
    assert!(
        read_result.contains("unsaved"),
        "Read saw the editor's buffer: {read_result}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "print('saved')\n",
        "the disk is left to the editor"
    );
}

#[test]
fn bash_runs_in_the_clients_terminal_when_offered() {
    let sb = sandbox();
    let (server, out) =
        bash_in_client_terminal(&sb, "echo from-the-editor; exit 3", prompt("run it"));
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let ops = terminal_ops(&out);
    assert_eq!(ops, ["create", "wait_for_exit", "output", "release"]);
    let created = out.of_kind("terminal")[0];
    assert_eq!(created["command"], "bash");
    let terminal_id = created["terminalId"].as_str().unwrap();
    let embedded = tool_updates(&out, "call_bash")
        .iter()
        .flat_map(|u| u["content"].as_array().into_iter().flatten())
        .any(|c| c["type"] == "terminal" && c["terminalId"] == terminal_id);
    assert!(embedded, "the tool call shows the client's terminal");
    assert_eq!(final_status(&out, "call_bash"), "failed", "exit code 3");
    let told = server.requests()[1].body["messages"].to_string();
    assert!(
        told.contains("from-the-editor") && told.contains("exit code 3"),
        "{told}"
    );
}

#[test]
fn cancelling_kills_the_command_in_the_clients_terminal() {
    let sb = sandbox();
    let cancel_soon = json!({"op": "prompt", "text": "wait", "cancelAfterMs": 1500});
    let (_server, out) =
        bash_in_client_terminal(&sb, "echo $$ > pid.txt; exec sleep 30", cancel_soon);
    assert_cancelled_cleanly(&out, 2);
    let ops = terminal_ops(&out);
    assert!(
        ops.contains(&"kill") && ops.last() == Some(&"release"),
        "{ops:?}"
    );
    assert!(process_gone(pid_in(&sb, "pid.txt")));
}

#[test]
fn mcp_servers_passed_with_the_session_serve_its_tools() {
    let sb = sandbox();
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
        &[],
        json!({"steps": with_everything_server(&sb, Some(broken), vec![
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
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("reviewed"))]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            prompt("/review src/lib.rs error paths"),
            prompt("/review"),
        ])}),
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
            {"name": "explain", "description": "Run the explain prompt"},
            {"name": "review", "description": "Review a file", "input": {"hint": "<file> [focus]"}},
        ])
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(
        sent.contains("Review src/lib.rs; focus on error paths."),
        "{sent}"
    );
    let missing = out.answer(3);
    assert_eq!(missing["code"], -32602, "{missing}");
    assert!(
        missing["message"].as_str().unwrap().contains("file"),
        "{missing}"
    );
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

#[test]
fn a_session_servers_prompts_are_slash_commands() {
    let sb = sandbox();
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
        &[],
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
    let missing = out.answer(4);
    assert_eq!(missing["code"], -32602, "{missing}");
    assert!(
        missing["message"].as_str().unwrap().contains("city"),
        "{missing}"
    );
}

#[test]
fn a_servers_new_prompts_are_announced_again() {
    let sb = sandbox();
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
        "command": env!("CARGO_BIN_EXE_agentry"),
        "args": ["mcp", "serve"],
        "env": [{"name": "XDG_CONFIG_HOME", "value": served_config.display().to_string()}],
    });
    let new_template = served_config.join("agentry/prompts/deploy.md");
    let out = acp_with_model(
        &sb,
        &server,
        &[],
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

#[test]
fn the_configured_servers_prompts_are_slash_commands_too() {
    let sb = sandbox();
    let (command, args) = agentry_tests::peers::everything_server();
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"everything": {"command": command, "args": args}}}).to_string(),
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("simple"))]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![
            json!({"op": "wait_for_command", "name": "simple-prompt"}),
            prompt("/simple-prompt"),
        ])}),
    );
    assert_eq!(out.result(3)["stopReason"], "end_turn");
    let sent = server.requests()[0].body["messages"].to_string();
    assert!(sent.contains("This is a simple prompt"), "{sent}");
}

#[test]
fn a_configured_server_that_hangs_holds_up_nothing() {
    let sb = sandbox();
    sb.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"silent": {"command": "sleep", "args": ["600"]}}}).to_string(),
    );
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("here"))]);
    let out = acp_with_model(
        &sb,
        &server,
        &[],
        json!({"steps": session_steps(&sb, vec![prompt("hi")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    // Waiting for it would have taken its 30 s startup timeout, and said so.
    assert!(!out.stderr.contains("no answer within"), "{}", out.stderr);
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("mcp__silent__"), "{offered}");
}

/// `initialize`, then `session/new` with the reference MCP server (and `another`), then `steps`.
fn with_everything_server(sb: &Sandbox, another: Option<Value>, steps: Vec<Value>) -> Vec<Value> {
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

/// The client terminal methods the agent called, in order.
fn terminal_ops(out: &Transcript) -> Vec<&str> {
    out.of_kind("terminal")
        .into_iter()
        .map(|r| r["op"].as_str().unwrap())
        .collect()
}

/// A turn (`step`) whose model runs `command` with Bash (allowed), in a client that offers
/// terminals.
fn bash_in_client_terminal(
    sb: &Sandbox,
    command: &str,
    step: Value,
) -> (MockModelServer, Transcript) {
    let server = bash_then_answer(command);
    let out = acp_with_model(
        sb,
        &server,
        &["--allow", "Bash"],
        json!({
            "clientCapabilities": {"terminal": true},
            "steps": session_steps(sb, vec![step]),
        }),
    );
    (server, out)
}
