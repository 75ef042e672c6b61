//! ACP's mapping in process: events → `session/update`, requests → framework calls, answers →
//! JSON-RPC responses. A client made of raw JSON lines drives `agentry_acp::serve` over an
//! in-memory pipe, with the scripted model, so a change of the protocol's shape fails here,
//! close to its cause (the end-to-end tests with the official TypeScript SDK stay).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agent_client_protocol::Lines;
use agentry::agent::Agent;
use agentry::model::scripted::{ScriptStep, ScriptedModel, ScriptedResponse};
use agentry::permission::PermissionPolicy;
use agentry::prelude::*;
use agentry::tool::tool_fn;
use agentry_acp::{AcpSettings, serve};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Its input.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Named {
    /// A name.
    name: String,
}

/// An agent whose model plays `responses`, with a `Greet` tool (think: runs without asking)
/// and a `Rename` tool (edit: asks).
fn agent(responses: Vec<ScriptedResponse>) -> Agent {
    let tools = SimpleProvider::new("test", "Test tools.")
        .with_tool(tool_fn(
            "Greet",
            "Greets.",
            ToolKind::Think,
            |input: Named, _| async move { Ok(format!("Hello, {}!", input.name)) },
        ))
        .with_tool(tool_fn(
            "Rename",
            "Renames.",
            ToolKind::Edit,
            |input: Named, _| async move { Ok(format!("Renamed to {}.", input.name)) },
        ));
    Agent::builder(Arc::new(ScriptedModel::new(responses)))
        .provider(tools)
        .store(Arc::new(MemoryStore::new()))
        .build()
        .unwrap()
}

fn settings() -> AcpSettings {
    AcpSettings {
        name: "agentry-test".into(),
        version: "0.0.1".into(),
        policy: PermissionPolicy::default(),
        model_problem: None,
        models: None,
        sandbox: None,
        trust: None,
    }
}

/// The client's end of the pipe.
struct Client {
    to_agent: UnboundedSender<std::io::Result<String>>,
    from_agent: UnboundedReceiver<String>,
    next_id: u64,
    /// Notifications and agent requests seen, in order.
    seen: Vec<Value>,
    /// How agent → client requests (`session/request_permission`) are answered.
    answer: Box<dyn Fn(&Value) -> Value + Send>,
}

impl Client {
    fn start(agent: Agent) -> Self {
        let (to_agent, incoming) = unbounded();
        let (outgoing, from_agent) = unbounded::<String>();
        let outgoing = outgoing.sink_map_err(|_| std::io::Error::other("the client is gone"));
        tokio::spawn(serve(agent, settings(), Lines::new(outgoing, incoming)));
        Self {
            to_agent,
            from_agent,
            next_id: 1,
            seen: Vec::new(),
            answer: Box::new(|_| json!({"outcome": {"outcome": "cancelled"}})),
        }
    }

    fn send(&self, message: Value) {
        self.to_agent
            .unbounded_send(Ok(message.to_string()))
            .unwrap();
    }

    fn send_raw(&self, line: &str) {
        self.to_agent.unbounded_send(Ok(line.to_owned())).unwrap();
    }

    /// The next message from the agent.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.from_agent.next())
            .await
            .expect("the agent answers within 10 s")
            .expect("the agent is still connected");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request; records what comes meanwhile (answering the agent's own requests) and
    /// returns the response.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.until_response(id).await
    }

    async fn until_response(&mut self, id: u64) -> Value {
        loop {
            let message = self.next().await;
            if message.get("method").is_none() && message["id"] == id {
                return message;
            }
            if message.get("id").is_some() && message.get("method").is_some() {
                let result = (self.answer)(&message);
                self.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
            }
            self.seen.push(message);
        }
    }

    async fn new_session(&mut self) -> String {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
        let cwd = std::env::temp_dir().display().to_string();
        let response = self
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        response["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    async fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
        .await
    }

    /// The `session/update` payloads seen so far, in order.
    fn updates(&self) -> Vec<&Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| &m["params"]["update"])
            .collect()
    }
}

