//! The protocol's flows on both transports, beyond their exact sequences (`sequences`): a plain
//! answer against the stored turns, a paused question with an unfit answer, a permission request
//! answered by the client.

use super::{Server, deploy_question, events, on_both_transports, outline, send, wait_for};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[test]
fn a_plain_answer_streams_in_the_protocols_order_on_both_transports() {
    on_both_transports(plain_answer);
}

fn plain_answer(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text(
        "Paris is the capital.",
    ))]);
    let server = Server::start(&sb, &model, &[]);
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send(
                "chat:send",
                json!({"session_id": id, "message": "Capital of France?"}),
            ),
            wait_for("chat:end", 1),
        ],
    );
    let outline = outline(&out);
    assert_eq!(outline[0], "session:subscribed");
    assert_eq!(
        outline[1..5],
        [
            "chat:start",
            "turn:start user completed",
            "turn:end user completed",
            "turn:start assistant streaming"
        ]
    );
    assert!(
        outline[5..outline.len() - 2]
            .iter()
            .all(|e| e == "turn:patch add_content")
    );
    assert_eq!(
        outline[outline.len() - 2..],
        ["turn:end assistant completed", "chat:end completed"]
    );
    let end = events(&out, "turn:end")[1];
    assert_eq!(end["blocks"][0]["type"], "text");
    assert_eq!(end["blocks"][0]["content"], "Paris is the capital.");
    assert_eq!(end["loop_id"], "root");
    assert_eq!(end["model"], "openai/gpt-4.1");
    let chat_end = events(&out, "chat:end")[0];
    assert_eq!(chat_end["result"]["output"], "Paris is the capital.");
    // Every event's sequence is larger than the one before.
    let sequences: Vec<u64> = out
        .of_kind("event")
        .iter()
        .filter_map(|r| r["data"]["sequence"].as_u64())
        .collect();
    assert!(sequences.windows(2).all(|w| w[0] < w[1]), "{sequences:?}");
    // The same turns, fetched.
    let (status, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(status, 200);
    let turns = messages["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1]["blocks"], end["blocks"]);
}

#[test]
fn a_question_pauses_the_chat_and_an_answer_resumes_it_on_both_transports() {
    on_both_transports(question);
}

fn question(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        deploy_question(),
        MockTurn::Reply(MockReply::text("Deploying to staging.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send("chat:send", json!({"session_id": id, "message": "Deploy it"})),
            wait_for("chat:end", 1),
            // Each question needs selections or custom text.
            send(
                "chat:send",
                json!({"session_id": id, "message": "", "askuser_answer": {"tool_call_id": "$answer_call"}}),
            ),
            wait_for("system:error", 1),
            send(
                "chat:send",
                json!({"session_id": id, "message": "", "askuser_answer": {"tool_call_id": "$answer_call", "selections": {"0": [0]}, "custom": {}}}),
            ),
            wait_for("chat:end", 2),
        ],
    );
    let outline = outline(&out);
    let first_end = outline
        .iter()
        .position(|e| e == "chat:end completed")
        .unwrap();
    assert_eq!(
        outline[first_end - 3..=first_end],
        [
            "turn:patch add_tool_call",
            "turn:patch set_tool_status",
            "turn:end assistant paused",
            "chat:end completed"
        ]
    );
    let paused = events(&out, "chat:end")[0];
    assert_eq!(paused["finish_reason"], "paused");
    let call = &events(&out, "turn:end")[1]["tool_calls"][0];
    assert_eq!(call["status"], "awaiting_answer");
    assert_eq!(call["tool_name"], "AskUserQuestion");
    let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["source_loop"], Value::Null);
    let error = events(&out, "system:error")[0];
    assert_eq!(error["code"], "invalid_answer");
    assert!(
        error["message"].as_str().unwrap().contains("no answer"),
        "{error}"
    );
    let resumed = events(&out, "chat:end")[1];
    assert_eq!(resumed["result"]["output"], "Deploying to staging.");
    let results = events(&out, "turn:patch")
        .into_iter()
        .filter(|p| p["patch_type"] == "tool_result")
        .collect::<Vec<_>>();
    assert_eq!(results[0]["data"]["status"], "done");
    assert!(
        results[0]["data"]["result"]
            .as_str()
            .unwrap()
            .contains("staging")
    );
}

#[test]
fn a_permission_request_is_answered_by_the_client_on_both_transports() {
    on_both_transports(permission);
}

