//! What every [`SessionStore`] must do, as checks a store's own tests run against it: chats
//! append in order and read back from a reopened store, a rewind leaves the later chats out, a
//! chat begun and never ended reads as interrupted.
//!
//! Each check panics, naming what failed, when the store falls short.

// These are a test's checks: a failure is a panic at the line that found it.
#![allow(clippy::unwrap_used)]

use crate::checkpoint::ChatCheckpoint;
use crate::event::{AgentEvent, StopReason, Usage};
use crate::ids::{SessionId, TurnId};
use crate::model::Message;
use crate::pause::PausedChat;
use crate::permission::RememberedAnswers;
use crate::session::{
    ChatProgress, ChatRecord, SessionMeta, SessionStore, StoreError, interrupted, now_rfc3339,
};
use std::sync::Arc;

fn meta(id: &str) -> SessionMeta {
    SessionMeta {
        id: id.into(),
        cwd: "/p".into(),
        title: None,
        created_at: now_rfc3339(),
        updated_at: now_rfc3339(),
    }
}

fn chat(text: &str) -> ChatRecord {
    ChatRecord {
        begun: None,
        messages: vec![Message::user_text(text)],
        events: vec![AgentEvent::Notice {
            message: text.into(),
        }],
        stop_reason: Some(StopReason::EndTurn),
        usage: Usage::default(),
        remembered: RememberedAnswers {
            allowed: ["Bash".to_owned()].into(),
            ..RememberedAnswers::default()
        },
        title: Some(text.into()),
        history: None,
        paused: None,
    }
}

/// Chats append in order and are read back by `reopen`ed stores; compaction restarts the
/// history; renaming, deleting and unknown ids.
pub fn check(store: Arc<dyn SessionStore>, reopen: impl FnOnce() -> Arc<dyn SessionStore>) {
    store.create(&meta("s1")).unwrap();
    store.create(&meta("s2")).unwrap();
    store.append_chat(&"s1".into(), &chat("one")).unwrap();
    store.append_chat(&"s1".into(), &chat("two")).unwrap();
    drop(store);
    let store = reopen();
    let s1 = store.load(&"s1".into()).unwrap();
    assert_eq!(
        s1.messages,
        [Message::user_text("one"), Message::user_text("two")]
    );
    assert_eq!(s1.events.len(), 2);
    assert_eq!(s1.meta.title.as_deref(), Some("one"));
    assert!(s1.remembered.allowed.contains("Bash"));
    assert_eq!(store.list().unwrap()[0].id.as_str(), "s1");
    // A compacting chat restarts the history from its own.
    let mut compacting = chat("three");
    compacting.history = Some(vec![Message::user_text("summary")]);
    store.append_chat(&"s1".into(), &compacting).unwrap();
    store.append_chat(&"s1".into(), &chat("four")).unwrap();
    let s1 = store.load(&"s1".into()).unwrap();
    assert_eq!(
        s1.messages,
        [
            Message::user_text("summary"),
            Message::user_text("three"),
            Message::user_text("four")
        ]
    );
    assert_eq!(s1.events.len(), 4, "the transcript keeps every chat");
    assert_eq!(s1.paused, None);
    // The last chat's pause is the session's; a later chat ends it.
    let paused = PausedChat::default();
    let mut pausing = chat("five");
    pausing.paused = Some(paused.clone());
    store.append_chat(&"s1".into(), &pausing).unwrap();
    assert_eq!(store.load(&"s1".into()).unwrap().paused, Some(paused));
    store.append_chat(&"s1".into(), &chat("six")).unwrap();
    assert_eq!(store.load(&"s1".into()).unwrap().paused, None);
    // A title the user chose stays through later chats.
    store.rename(&"s1".into(), "Renamed").unwrap();
    store.append_chat(&"s1".into(), &chat("seven")).unwrap();
    assert_eq!(store.list().unwrap()[0].title.as_deref(), Some("Renamed"));
    // A session's description alone: the listing's, and its `updated_at` moves with a chat.
    let before = store.meta(&"s1".into()).unwrap();
    assert_eq!(before, store.list().unwrap()[0]);
    std::thread::sleep(std::time::Duration::from_millis(2));
    store.append_chat(&"s1".into(), &chat("eight")).unwrap();
    assert!(store.meta(&"s1".into()).unwrap().updated_at > before.updated_at);
    assert!(matches!(
        store.meta(&"nope".into()),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.rename(&"nope".into(), "x"),
        Err(StoreError::NotFound(_))
    ));
    store.delete(&"s2".into()).unwrap();
    assert!(matches!(
        store.load(&"s2".into()),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.append_chat(&"nope".into(), &chat("x")),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.delete(&"s2".into()),
        Err(StoreError::NotFound(_))
    ));
}

/// A chat whose user turn is `turn`, saying `text`.
fn turn_chat(turn: &str, text: &str) -> ChatRecord {
    let mut record = chat(text);
    record.events.insert(
        0,
        AgentEvent::TurnStarted {
            turn_id: TurnId(turn.into()),
            role: crate::event::Role::User,
            status: crate::event::TurnStatus::Completed,
            parent_fork_tool_call_id: None,
            loop_id: crate::event::ROOT_LOOP.into(),
            started_at: None,
        },
    );
    record
}

