//! What a served session costs — each turn's `usage.cost_usd`, `chat:end`'s chat and session
//! cost, the REST session's total and figures by model, `/metrics`' cost counter,
//! `--max-budget-usd-per-session` ending a chat with `max_budget` — and keeping it small with
//! `/compact` in the chat protocol.

use super::Server;
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};

/// An answer of a million prompt tokens: $2 on GPT-4.1 ($2 and $8 a million), so that the
/// next request's own prompt (some thousands of tokens, cents) does not decide the budget.
fn answer(text: &str) -> MockTurn {
    let mut reply = MockReply::text(text);
    reply.usage = [1_000_000, 0, 0, 0];
    MockTurn::Reply(reply)
}

/// A headless chat of `message` in session `id`, to its `chat:end`.
fn headless_chat(server: &Server, id: &str, message: &str) -> Value {
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": message, "headless": true})),
    );
    assert_eq!(status, 200, "{end}");
    end
}

fn same(value: &Value, dollars: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - dollars).abs() < 1e-9)
}

#[test]
fn a_served_session_shows_its_cost_and_stops_at_its_budget() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([answer("One."), answer("Two."), answer("never")]);
    let server = Server::start(&sb, &model, &["--max-budget-usd-per-session", "3.9"]);
    let id = server.new_session(&sb);
    let chat = |message: &str| headless_chat(&server, &id, message);
    let first = chat("one");
    assert_eq!(first["finish_reason"], "completed", "{first}");
    assert!(same(&first["usage"]["cost_usd"], 2.0), "{first}");
    assert!(same(&first["session_cost_usd"], 2.0), "{first}");
    // $2 spent and a prompt of cents next: within $3.90.
    let second = chat("two");
    assert_eq!(second["finish_reason"], "completed", "{second}");
    assert!(same(&second["usage"]["cost_usd"], 2.0), "{second}");
    assert!(same(&second["session_cost_usd"], 4.0), "{second}");
    // $4 spent: past the budget, the chat ends before asking.
    let third = chat("three");
    assert_eq!(third["finish_reason"], "max_budget", "{third}");
    assert_eq!(third["status"], "completed");
    assert_eq!(model.requests().len(), 2, "no request past the budget");

    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert!(same(&messages["cost_usd"], 4.0), "{messages}");
    let gpt = &messages["spending"]["openai/gpt-4.1"];
    assert_eq!(gpt["requests"], 2, "{messages}");
    assert_eq!(gpt["input_tokens"], 2_000_000);
    let answered: Vec<&Value> = messages["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|turn| turn["role"] == "assistant")
        .collect();
    assert!(same(&answered[0]["usage"]["cost_usd"], 2.0), "{messages}");

    let (_, metrics) = server.call("GET", "/metrics", None);
    let metrics = metrics.as_str().unwrap_or_default().to_owned();
    let line = metrics
        .lines()
        .find(|line| line.starts_with("agentry_cost_usd_total{"))
        .unwrap_or_else(|| panic!("no cost counter in {metrics}"));
    assert!(
        line.contains("provider=\"openai\"") && line.contains("model=\"gpt-4.1\""),
        "{line}"
    );
    let counted: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((counted - 4.0).abs() < 1e-9, "{line}");
    assert!(
        metrics.contains("# TYPE agentry_cost_usd_total counter"),
        "{metrics}"
    );
}

#[test]
fn a_compact_message_compacts_the_served_session_and_says_what_it_kept() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("The parser lives in src/parse.rs.")),
        MockTurn::Reply(MockReply::text("We found the parser in src/parse.rs.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let id = server.new_session(&sb);
    let chat = |message: &str| headless_chat(&server, &id, message);
    chat("Where is the parser?");
    let end = chat("/compact Keep the file names.");
    assert_eq!(end["finish_reason"], "completed", "{end}");
    let said = end["result"]["output"].as_str().unwrap();
    assert!(
        said.starts_with("The conversation was compacted as asked"),
        "{said}"
    );
    let asked = model.requests()[1].body["messages"].to_string();
    assert!(asked.contains("Keep the file names."), "{asked}");
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    let system: Vec<&Value> = messages["turns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|turn| turn["role"] == "system")
        .collect();
    assert!(
        system.iter().any(|turn| turn
            .to_string()
            .contains("2 earlier messages were summarised")),
        "{messages}"
    );
}