fn permission(transport: &str) {
    let sb = sandbox();
    let target = sb.project().join("notes.txt");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "write_1",
            "Write",
            json!({"file_path": target, "content": "hello\n"}),
        )),
        MockTurn::Reply(MockReply::text("Written.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send(
                "chat:send",
                json!({"session_id": id, "message": "Write the notes"}),
            ),
            wait_for("permission:request", 1),
            send(
                "permission:respond",
                json!({"session_id": id, "request_id": "$permission", "option_id": "allow_once"}),
            ),
            wait_for("chat:end", 1),
        ],
    );
    let request = events(&out, "permission:request")[0];
    assert_eq!(request["tool_call"]["id"], "write_1");
    assert_eq!(request["tool_call"]["tool_name"], "Write");
    let options: Vec<&str> = request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["option_id"].as_str().unwrap())
        .collect();
    assert!(options.contains(&"allow_once") && options.contains(&"reject_always"));
    assert_eq!(
        events(&out, "permission:resolved")[0]["option_id"],
        "allow_once"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    assert_eq!(events(&out, "chat:end")[0]["result"]["output"], "Written.");
}

#[test]
fn an_mcp_servers_questions_pause_the_chat_and_each_answer_resumes_it() {
    let sb = sandbox();
    crate::configure_everything_server(&sb);
    // Asked to, the model calls the server's question tool; told its result, it thanks; any
    // other message (a probe for whether the server is up) gets a word.
    // (A responding mock keeps no requests: it notes what the test reads.)
    let offered = Arc::new(AtomicBool::new(false));
    let told = Arc::new(Mutex::new(String::new()));
    let (noted, kept) = (offered.clone(), told.clone());
    let model = MockModelServer::start_responding_blocking(Box::new(move |body: &Value| {
        let tools = body["tools"].to_string();
        if tools.contains("trigger-elicitation-request") {
            noted.store(true, Ordering::SeqCst);
        }
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let last = messages.last().cloned().unwrap_or_default();
        if last["role"] == "tool" {
            *kept.lock().unwrap() = body["messages"].to_string();
            return MockTurn::Reply(MockReply::text("Thanks."));
        }
        if crate::user_text(&last["content"]) == "Ask me" {
            return MockTurn::Reply(MockReply::tool_call(
                "ask",
                "mcp__everything__trigger-elicitation-request",
                json!({}),
            ));
        }
        MockTurn::Reply(MockReply::text("pong"))
    }));
    let server = Server::start(&sb, &model, &["--allow", "mcp__everything__*"]);
    // The server's tools join the agent's once it has started: probed with headless chats of
    // a session of their own until a model request offers them.
    let probe = server.new_session(&sb);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, end) = server.call(
            "POST",
            &format!("/api/sessions/{probe}/chat"),
            Some(json!({"message": "ping", "headless": true})),
        );
        assert_eq!(status, 200, "{end}");
        if offered.load(Ordering::SeqCst) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the MCP server never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let id = server.new_session(&sb);
    let answer = |selections: Value, custom: Value| {
        send(
            "chat:send",
            json!({"session_id": id, "message": "", "askuser_answer": {
                "tool_call_id": "$answer_call", "selections": selections, "custom": custom}}),
        )
    };
    // The server's thirteen fields come four a question round, required first, then by name;
    // each round pauses the chat, and its answer runs the call again up to the next round.
    let out = server.client_over(
        &sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "Ask me"})),
            wait_for("chat:end", 1),
            // name (typed), birthdate (left empty), check (yes), email (left empty)
            answer(
                json!({"1": [0], "2": [0], "3": [0]}),
                json!({"0": "Ada Lovelace"}),
            ),
            wait_for("chat:end", 2),
            // firstLine (default), homepage (empty), integer (default), legacyTitledEnum (Dogs)
            answer(json!({"0": [0], "1": [0], "2": [0], "3": [1]}), json!({})),
            wait_for("chat:end", 3),
            // number, the two multiple choices and the titled single choice: their defaults
            answer(json!({"0": [0], "1": [0], "2": [0], "3": [0]}), json!({})),
            wait_for("chat:end", 4),
            // untitledSingleSelectEnum (its default)
            answer(json!({"0": [0]}), json!({})),
            wait_for("chat:end", 5),
        ],
    );
    let ends = events(&out, "chat:end");
    let outline = outline(&out);
    assert!(
        ends.len() == 5,
        "{outline:#?}\n{:#?}",
        events(&out, "turn:patch")
    );
    for paused in &ends[..4] {
        assert_eq!(paused["finish_reason"], "paused", "{paused}");
    }
    assert_eq!(ends[4]["result"]["output"], "Thanks.", "{}", ends[4]);
    let sent = told.lock().unwrap().clone();
    for expected in [
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Favorite Integer: 42",
        r#"\"legacyTitledEnum\": \"pet-2\""#,
        r#"\"untitledSingleSelectEnum\": \"Monica\""#,
    ] {
        assert!(sent.contains(expected), "{expected} in {sent}");
    }
}
