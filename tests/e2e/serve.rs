//! `agentry serve` with the official `socket.io-client` and a plain WebSocket client (the `ws`
//! package; both in `tests/peers/chat-client.mjs`) and the REST API: the protocol's flows with their exact event sequences, errors
//! that keep the connection, reconnection mid-chat, sessions after a restart, the token and
//! Origin checks. The model is the mock model server.

use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::{Transcript, run_chat_client, run_page_client};
use agentry_tests::{Running, Sandbox, http};
use serde_json::{Value, json};
use std::time::Duration;

/// A running `agentry serve` on a free loopback port.
struct Server {
    running: Running,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.running.child.kill();
        let _ = self.running.child.wait();
    }
}

impl Server {
    fn start(sb: &Sandbox, model: &MockModelServer, args: &[&str]) -> Server {
        let base = format!("{}/v1", model.url());
        let mut command = vec!["serve", "--listen", "127.0.0.1:0"];
        if !args.contains(&"--model") {
            command.extend(["--model", "openai/gpt-4.1"]);
        }
        command.extend_from_slice(args);
        let running = sb.spawn_with_env(
            &command,
            &[("OPENAI_API_KEY", "sk-e2e"), ("OPENAI_BASE_URL", &base)],
        );
        let line = running.wait_for_line(|l| l.contains("listening on"));
        let url = line.rsplit(' ').next().unwrap().to_owned();
        Server { running, url }
    }

    fn ws(&self) -> String {
        format!("{}/ws", self.url.replace("http://", "ws://"))
    }

    /// A REST call: the status and the JSON body (`null` when empty).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        http::call(method, &format!("{}{path}", self.url), body.as_ref(), None)
    }

    fn new_session(&self, sb: &Sandbox) -> String {
        let (status, body) = self.call("POST", "/api/sessions", Some(json!({"cwd": sb.project()})));
        assert_eq!(status, 201, "{body}");
        body["session_id"].as_str().unwrap().to_owned()
    }

    /// Runs the test client over the plain WebSocket.
    fn client(&self, sb: &Sandbox, steps: Vec<Value>) -> Transcript {
        self.client_over(sb, "ws", steps)
    }

    /// Runs the test client over `transport` (`ws` or `socket.io`).
    fn client_over(&self, sb: &Sandbox, transport: &str, steps: Vec<Value>) -> Transcript {
        let url = match transport {
            "ws" => self.ws(),
            _ => self.url.clone(),
        };
        run_chat_client(
            &json!({"transport": transport, "url": url, "steps": steps}),
            sb.project().parent().unwrap(),
            Duration::from_secs(60),
        )
    }
}

fn send(event: &str, data: Value) -> Value {
    json!({"op": "send", "event": event, "data": data})
}

fn wait_for(event: &str, count: usize) -> Value {
    json!({"op": "wait_for", "event": event, "count": count})
}

/// The events seen, as `(event, detail)`: the patch type, or the turn's role and status.
fn outline(out: &Transcript) -> Vec<String> {
    out.of_kind("event")
        .into_iter()
        .map(|r| {
            let data = &r["data"];
            let event = r["event"].as_str().unwrap();
            match event {
                "turn:patch" => format!("{event} {}", data["patch_type"].as_str().unwrap()),
                "turn:start" | "turn:end" => format!(
                    "{event} {} {}",
                    data["role"].as_str().unwrap(),
                    data["status"].as_str().unwrap()
                ),
                "chat:end" => format!("{event} {}", data["status"].as_str().unwrap()),
                _ => event.to_owned(),
            }
        })
        .collect()
}

fn events<'a>(out: &'a Transcript, name: &str) -> Vec<&'a Value> {
    out.of_kind("event")
        .into_iter()
        .filter(|r| r["event"] == name)
        .map(|r| &r["data"])
        .collect()
}

