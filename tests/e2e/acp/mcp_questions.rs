//! An MCP server's questions in an editor: the reference server's `trigger-elicitation-request`
//! asks for a form of thirteen fields during a tool call; agentry puts them to the ACP client
//! as its own question forms (four fields a form) and the server gets the answers, each field's
//! default where the user took it; and its sampling requests, answered by the session's model once
//! the user allows them. Linked and from the MCP plugin.

use super::*;
use crate::both_ways;
use crate::loading::{Loading, as_strs};

/// Runs one prompt in an editor that renders forms and answers them with `elicitations`, once
/// the reference server (configured for the project) has started, its tools allowed.
fn in_an_editor(
    sb: &Sandbox,
    loading: &Loading,
    model: &MockModelServer,
    elicitations: Value,
    text: &str,
) -> Transcript {
    acp_with_model(
        sb,
        model,
        &as_strs(&loading.args(&["--allow", "mcp__everything__*"])),
        json!({
            "clientCapabilities": {"elicitation": {"form": {}}},
            "elicitations": elicitations,
            "steps": session_steps(sb, vec![
                json!({"op": "wait_for_command", "name": "simple-prompt"}),
                prompt(text),
            ]),
        }),
    )
}

both_ways!(an_mcp_servers_questions_are_the_editors_forms_and_its_defaults_count);
fn an_mcp_servers_questions_are_the_editors_forms_and_its_defaults_count(loading: Loading) {
    let sb = loading.sandbox();
    crate::configure_everything_server(&sb);
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "ask",
            "mcp__everything__trigger-elicitation-request",
            json!({}),
        )),
        MockTurn::Reply(MockReply::text("done")),
    ]);
    // The fields come required first, then in name order, four a form. The first option is a
    // field's default (or "Leave it empty" for an optional field without one); `name` is
    // required and typed.
    let answers = json!([
        // name, birthdate, check, email
        {"action": "accept", "content": {"q0_other": "Ada Lovelace", "q1": "0", "q2": "0", "q3": "0"}},
        // firstLine, homepage, integer, legacyTitledEnum
        {"action": "accept", "content": {"q0": "0", "q1": "0", "q2": "0", "q3": "1"}},
        // number, titledMultipleSelectEnum, titledSingleSelectEnum, untitledMultipleSelectEnum
        {"action": "accept", "content": {"q0": "0", "q1": ["0"], "q2": "0", "q3": ["0", "1"]}},
        // untitledSingleSelectEnum
        {"action": "accept", "content": {"q0": "0"}},
    ]);
    let out = in_an_editor(&sb, &loading, &server, answers, "ask me");
    assert_eq!(
        out.result(3)["stopReason"],
        "end_turn",
        "{:?}",
        out.of_kind("error")
    );
    let asked = out.of_kind("elicitation");
    assert_eq!(asked.len(), 4, "{asked:?}");
    let first = &asked[0]["params"];
    assert_eq!(first["toolCallId"], "ask");
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .contains("`everything` asks: Please provide inputs"),
        "{first}"
    );
    let messages = server.requests()[1].body["messages"].to_string();
    for expected in [
        "User provided the requested information",
        "- Name: Ada Lovelace",
        "- Agreed to terms: true",
        "- Favorite Integer: 42",
        "- Favorite Number: 3.14",
        r#"\"firstLine\": \"It was a dark and stormy night.\""#,
        r#"\"legacyTitledEnum\": \"pet-2\""#,
        r#"\"untitledSingleSelectEnum\": \"Monica\""#,
        r#"\"titledMultipleSelectEnum\": [\n      \"fish-1\"\n    ]"#,
    ] {
        assert!(messages.contains(expected), "{expected} in {messages}");
    }
    assert!(
        !messages.contains("birthdate"),
        "a field left empty is left out: {messages}"
    );
}

/// A model that calls the reference server's sampling tool, answers the server's request (the
/// one without tools) and then ends.
fn sampling_model() -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "sample",
            "mcp__everything__trigger-sampling-request",
            json!({"prompt": "Name a colour", "maxTokens": 50}),
        )),
        MockTurn::Reply(MockReply::text("Teal.")),
        MockTurn::Reply(MockReply::text("done")),
    ])
}

both_ways!(an_mcp_servers_sampling_is_answered_by_the_sessions_model_once_the_user_allows_it);
fn an_mcp_servers_sampling_is_answered_by_the_sessions_model_once_the_user_allows_it(
    loading: Loading,
) {
    let sb = loading.sandbox();
    crate::configure_everything_server(&sb);
    for (choice, answered) in [("0", true), ("2", false)] {
        let server = sampling_model();
        let answer = json!([{"action": "accept", "content": {"q0": choice}}]);
        let out = in_an_editor(&sb, &loading, &server, answer, "sample");
        assert_eq!(out.result(3)["stopReason"], "end_turn");
        let asked = out.of_kind("elicitation");
        assert_eq!(asked.len(), 1, "{asked:?}");
        let message = asked[0]["params"]["message"].as_str().unwrap();
        assert!(
            message.contains("The MCP server `everything` asks the session's model to answer")
                && message.contains("Name a colour"),
            "{message}"
        );
        let requests = server.requests();
        if answered {
            let side = &requests[1].body;
            assert_eq!(side["max_completion_tokens"], 50, "the server's limit");
            assert!(side.get("tools").is_none(), "{side}");
            assert!(side.to_string().contains("You are a helpful test server."));
            let result = requests[2].body["messages"].to_string();
            assert!(result.contains("Teal."), "{result}");
        } else {
            assert_eq!(requests.len(), 2, "the model was not asked for the server");
            let result = requests[1].body["messages"].to_string();
            assert!(result.contains("did not let"), "{result}");
        }
    }
}

both_ways!(a_sampling_rule_pre_approves_or_refuses_a_server_in_a_headless_run);
fn a_sampling_rule_pre_approves_or_refuses_a_server_in_a_headless_run(loading: Loading) {
    let sb = loading.sandbox();
    crate::configure_everything_server(&sb);
    sb.write(
        "project/.agentry/config.toml",
        "[mcp]\nsampling_max_tokens = 20\n",
    );
    let run = |rules: &[&str]| {
        let server = sampling_model();
        let mut args = vec!["--allow", "mcp__everything__*"];
        args.extend_from_slice(rules);
        args.push("sample");
        let out = crate::run_openai(&sb, &server, &crate::loading::as_strs(&loading.args(&args)));
        assert_eq!(out.code, Some(0), "{out:?}");
        server.requests()
    };
    let allowed = run(&["--allow", "Sampling(everything)"]);
    assert_eq!(
        allowed[1].body["max_completion_tokens"], 20,
        "the configured limit"
    );
    assert!(allowed[2].body["messages"].to_string().contains("Teal."));

    // Allowing the server's tools is not allowing it the model: with nobody to ask, refused.
    let unasked = run(&[]);
    assert_eq!(unasked.len(), 2, "the model was not asked for the server");
    let result = unasked[1].body["messages"].to_string();
    assert!(
        result.contains("did not let `everything` use the model"),
        "{result}"
    );

    let denied = run(&["--allow", "Sampling", "--deny", "Sampling(every*)"]);
    assert_eq!(denied.len(), 2, "the model was not asked for the server");
    let result = denied[1].body["messages"].to_string();
    assert!(
        result.contains("Sampling(everything) is denied by the permission rule"),
        "{result}"
    );
}
