//! The web page at `/`, in headless Chromium.

use super::Server;
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use agentry_tests::peers::run_page_client;
use serde_json::json;
use std::time::Duration;

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
        // The answer's text shows before its turn has ended; the Send button is enabled again
        // only then, and a click waits for that (Enter while the turn runs sends nothing).
        {"op": "click", "selector": "#send"},
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
        &json!({"url": server.page_link(), "steps": steps}),
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