/// Runs `flow` over the plain WebSocket, then over Socket.IO.
fn on_both_transports(flow: fn(&str)) {
    for transport in ["ws", "socket.io"] {
        flow(transport);
    }
}

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
        MockTurn::Reply(MockReply::tool_call(
            "ask_1",
            "AskUserQuestion",
            json!({"questions": [{"question": "Which environment?", "header": "Deploy",
                "options": [{"label": "staging"}, {"label": "production"}]}]}),
        )),
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
fn rest_sessions_survive_a_restart_and_headless_chats_answer_over_http() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text(
            "{\"countries\": [\"Russia\", \"Canada\", \"China\"]}",
        )),
        MockTurn::Reply(MockReply::text("Second.")),
    ]);
    let id;
    {
        let server = Server::start(&sb, &model, &[]);
        id = server.new_session(&sb);
        let schema = json!({"type": "object", "properties": {"countries": {"type": "array", "items": {"type": "string"}}}, "required": ["countries"]});
        let (status, end) = server.call(
            "POST",
            &format!("/api/sessions/{id}/chat"),
            Some(json!({"message": "The three largest countries", "headless": true, "output_schema": schema})),
        );
        assert_eq!(status, 200, "{end}");
        assert_eq!(end["status"], "completed");
        assert_eq!(end["result"]["output"]["countries"][1], "Canada");
        assert_eq!(end["result"]["schema"], schema);
        let (status, error) = server.call("GET", "/api/sessions/sess_nope/messages", None);
        assert_eq!(
            (status, error["code"].as_str()),
            (404, Some("unknown_session"))
        );
        let (status, _) = server.call(
            "POST",
            "/api/sessions",
            Some(json!({"cwd": "/no/such/folder"})),
        );
        assert_eq!(status, 422);
    }
    // A new server process reads the same store.
    let server = Server::start(&sb, &model, &[]);
    let (status, listed) = server.call("GET", "/api/sessions", None);
    assert_eq!(status, 200);
    assert_eq!(listed["sessions"][0]["session_id"], id.as_str());
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    let turns = messages["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["role"], "user");
    assert_eq!(
        turns[0]["blocks"][0]["content"],
        "The three largest countries"
    );
    assert!(turns[1]["started_at"].is_string());
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "And again"})),
    );
    assert_eq!(status, 200, "{end}");
    assert_eq!(end["result"]["output"], "Second.");
    let (status, _) = server.call("DELETE", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 204);
    let (status, _) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(status, 404);
}

#[test]
fn a_token_is_required_when_set_and_foreign_origins_may_not_open_sockets() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--token", "s3cret"]);
    let (status, _) = server.call("GET", "/api/sessions", None);
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
fn a_sub_agents_turns_name_their_agent_call_on_both_transports() {
    on_both_transports(sub_agent);
}

fn sub_agent(transport: &str) {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "fork_1",
            "Agent",
            json!({"description": "Clean the data", "prompt": "Clean it"}),
        )),
        MockTurn::Reply(MockReply::text("Cleaned.")),
        MockTurn::Reply(MockReply::text("The data is clean.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        transport,
        vec![
            send(
                "chat:send",
                json!({"session_id": id, "message": "Clean the data"}),
            ),
            wait_for("chat:end", 1),
        ],
    );
    let starts = events(&out, "turn:start");
    let child: Vec<&&Value> = starts
        .iter()
        .filter(|t| t["parent_fork_tool_call_id"] == "fork_1")
        .collect();
    assert_eq!(child.len(), 2, "the sub-agent's user and assistant turns");
    assert!(child.iter().all(|t| t["loop_id"] == "loop_fork_1"));
    let roots = starts
        .iter()
        .filter(|t| t["parent_fork_tool_call_id"].is_null())
        .count();
    assert_eq!(roots, 3, "user, the Agent call's turn, the answer");
    let result = events(&out, "turn:patch")
        .into_iter()
        .find(|p| p["patch_type"] == "tool_result" && p["data"]["tool_call_id"] == "fork_1")
        .unwrap();
    assert_eq!(result["loop_id"], "root");
    assert!(
        result["data"]["result"]
            .as_str()
            .unwrap()
            .starts_with("Cleaned.")
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
fn the_rest_api_holds_to_its_openapi_document() {
    let sb = sandbox();
    // A model that answers once, then fails every request at once: chats end quickly.
    let script = sb.script(
        "once",
        &json!({"responses": [{"events": [{"text": "Hi."}]}]}),
    );
    let model = MockModelServer::start_blocking([]);
    let scripted = format!("scripted:{}", script.display());
    let server = Server::start(&sb, &model, &["--model", &scripted]);
    let (status, document) = server.call("GET", "/api/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(document["openapi"], "3.1.0");
    assert!(document["components"]["schemas"]["TurnProjection"].is_object());
    // schemathesis generates requests from the document: no 5xx, every status, content type
    // and body as documented.
    let out = std::process::Command::new(agentry_tests::peers::schemathesis())
        .arg("run")
        .arg(format!("{}/api/openapi.json", server.url))
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            "--max-time",
            "25",
            "--seed",
            "1",
        ])
        .env("SCHEMATHESIS_HOOKS", "")
        // Its caches go into the sandbox, not the checkout.
        .current_dir(sb.project().parent().unwrap())
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("passed"), "{report}");
}

