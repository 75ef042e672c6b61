//! The page as a place to live in, in headless Chromium: sessions found by title, renamed and
//! deleted, a model and a mode picked, files attached by picking, pasting and dropping, no serious accessibility
//! problem, the dark theme, and a server restarted in the middle of a chat.

use super::{Server, run_page, with_first_message};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::{Value, json};
use std::time::Duration;

/// A 1×1 PNG, base64-encoded.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The script that reads the titles the list shows, in order.
const SHOWN_TITLES: &str =
    "[...document.querySelectorAll('#sessions .name')].map((n) => n.textContent).join(' | ')";

#[test]
fn sessions_are_found_by_title_renamed_and_deleted_and_a_model_and_files_are_chosen() {
    let sb = sandbox();
    sb.write(
        "project/.agentry/config.toml",
        "models = [\"openai/gpt-4.1-mini\"]\n",
    );
    let notes = sb.write("notes.md", "# Notes\nThe parser is recursive descent.\n");
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::text("One.")),
        MockTurn::Reply(MockReply::text("Two.")),
        MockTurn::Reply(MockReply::text("Three.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let shot = std::env::var_os("AGENTRY_PAGE_SESSIONS_SHOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| sb.project().parent().unwrap().join("sessions.png"));
    let steps = with_first_message(
        "First topic: the lexer",
        "One.",
        json!([
            {"op": "wait_text", "selector": "#sessions", "text": "First topic"},
            {"op": "click", "selector": "#new-session"},
            {"op": "wait_text", "selector": "#title", "text": "New session"},
            {"op": "select", "selector": "#model", "value": "openai/gpt-4.1-mini"},
            {"op": "files", "selector": "#attach", "paths": [notes]},
            {"op": "wait_text", "selector": "#attachments", "text": "notes.md"},
            {"op": "fill", "selector": "#message", "text": "Second topic: the parser"},
            {"op": "click", "selector": "#send"},
            {"op": "wait_text", "selector": ".turn.assistant .answer", "text": "Two."},
            {"op": "wait_text", "selector": "#sessions", "text": "Second topic"},
            {"op": "eval", "script": SHOWN_TITLES},
            {"op": "fill", "selector": "#search", "text": "LEXER"},
            {"op": "eval", "script": SHOWN_TITLES},
            {"op": "fill", "selector": "#search", "text": ""},
            {"op": "click", "selector": "#sessions li:first-child .rename"},
            {"op": "fill", "selector": "#sessions .title-field", "text": "Parser notes"},
            {"op": "press", "selector": "#sessions .title-field", "key": "Enter"},
            {"op": "wait_text", "selector": "#sessions", "text": "Parser notes"},
            {"op": "click", "selector": "#sessions li:nth-child(2) .delete"},
            {"op": "click", "selector": "#sessions li:nth-child(2) .delete"},
            {"op": "wait", "ms": 300},
            {"op": "eval", "script": SHOWN_TITLES},
            {"op": "paste_file", "selector": "#message", "name": "pasted.txt", "type": "text/plain", "text": "pasted words"},
            {"op": "wait_text", "selector": "#attachments", "text": "pasted.txt"},
            {"op": "drop_file", "selector": "#composer", "name": "dot.png", "type": "image/png", "base64": PNG},
            {"op": "wait_text", "selector": "#attachments", "text": "dot.png"},
            {"op": "fill", "selector": "#message", "text": "Third"},
            {"op": "click", "selector": "#send"},
            {"op": "wait_text", "selector": "#conversation", "text": "Three."},
            {"op": "eval", "script": "document.querySelector('#title').textContent"},
            {"op": "select", "selector": "#mode", "value": "plan"},
            {"op": "wait", "ms": 300},
            {"op": "screenshot", "path": shot},
            {"op": "axe"},
        ]),
    );
    let (texts, out) = run_page(
        &server.page_link(),
        steps,
        json!({}),
        sb.project().parent().unwrap(),
    );
    assert_eq!(
        texts[0], "Second topic: the parser | First topic: the lexer",
        "newest first"
    );
    assert_eq!(texts[1], "First topic: the lexer", "the search");
    assert_eq!(texts[2], "Parser notes", "renamed, and the other deleted");
    assert_eq!(
        texts[3], "Parser notes",
        "a later chat keeps the chosen title"
    );
    let violations: Vec<Value> = serde_json::from_str(&texts[4]).unwrap();
    let serious: Vec<&Value> = violations
        .iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
        .collect();
    assert!(serious.is_empty(), "{serious:#?}");

    let requests = model.requests();
    assert_eq!(requests[0].body["model"], "gpt-4.1");
    assert_eq!(
        requests[1].body["model"], "gpt-4.1-mini",
        "the picked model"
    );
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("recursive descent"), "{second}");
    assert_eq!(requests[2].body["model"], "gpt-4.1-mini");
    let third = requests[2].body["messages"].to_string();
    assert!(third.contains("pasted words"), "{third}");
    assert!(
        third.contains(&format!("data:image/png;base64,{PNG}")),
        "the dropped image: {third}"
    );
    let (_, listed) = server.call("GET", "/api/sessions", None);
    let titles: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["title"].as_str())
        .collect();
    assert_eq!(titles, ["Parser notes"]);
    assert_eq!(out.of_kind("network")[0]["failures"], json!([]));
    // The mode chosen on the page is the open session's.
    let id = listed["sessions"][0]["session_id"].as_str().unwrap();
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    assert_eq!(messages["mode"], "plan");
}

