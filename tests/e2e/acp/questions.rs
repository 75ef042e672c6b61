//! AskUserQuestion in an editor: asked with `elicitation/create` (form mode) when the client
//! renders forms, not offered when it does not; linked and from the builtin plugin.

use super::*;
use crate::both_ways;
use crate::loading::{Loading, as_strs};

fn ask(id: &str, multi: bool) -> MockTurn {
    MockTurn::Reply(MockReply::tool_call(
        id,
        "AskUserQuestion",
        json!({"questions": [{
            "question": "Which databases?",
            "header": "Database",
            "multiSelect": multi,
            "options": [
                {"label": "PostgreSQL", "description": "A server"},
                {"label": "SQLite", "description": "A file"},
            ],
        }]}),
    ))
}

/// The tool result the model got in request `n`.
fn tool_result(server: &MockModelServer, n: usize) -> String {
    let requests = server.requests();
    let messages = requests[n].body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"].to_string()
}

both_ways!(questions_are_forms_for_a_client_that_renders_them);
fn questions_are_forms_for_a_client_that_renders_them(loading: Loading) {
    let sb = loading.sandbox();
    let server = MockModelServer::start_blocking([
        ask("single", false),
        ask("multi", true),
        ask("own_words", false),
        ask("declined", false),
        ask("dismissed", false),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&[])),
        json!({
            "clientCapabilities": {"elicitation": {"form": {}}},
            "elicitations": [
                {"action": "accept", "content": {"q0": "1"}},
                {"action": "accept", "content": {"q0": ["0", "1"]}},
                {"action": "accept", "content": {"q0_other": "DuckDB"}},
                {"action": "decline"},
                {"action": "cancel"},
            ],
            "steps": session_steps(&sb, vec![prompt("pick a database")]),
        }),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let asked = out.of_kind("elicitation");
    assert_eq!(asked.len(), 5);
    let form = &asked[0]["params"];
    assert_eq!(form["mode"], "form");
    assert_eq!(form["toolCallId"], "single");
    assert!(
        form["message"]
            .as_str()
            .unwrap()
            .contains("Which databases?")
    );
    let field = &form["requestedSchema"]["properties"]["q0"];
    assert_eq!(field["type"], "string");
    assert_eq!(field["oneOf"][1], json!({"const": "1", "title": "SQLite"}));
    let multi = &asked[1]["params"]["requestedSchema"]["properties"]["q0"];
    assert_eq!(multi["type"], "array");
    assert_eq!(multi["items"]["anyOf"][0]["title"], "PostgreSQL");
    assert!(tool_result(&server, 1).contains(r#"\"Which databases?\" = \"SQLite\""#));
    assert!(tool_result(&server, 2).contains(r#"= \"PostgreSQL, SQLite\""#));
    assert!(tool_result(&server, 3).contains(r#"= \"DuckDB\""#));
    assert!(tool_result(&server, 4).contains("chose not to answer"));
    // Dismissing the form is not answering either; the turn goes on.
    assert!(tool_result(&server, 5).contains("chose not to answer"));
}

both_ways!(a_client_without_forms_is_not_offered_the_tool);
fn a_client_without_forms_is_not_offered_the_tool(loading: Loading) {
    let sb = loading.sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("ok"))]);
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&[])),
        json!({"steps": session_steps(&sb, vec![prompt("hi")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    let offered = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|tool| tool["function"]["name"] == "AskUserQuestion");
    assert!(!offered);
}