#[test]
fn the_web_page_streams_answers_asks_questions_asks_permission_and_shows_diffs() {
    let sb = sandbox();
    let notes = sb.write("project/notes.txt", "alpha\nkept\n");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("Hello from the agent.")),
        MockTurn::Reply(MockReply::tool_call(
            "ask_1",
            "AskUserQuestion",
            json!({"questions": [{"question": "Which environment?", "header": "Deploy",
                "options": [{"label": "staging"}, {"label": "production"}]}]}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "read_1",
            "Read",
            json!({"file_path": notes}),
        )),
        MockTurn::Reply(MockReply::tool_call(
            "edit_1",
            "Edit",
            json!({"file_path": notes, "old_string": "alpha", "new_string": "beta"}),
        )),
        MockTurn::Reply(MockReply::text("Edited for staging.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let shot = std::env::var_os("AGENTRY_PAGE_SHOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| sb.project().parent().unwrap().join("page.png"));
    let steps = json!([
        {"op": "click", "selector": "#new-session"},
        {"op": "wait_text", "selector": "#status", "text": "Session"},
        {"op": "fill", "selector": "#message", "text": "Say hi"},
        {"op": "press", "selector": "#message", "key": "Enter"},
        {"op": "wait_text", "selector": ".turn.assistant .text", "text": "Hello from the agent."},
        {"op": "fill", "selector": "#message", "text": "Deploy and edit the notes"},
        {"op": "press", "selector": "#message", "key": "Enter"},
        {"op": "wait_text", "selector": ".question legend", "text": "Which environment?"},
        {"op": "check", "selector": ".question input[value='0']"},
        {"op": "click", "selector": ".question button[type=submit]"},
        {"op": "wait_text", "selector": ".permission", "text": "Allow"},
        {"op": "click", "selector": ".permission button:first-of-type"},
        {"op": "wait_text", "selector": ".diff .del", "text": "alpha"},
        {"op": "text", "selector": ".diff .add"},
        {"op": "wait_text", "selector": ".turn.assistant .text", "text": "Edited for staging."},
        {"op": "text", "selector": ".turn.user .bubble >> nth=2"},
        {"op": "screenshot", "path": shot},
    ]);
    let out = run_page_client(
        &json!({"url": format!("{}/", server.url), "steps": steps}),
        sb.project().parent().unwrap(),
        Duration::from_secs(90),
    );
    assert!(
        out.of_kind("failed").is_empty(),
        "{:#?}\n{}",
        out.records,
        out.stderr
    );
    let texts: Vec<&str> = out
        .of_kind("step")
        .iter()
        .filter_map(|s| s["text"].as_str())
        .collect();
    assert_eq!(texts[0], "+ beta");
    assert!(texts[1].contains("Answered 1: option 1"), "{texts:?}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "beta\nkept\n");
    assert!(shot.exists());
}

#[test]
fn oversized_bodies_are_refused_and_unoffered_models_are_an_error() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([]);
    let server = Server::start(&sb, &model, &["--max-message-bytes", "4096"]);
    let id = server.new_session(&sb);
    let big = "x".repeat(10_000);
    let (status, _) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": big})),
    );
    assert_eq!(status, 413);
    let out = server.client(
        &sb,
        vec![
            send(
                "chat:send",
                json!({"session_id": id, "message": "hi", "model": "nowhere/nothing"}),
            ),
            wait_for("system:error", 1),
            send("chat:send", json!({"session_id": id, "message": big})),
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
    // A frame over the limit is said, then the connection closes.
    assert_eq!(
        events(&out, "system:error")[1]["code"],
        "too_large",
        "{:#?}",
        out.records
    );
    assert_eq!(out.of_kind("closed").len(), 1);
}