fn call(id: &str, tool: &str, name: &str) -> ScriptedResponse {
    ScriptedResponse {
        events: vec![ScriptStep::ToolCall(
            agentry::model::scripted::ScriptedToolCall {
                id: Some(id.into()),
                name: tool.into(),
                arguments: Some(json!({"name": name})),
                raw_arguments: None,
            },
        )],
        ..ScriptedResponse::default()
    }
}

#[tokio::test]
async fn initialize_answers_protocol_1_with_what_works() {
    let mut client = Client::start(agent(vec![]));
    let response = client
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    let result = &response["result"];
    assert_eq!(result["protocolVersion"], 1);
    assert_eq!(result["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        result["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    // No session-servers hook: no MCP transport is advertised.
    assert_eq!(
        result["agentCapabilities"]["mcpCapabilities"]["http"],
        false
    );
    assert_eq!(result["agentInfo"]["name"], "agentry-test");
}

#[tokio::test]
async fn a_turn_maps_thoughts_text_and_a_tool_call_to_session_updates() {
    let mut thinking = call("c1", "Greet", "Ada");
    thinking.events.splice(
        0..0,
        [
            ScriptStep::Thinking("The user wants a greeting.".into()),
            ScriptStep::Text("Greeting. ".into()),
        ],
    );
    let mut client = Client::start(agent(vec![thinking, ScriptedResponse::text("Done.")]));
    let session = client.new_session().await;
    let response = client.prompt(&session, "greet Ada").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let kinds: Vec<&str> = client
        .updates()
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            // Every session has `/rewind`.
            "available_commands_update",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    let updates = client.updates();
    let announced = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    assert_eq!(announced["toolCallId"], "c1");
    assert_eq!(announced["title"], "Greet");
    assert_eq!(announced["kind"], "think");
    // `pending` is ACP's default status, which the schema leaves out.
    assert!(
        announced.get("status").is_none_or(|s| s == "pending"),
        "{announced}"
    );
    assert_eq!(announced["rawInput"], json!({"name": "Ada"}));
    let statuses: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update")
        .map(|u| &u["status"])
        .collect();
    assert_eq!(statuses, [&json!("in_progress"), &json!("completed")]);
    let completed = updates
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(
        completed["content"][0]["content"],
        json!({"type": "text", "text": "Hello, Ada!"})
    );
    let answer = updates.last().unwrap();
    assert_eq!(answer["content"], json!({"type": "text", "text": "Done."}));
}

#[tokio::test]
async fn an_edit_asks_with_request_permission_and_a_rejection_fails_the_call() {
    let mut client = Client::start(agent(vec![
        call("c1", "Rename", "b.txt"),
        ScriptedResponse::text("Not renamed."),
    ]));
    client.answer = Box::new(|request| {
        assert_eq!(request["method"], "session/request_permission");
        json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}})
    });
    let session = client.new_session().await;
    let response = client.prompt(&session, "rename").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let asked = client
        .seen
        .iter()
        .find(|m| m["method"] == "session/request_permission")
        .expect("the agent asked");
    assert_eq!(asked["params"]["toolCall"]["toolCallId"], "c1");
    let options: Vec<&str> = asked["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let last_status = client
        .updates()
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update")
        .map(|u| u["status"].clone());
    assert_eq!(last_status, Some(json!("failed")));
}

#[tokio::test]
async fn cancel_ends_the_turn_cancelled_not_with_an_error() {
    let slow = ScriptedResponse {
        events: vec![ScriptStep::DelayMs(5_000), ScriptStep::Text("late".into())],
        ..ScriptedResponse::default()
    };
    let mut client = Client::start(agent(vec![slow]));
    let session = client.new_session().await;
    let id = client.next_id;
    client.next_id += 1;
    client.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}}),
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    client.send(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let response = client.until_response(id).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
}

#[tokio::test]
async fn bad_requests_get_their_json_rpc_errors_and_the_connection_goes_on() {
    let mut client = Client::start(agent(vec![]));
    client.send_raw("{not json");
    let parse_error = client.next().await;
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    let too_early = client
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .await;
    assert_eq!(too_early["error"]["code"], -32600, "{too_early}");
    client
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    let unknown = client
        .request(
            "session/prompt",
            json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    let relative = client
        .request(
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
        )
        .await;
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    let alive = client
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .await;
    assert_eq!(alive["result"]["protocolVersion"], 1);
}
