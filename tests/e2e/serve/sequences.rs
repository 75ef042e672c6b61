//! The exact event sequence of each flow of the protocol, as the official `socket.io-client` and
//! a plain WebSocket client receive it: both transports must carry the same events, and those
//! events are snapshots (ids, times and the sequence's starting point normalised), so any change
//! to what a client sees is a visible diff.

use super::{Server, deploy_question, send, wait_for};
use crate::both_ways;
use crate::loading::{Loading, as_strs};
use agentry_tests::chat_events::normalise;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};

/// One flow: the model's replies, the server's extra flags, and the client's steps for a
/// session (`$session` in the steps stands for its id).
struct Flow {
    replies: Vec<MockTurn>,
    server_args: &'static [&'static str],
    steps: Value,
}

/// Runs `flow` on each transport against a fresh server and model, checks both received the
/// same events, and returns them normalised.
fn received(flow: impl Fn() -> Flow) -> Value {
    received_loading(Loading::Linked, flow)
}

/// [`received`] with the stock providers loaded `loading`'s way.
fn received_loading(loading: Loading, flow: impl Fn() -> Flow) -> Value {
    let [ws, socket_io] = ["ws", "socket.io"].map(|transport| {
        let flow = flow();
        let sb = loading.sandbox();
        let model = MockModelServer::start_blocking(flow.replies);
        let server = Server::start(&sb, &model, &as_strs(&loading.args(flow.server_args)));
        let id = server.new_session(&sb);
        let steps = serde_json::from_str(&flow.steps.to_string().replace("$session", &id))
            .expect("the steps stay JSON");
        let out = server.client_over(&sb, transport, steps);
        assert!(out.of_kind("failed").is_empty(), "{transport}: {out:#?}");
        let events: Vec<Value> = out
            .of_kind("event")
            .into_iter()
            .map(|r| json!({"event": r["event"], "data": r["data"]}))
            .collect();
        normalise(Value::Array(events))
    });
    assert_eq!(ws, socket_io, "both transports carry the same events");
    ws
}

/// `chat:send` of `message` to the flow's session, then wait for the `count`th `chat:end`.
fn chat(message: &str, count: usize) -> [Value; 2] {
    [
        send(
            "chat:send",
            json!({"session_id": "$session", "message": message}),
        ),
        wait_for("chat:end", count),
    ]
}

fn bash(id: &str, command: &str) -> MockTurn {
    MockTurn::Reply(MockReply::tool_call(
        id,
        "Bash",
        json!({"command": command, "description": "print"}),
    ))
}

fn text(text: &str) -> MockTurn {
    MockTurn::Reply(MockReply::text(text))
}

#[test]
fn a_plain_answer() {
    let events = received(|| Flow {
        replies: vec![text("Paris is the capital.")],
        server_args: &[],
        steps: json!(chat("Capital of France?", 1)),
    });
    insta::assert_json_snapshot!(events);
}

#[test]
fn one_tool_call() {
    let events = received(|| Flow {
        replies: vec![bash("call_1", "echo hello"), text("It said hello.")],
        server_args: &["--permission-mode", "bypass"],
        steps: json!(chat("Say hello in the shell", 1)),
    });
    insta::assert_json_snapshot!(events);
}

#[test]
fn several_tool_rounds_one_assistant_turn_per_model_call() {
    let events = received(|| Flow {
        replies: vec![
            bash("call_1", "echo one"),
            bash("call_2", "echo two"),
            text("One, then two."),
        ],
        server_args: &["--permission-mode", "bypass"],
        steps: json!(chat("Count in the shell", 1)),
    });
    insta::assert_json_snapshot!(events);
}

both_ways!(a_question_pauses_the_chat_and_its_answer_resumes_it);
fn a_question_pauses_the_chat_and_its_answer_resumes_it(loading: Loading) {
    let events = received_loading(loading, || Flow {
        replies: vec![deploy_question(), text("Deploying to staging.")],
        server_args: &[],
        steps: json!(
            [
                chat("Deploy it", 1),
                [
                    send(
                        "chat:send",
                        json!({"session_id": "$session", "message": "", "askuser_answer":
                        {"tool_call_id": "$answer_call", "selections": {"0": [0]}}}),
                    ),
                    wait_for("chat:end", 2),
                ],
            ]
            .concat()
        ),
    });
    insta::assert_json_snapshot!(
        "a_question_pauses_the_chat_and_its_answer_resumes_it",
        events
    );
}

both_ways!(a_sub_agents_turns_under_its_agent_call);
fn a_sub_agents_turns_under_its_agent_call(loading: Loading) {
    let events = received_loading(loading, || Flow {
        replies: vec![
            MockTurn::Reply(MockReply::tool_call(
                "fork_1",
                "Agent",
                json!({"description": "Clean the data", "prompt": "Clean it"}),
            )),
            text("Cleaned."),
            text("The data is clean."),
        ],
        server_args: &[],
        steps: json!(chat("Clean the data", 1)),
    });
    insta::assert_json_snapshot!("a_sub_agents_turns_under_its_agent_call", events);
}

#[test]
fn a_headless_chat_with_an_output_schema_ends_with_the_validated_value() {
    let events = received(|| Flow {
        replies: vec![text(r#"{"countries": ["Russia", "Canada", "China"]}"#)],
        server_args: &[],
        steps: json!([
            send(
                "chat:send",
                json!({"session_id": "$session", "message": "The three largest countries",
                    "headless": true, "output_schema": {"type": "object",
                    "properties": {"countries": {"type": "array", "items": {"type": "string"}}},
                    "required": ["countries"]}}),
            ),
            wait_for("chat:end", 1),
        ]),
    });
    insta::assert_json_snapshot!(events);
}