/// Chats named by their user turns, a checkpoint kept with one, and a rewind to it: that
/// chat and the later ones leave the history and the transcript (a compaction among them
/// too), the rewind's record follows, and all of it survives reopening.
pub fn check_rewind(store: Arc<dyn SessionStore>, reopen: impl FnOnce() -> Arc<dyn SessionStore>) {
    let id: SessionId = "r".into();
    store.create(&meta("r")).unwrap();
    store.append_chat(&id, &turn_chat("t1", "one")).unwrap();
    store.append_chat(&id, &turn_chat("t2", "two")).unwrap();
    let mut compacting = turn_chat("t3", "three");
    compacting.history = Some(vec![Message::user_text("summary")]);
    store.append_chat(&id, &compacting).unwrap();
    let loaded = store.load(&id).unwrap();
    let turns: Vec<Option<String>> = loaded
        .chats
        .iter()
        .map(|c| c.turn.as_ref().map(|t| t.0.clone()))
        .collect();
    assert_eq!(
        turns,
        [Some("t1".into()), Some("t2".into()), Some("t3".into())]
    );
    let second = loaded.chats[1].key;
    let checkpoint = ChatCheckpoint {
        workspace: "/p".into(),
        before: crate::checkpoint::TreeId("a".repeat(40)),
        after: None,
        left_out: Vec::new(),
        taken_at: now_rfc3339(),
    };
    store.save_checkpoint(&id, second, &checkpoint).unwrap();
    assert_eq!(
        store.load(&id).unwrap().chats[1].checkpoint.as_ref(),
        Some(&checkpoint)
    );
    let mut rewind = chat("rewound");
    rewind.messages.clear();
    rewind.title = None;
    store.rewind(&id, second, &rewind).unwrap();
    drop(store);
    let store = reopen();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, [Message::user_text("one")]);
    assert_eq!(loaded.events.len(), 3, "{:?}", loaded.events);
    assert_eq!(
        loaded.events[2],
        AgentEvent::Notice {
            message: "rewound".into()
        }
    );
    assert_eq!(loaded.chats.len(), 2);
    assert_eq!(loaded.chats[1].turn, None);
    assert_eq!(loaded.meta.title.as_deref(), Some("one"));
    // A later chat follows the rewind's record.
    store.append_chat(&id, &turn_chat("t4", "four")).unwrap();
    assert_eq!(
        store.load(&id).unwrap().messages,
        [Message::user_text("one"), Message::user_text("four")]
    );
    assert!(matches!(
        store.rewind(&"nope".into(), second, &rewind),
        Err(StoreError::NotFound(_))
    ));
}

fn progress(text: &str) -> ChatProgress {
    ChatProgress {
        messages: vec![Message::user_text(text)],
        events: vec![AgentEvent::Notice {
            message: text.into(),
        }],
        history: None,
    }
}

/// Chats recorded as they go: a begun chat that never ends reads as interrupted (after
/// what it recorded, once, in its place), later chats follow it, a begun chat that ends
/// reads as one chat with nothing twice.
pub fn check_progress(
    store: Arc<dyn SessionStore>,
    reopen: impl FnOnce() -> Arc<dyn SessionStore>,
) {
    let id: SessionId = "s".into();
    store.create(&meta("s")).unwrap();
    store.append_chat(&id, &chat("done")).unwrap();
    let Some(cut) = store
        .begin_chat(&id, Some("cut"), &progress("cut"))
        .unwrap()
    else {
        panic!("the store records chats in progress");
    };
    store
        .continue_chat(&id, cut, &progress("cut round"))
        .unwrap();
    drop(store);
    let store = reopen();
    let (note, mark) = interrupted(&id);
    let loaded = store.load(&id).unwrap();
    assert_eq!(
        loaded.messages,
        [
            Message::user_text("done"),
            Message::user_text("cut"),
            Message::user_text("cut round"),
            note.clone()
        ]
    );
    assert_eq!(loaded.events.len(), 4);
    assert_eq!(loaded.events[3], mark);
    // A begun chat's title does not replace the session's.
    assert_eq!(loaded.meta.title.as_deref(), Some("done"));

    // A later chat, begun and ended: recorded once, after the interrupted one.
    let key = store
        .begin_chat(&id, None, &progress("next"))
        .unwrap()
        .unwrap();
    store
        .continue_chat(&id, key, &progress("next round"))
        .unwrap();
    let mut rest = chat("next end");
    rest.begun = Some(key);
    store.append_chat(&id, &rest).unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(
        loaded.messages,
        [
            Message::user_text("done"),
            Message::user_text("cut"),
            Message::user_text("cut round"),
            note,
            Message::user_text("next"),
            Message::user_text("next round"),
            Message::user_text("next end"),
        ]
    );
    assert_eq!(loaded.events.len(), 7);
    assert_eq!(
        loaded.events.iter().filter(|e| **e == mark).count(),
        1,
        "only the chat that never ended is marked"
    );
    // An ended chat takes no more progress.
    assert!(store.continue_chat(&id, key, &progress("late")).is_err());
    assert!(store.append_chat(&id, &rest).is_err());
    assert_eq!(store.load(&id).unwrap().messages.len(), 7);

    // A chat that compacts mid-way: the history restarts there, its messages recorded anew.
    let key = store
        .begin_chat(&id, None, &progress("long"))
        .unwrap()
        .unwrap();
    let mut compacted = progress("kept");
    compacted.history = Some(vec![Message::user_text("summary")]);
    store.continue_chat(&id, key, &compacted).unwrap();
    store.continue_chat(&id, key, &progress("after")).unwrap();
    let (note, _) = interrupted(&id);
    assert_eq!(
        store.load(&id).unwrap().messages,
        [
            Message::user_text("summary"),
            Message::user_text("kept"),
            Message::user_text("after"),
            note
        ]
    );
}
