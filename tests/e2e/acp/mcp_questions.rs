//! An MCP server's questions in an editor: the reference server's `trigger-elicitation-request`
//! asks for a form of thirteen fields during a tool call; agentry puts them to the ACP client
//! as its own question forms (four fields a form) and the server gets the answers, each field's
//! default where the user took it. Linked and from the MCP plugin.

use super::*;
use crate::both_ways;
use crate::loading::{Loading, as_strs};

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
    let out = acp_with_model(
        &sb,
        &server,
        &as_strs(&loading.args(&["--allow", "mcp__everything__*"])),
        json!({
            "clientCapabilities": {"elicitation": {"form": {}}},
            "elicitations": [
                // name, birthdate, check, email
                {"action": "accept", "content": {"q0_other": "Ada Lovelace", "q1": "0", "q2": "0", "q3": "0"}},
                // firstLine, homepage, integer, legacyTitledEnum
                {"action": "accept", "content": {"q0": "0", "q1": "0", "q2": "0", "q3": "1"}},
                // number, titledMultipleSelectEnum, titledSingleSelectEnum, untitledMultipleSelectEnum
                {"action": "accept", "content": {"q0": "0", "q1": ["0"], "q2": "0", "q3": ["0", "1"]}},
                // untitledSingleSelectEnum
                {"action": "accept", "content": {"q0": "0"}},
            ],
            "steps": session_steps(&sb, vec![
                json!({"op": "wait_for_command", "name": "simple-prompt"}),
                prompt("ask me"),
            ]),
        }),
    );
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