/// A page script that notes each new text `#state` shows in `window.statesSeen`.
const WATCH_STATES: &str = "(() => {
    const state = document.getElementById('state');
    let last = state.textContent;
    window.statesSeen = [];
    new MutationObserver(() => {
        if (state.textContent !== last) window.statesSeen.push(last = state.textContent);
    }).observe(state, { childList: true, characterData: true, subtree: true });
    return 'watching';
})()";

#[test]
fn the_page_reconnects_after_a_restart_mid_chat_and_goes_on() {
    let sb = sandbox();
    let stalled = MockReply {
        stall_after: Some(200),
        ..MockReply::text(&format!("Partial answer {}", "and more ".repeat(100)))
    };
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(stalled),
        MockTurn::Reply(MockReply::text("After the restart.")),
    ]);
    let server = Server::start(&sb, &model, &[]);
    let link = server.page_link();
    let steps = json!([
        {"op": "click", "selector": "#new-session"},
        {"op": "wait_text", "selector": "#state", "text": "Ready"},
        {"op": "fill", "selector": "#message", "text": "Long job"},
        {"op": "press", "selector": "#message", "key": "Enter"},
        {"op": "wait_text", "selector": "#state", "text": "Working"},
        // Every state the page shows from here on is noted: "Reconnecting…" may show for only
        // the half second before the first retry, shorter than a wait's polling interval.
        {"op": "eval", "script": WATCH_STATES},
        // The server restarts here (the test does it once the model has been asked).
        {"op": "wait_text", "selector": "#state", "text": "Ready"},
        {"op": "eval", "script": "window.statesSeen.join(' > ')"},
        {"op": "fill", "selector": "#message", "text": "Go on"},
        {"op": "click", "selector": "#send"},
        {"op": "wait_text", "selector": "#conversation", "text": "After the restart."},
        {"op": "eval", "script": "[...document.querySelectorAll('.turn.user .bubble')].map((b) => b.textContent).join(' | ')"},
        {"op": "eval", "script": "document.querySelectorAll('.turn.assistant').length"},
        {"op": "eval", "script": "getComputedStyle(document.body).backgroundColor"},
    ]);
    let dir = sb.project().parent().unwrap().to_owned();
    let page =
        std::thread::spawn(move || run_page(&link, steps, json!({"colorScheme": "dark"}), &dir));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while model.requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the chat never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let server = server.restart(&sb, &model);
    let (texts, _) = page.join().unwrap();
    assert_eq!(texts[0], "watching");
    assert!(
        texts[1].starts_with("Reconnecting…") && texts[1].ends_with("Ready"),
        "the page said it was reconnecting, then was ready: {}",
        texts[1]
    );
    assert_eq!(texts[2], "Long job | Go on", "each message once");
    assert_eq!(texts[3], "1", "one answer: {texts:?}");
    assert_eq!(texts[4], "rgb(23, 24, 27)", "the dark theme");
    let (_, listed) = server.call("GET", "/api/sessions", None);
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
}
