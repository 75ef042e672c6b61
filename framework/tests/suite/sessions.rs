//! Sessions: history carried across chats, remembered answers and transcripts in the store.

use super::support::*;
use agentry::agent::SessionOptions;
use agentry::event::AgentEvent;
use agentry::model::Message;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::PermissionOptionKind::AllowAlways;
use agentry::session::{SessionStore, SqliteStore};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn a_resumed_session_continues_its_history_and_remembered_answers() {
    let db = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db.path().join("s.db")).unwrap());
    let mut h = harness([
        response([call("c1", "Change", json!({"path": "a"}))]),
        ScriptedResponse::text("first answer"),
        response([call("c2", "Change", json!({"path": "b"}))]),
        ScriptedResponse::text("second answer"),
    ])
    .store(store.clone())
    .answers(Answers::with([AllowAlways]))
    .build();
    h.prompt("first").await.unwrap();
    let id = h.session.id().clone();

    let stored = store.load(&id).unwrap();
    assert_eq!(stored.meta.title.as_deref(), Some("first"));
    assert_eq!(stored.messages.len(), 4, "{:?}", stored.messages);
    assert!(stored.remembered.allowed.contains("Change"));
    // The transcript keeps the tool call's final state for replay.
    assert!(stored.events.iter().any(|e| matches!(e, AgentEvent::ToolCallUpdate(u) if u.tool_call_id.as_str() == "c1" && u.status.is_some())));

    let mut resumed = h
        .agent
        .resume_session(&id, SessionOptions::new(h.dir.path()))
        .unwrap();
    assert_eq!(resumed.history().len(), 4);
    let io = h.io();
    let content = vec![agentry::model::ContentBlock::Text {
        text: "second".into(),
    }];
    let summary = resumed
        .prompt(content, &Default::default(), &io)
        .await
        .unwrap();
    assert_eq!(summary.result, "second answer");
    // Not asked again: the answer was remembered in the store.
    assert_eq!(h.answers.asked_tools(), ["Change"]);
    let third_request = &h.model.requests()[2];
    assert_eq!(third_request.messages[0], Message::user_text("first"));
    assert_eq!(third_request.messages.len(), 5);
    assert_eq!(store.load(&id).unwrap().messages.len(), 8);
}
