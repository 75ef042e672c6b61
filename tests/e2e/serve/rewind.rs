//! `POST /api/sessions/{id}/rewind` through the binary: a chat's file removed and the chat cut
//! from `/messages`, its subscribers told with `session:rewound`; bad requests refused.

use super::{Server, events, send, wait_for, with_first_message};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn};
use serde_json::json;

#[test]
fn a_rewind_over_rest_restores_the_files_cuts_the_messages_and_tells_subscribers() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "w",
            "Write",
            json!({"file_path": "made.txt", "content": "made\n"}),
        )),
        MockTurn::Reply(MockReply::text("Written.")),
    ]);
    let server = Server::start(&sb, &model, &["--permission-mode", "bypass"]);
    let id = server.new_session(&sb);
    let (status, end) = server.call(
        "POST",
        &format!("/api/sessions/{id}/chat"),
        Some(json!({"message": "write it"})),
    );
    assert_eq!(status, 200, "{end}");
    assert!(sb.project().join("made.txt").exists());
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    let turns = messages["turns"].as_array().unwrap();
    assert_eq!(turns[0]["role"], "user");
    let chat_id = turns[0]["turn_id"].as_str().unwrap().to_owned();

    // Bad requests change nothing.
    let path = format!("/api/sessions/{id}/rewind");
    let (status, error) = server.call("POST", &path, Some(json!({"chat_id": "turn_nope"})));
    assert_eq!(
        (status, error["code"].as_str()),
        (422, Some("invalid_message")),
        "{error}"
    );
    let (status, _) = server.call(
        "POST",
        &path,
        Some(json!({"chat_id": chat_id, "files": false, "conversation": false})),
    );
    assert_eq!(status, 422);
    assert!(sb.project().join("made.txt").exists());

    let subscriber = server.client_in_background(
        &sb,
        "ws",
        vec![
            send("session:subscribe", json!({"session_id": id})),
            wait_for("session:rewound", 1),
        ],
    );
    // The subscription is in before the rewind.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let (status, rewound) = server.call("POST", &path, Some(json!({"chat_id": chat_id})));
    assert_eq!(status, 200, "{rewound}");
    assert_eq!(rewound["conversation"], true);
    assert_eq!(
        rewound["files"],
        json!([{"path": "made.txt", "change": "deleted"}])
    );
    assert!(!sb.project().join("made.txt").exists());
    let told = subscriber.join().unwrap();
    let rewinds = events(&told, "session:rewound");
    assert_eq!(rewinds.len(), 1, "{:#?}", told.records);
    assert_eq!(rewinds[0]["chat_id"], chat_id.as_str());
    assert_eq!(rewinds[0]["files"], rewound["files"]);

    // The chat is gone from the messages; a note of the rewind is there instead.
    let (_, messages) = server.call("GET", &format!("/api/sessions/{id}/messages"), None);
    let turns = messages["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1, "{messages:#}");
    assert_eq!(turns[0]["role"], "system");
    assert_eq!(
        turns[0]["blocks"][0]["content"],
        "Rewound to before “write it”; 1 file restored"
    );
    let (status, _) = server.call("POST", &path, Some(json!({"chat_id": chat_id})));
    assert_eq!(status, 422, "the chat is gone");
}

#[test]
fn in_chromium_rewind_to_here_asks_about_hand_edits_and_puts_the_message_back() {
    let sb = sandbox();
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(
            "b",
            "Bash",
            json!({"command": "echo made > made.txt && echo other > other.txt", "description": "Make two files"}),
        )),
        MockTurn::Reply(MockReply::text("Written.")),
    ]);
    let server = Server::start(&sb, &model, &["--permission-mode", "bypass"]);
    let folder = sb.project().parent().unwrap().to_owned();
    let chat = with_first_message("write it", "Written.", json!([]));
    super::run_page(&server.page_link(), chat, json!({}), &folder);
    // The user changes one of the files by hand, then rewinds from the page.
    sb.write("project/made.txt", "by hand\n");
    let shot = std::env::var_os("REWIND_SCREENSHOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| folder.join("rewound.png"));
    let rewind = json!([
        {"op": "click", "selector": "#sessions li:first-child"},
        {"op": "wait_text", "selector": ".turn.user .bubble", "text": "write it"},
        {"op": "click", "selector": ".turn.user .rewind"},
        {"op": "click", "selector": ".rewind-choices button:has-text('Files and conversation')"},
        {"op": "wait_text", "selector": ".rewind-choices", "text": "Changed by hand"},
        {"op": "text", "selector": ".rewind-choices div"},
        {"op": "click", "selector": ".rewind-choices button:has-text('Keep them')"},
        {"op": "wait_text", "selector": ".turn.system", "text": "Rewound to before"},
        {"op": "eval", "script": "document.querySelectorAll('.turn.user, .turn.assistant').length"},
        {"op": "eval", "script": "document.querySelector('#message').value"},
        {"op": "screenshot", "path": shot},
    ]);
    let (texts, _) = super::run_page(&server.page_link(), rewind, json!({}), &folder);
    assert_eq!(
        texts,
        [
            "Changed by hand since the agent's last change: made.txt",
            "0",
            "write it"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("made.txt")).unwrap(),
        "by hand\n"
    );
    assert!(!sb.project().join("other.txt").exists());
    assert!(shot.exists());
}
