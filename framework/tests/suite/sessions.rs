//! Sessions: history carried across chats, remembered answers and transcripts in the store.

use super::support::*;
use agentry::agent::SessionOptions;
use agentry::event::AgentEvent;
use agentry::model::Message;
use agentry::model::scripted::ScriptedResponse;
use agentry::permission::PermissionOptionKind;
use agentry::permission::PermissionOptionKind::AllowAlways;
use agentry::session::SessionStore;
use agentry_sqlite::SqliteStore;
use serde_json::json;
use std::sync::Arc;

/// A session kept in `store` whose model changes a file in each of two chats, the user giving
/// `answers`.
fn two_changes(store: Arc<dyn SessionStore>, answers: &[PermissionOptionKind]) -> Harness {
    harness([
        response([call("c1", "Change", json!({"path": "a"}))]),
        ScriptedResponse::text("first answer"),
        response([call("c2", "Change", json!({"path": "b"}))]),
        ScriptedResponse::text("second answer"),
    ])
    .store(store)
    .answers(Answers::with(answers.iter().copied()))
    .build()
}

#[tokio::test]
async fn a_resumed_session_continues_its_history_and_remembered_answers() {
    let db = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db.path().join("s.db")).unwrap());
    let mut h = two_changes(store.clone(), &[AllowAlways]);
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
    let content = vec![agentry::tool::ContentBlock::Text {
        text: "second".into(),
    }];
    let summary = resumed
        .prompt_with(content, &Default::default(), &io)
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

#[tokio::test]
async fn a_history_too_long_for_the_window_is_summarised_kept_in_the_store_and_announced() {
    use agentry::agent::compaction::SUMMARY_HEADING;
    use agentry::agent::{Agent, ChatIo, ChatOptions};
    use agentry::model::scripted::ScriptedModel;
    use agentry::tool::ContentBlock;

    let db = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db.path().join("s.db")).unwrap());
    let model = Arc::new(
        ScriptedModel::new([
            ScriptedResponse::text("first answer"),
            ScriptedResponse::text("The user asked about topic one; I answered."),
            ScriptedResponse::text("second answer"),
        ])
        .with_context_window(2_000),
    );
    let agent = Agent::builder(model.clone())
        .store(store.clone())
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent.new_session(SessionOptions::new(dir.path())).unwrap();
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let io = ChatIo::new(sender);
    let long = |topic: &str| {
        vec![ContentBlock::text(format!(
            "{topic}: {}",
            "detail ".repeat(430)
        ))]
    };
    session
        .prompt_with(long("topic one"), &ChatOptions::default(), &io)
        .await
        .unwrap();
    assert_eq!(
        model.requests().len(),
        1,
        "no compaction while the history fits"
    );
    let summary = session
        .prompt_with(long("topic two"), &ChatOptions::default(), &io)
        .await
        .unwrap();
    assert_eq!(summary.result, "second answer");

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let asked = format!("{:?}", requests[1].messages.last().unwrap());
    assert!(asked.contains("Write a summary"), "{asked}");
    let Message::User { content } = &requests[2].messages[0] else {
        panic!("{:?}", requests[2].messages[0])
    };
    assert_eq!(
        content,
        &vec![ContentBlock::text(format!(
            "{SUMMARY_HEADING}\nThe user asked about topic one; I answered."
        ))]
    );
    assert_eq!(
        requests[2].messages.len(),
        2,
        "the summary, then the new question"
    );

    let mut compacted = None;
    while let Ok(event) = events.try_recv() {
        if let AgentEvent::Compacted(compaction) = event {
            compacted = Some(compaction);
        }
    }
    let compacted = compacted.expect("the user was not told");
    assert_eq!(
        compacted.trigger,
        agentry::agent::compaction::CompactionTrigger::Auto
    );
    assert_eq!(
        (compacted.messages_summarised, compacted.messages_kept),
        (2, 1)
    );
    assert!(
        compacted.tokens_after < compacted.tokens_before,
        "{compacted:?}"
    );
    assert!(
        compacted
            .describe()
            .contains("2 earlier messages were summarised, 1 message kept"),
        "{}",
        compacted.describe()
    );

    let stored = store.load(session.id()).unwrap();
    assert!(
        stored
            .events
            .iter()
            .any(|event| matches!(event, AgentEvent::Compacted(_))),
        "the compaction is kept with the session"
    );
    assert_eq!(stored.messages.len(), 3);
    assert_eq!(stored.messages[0], requests[2].messages[0]);
    assert_eq!(session.history(), stored.messages.as_slice());
}

/// A read-only tool that answers with its own name (to tell providers apart).
struct Named(&'static str);

impl agentry::tool::Tool for Named {
    type Input = serde_json::Value;
    type Output = String;
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> String {
        "Says its name.".to_owned()
    }
    fn kind(&self) -> agentry::tool::ToolKind {
        agentry::tool::ToolKind::Read
    }
    async fn call(
        &self,
        _input: serde_json::Value,
        _ctx: agentry::tool::ToolContext,
    ) -> Result<String, agentry::tool::ToolError> {
        Ok(format!("I am {}", self.0))
    }
}

#[tokio::test]
async fn compacting_on_request_replaces_the_history_by_a_summary_kept_in_the_store() {
    use agentry::agent::compaction::SUMMARY_HEADING;
    let db = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db.path().join("s.db")).unwrap());
    let mut h = harness([
        ScriptedResponse::text("the answer"),
        ScriptedResponse::text("We talked about the parser."),
    ])
    .store(store.clone())
    .build();
    let cancel = tokio_util::sync::CancellationToken::new();
    assert_eq!(
        h.session.compact(None, &cancel).await.unwrap(),
        None,
        "nothing to compact yet"
    );
    h.prompt("tell me about the parser").await.unwrap();
    assert_eq!(h.session.history().len(), 2);
    let compaction = h.session.compact(None, &cancel).await.unwrap().unwrap();
    assert_eq!(compaction.messages_summarised, 2);
    let [Message::User { content }] = h.session.history() else {
        panic!("{:?}", h.session.history());
    };
    let summary = serde_json::to_string(content).unwrap();
    assert!(summary.contains(SUMMARY_HEADING) && summary.contains("We talked about the parser."));
    let reopened = h
        .agent
        .resume_session(h.session.id(), SessionOptions::new(h.dir.path()))
        .unwrap();
    assert_eq!(reopened.history(), h.session.history());
}

#[tokio::test]
async fn a_provider_added_to_one_session_serves_only_that_session() {
    let mut h = harness([
        response([call("c1", "Session_only", json!({}))]),
        ScriptedResponse::text("used it"),
    ])
    .build();
    let provider: Arc<dyn agentry::provider::Provider> = Arc::new(
        agentry::provider::SimpleProvider::new("mine", "").with_tool(Named("Session_only")),
    );
    h.session.add_provider(provider.clone()).unwrap();
    assert!(h.session.registry().get("Session_only").is_some());
    assert!(h.agent.registry().get("Session_only").is_none());
    let other = h
        .agent
        .new_session(SessionOptions::new(h.dir.path()))
        .unwrap();
    assert!(other.registry().get("Session_only").is_none());
    assert_eq!(h.prompt("go").await.unwrap().answer(), "used it");
    let offered: Vec<String> = h.model.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(offered.contains(&"Session_only".to_owned()), "{offered:?}");
    let events = h.events();
    assert_eq!(
        statuses(&events, "c1").last(),
        Some(&agentry::event::ToolCallStatus::Completed)
    );
    assert!(
        h.session.add_provider(provider).is_err(),
        "the same tool twice is refused"
    );
}

#[tokio::test]
async fn a_session_can_switch_models_and_keep_its_history() {
    let mut h = harness([ScriptedResponse::text("from the first model")]).build();
    h.prompt("one").await.unwrap();
    let second = Arc::new(agentry::model::scripted::ScriptedModel::new([
        ScriptedResponse::text("from the second model"),
    ]));
    h.session.set_model(second.clone());
    assert_eq!(
        h.prompt("two").await.unwrap().answer(),
        "from the second model"
    );
    assert_eq!(
        h.model.requests().len(),
        1,
        "the first model got one request"
    );
    let sent = &second.requests()[0].messages;
    assert_eq!(sent.len(), 3, "the history came along: {sent:?}");
}

/// A provider whose tool set grows while a chat runs (as an MCP server's may): running its
/// `Grow` tool adds `Later`.
#[derive(Default)]
struct Growing {
    extra: std::sync::Mutex<Vec<&'static str>>,
    revision: std::sync::atomic::AtomicU64,
}

struct Grow(Arc<Growing>);

impl agentry::tool::Tool for Grow {
    type Input = serde_json::Value;
    type Output = String;
    fn name(&self) -> &str {
        "Grow"
    }
    fn description(&self) -> String {
        "Adds a tool.".to_owned()
    }
    fn kind(&self) -> agentry::tool::ToolKind {
        agentry::tool::ToolKind::Read
    }
    async fn call(
        &self,
        _input: serde_json::Value,
        _ctx: agentry::tool::ToolContext,
    ) -> Result<String, agentry::tool::ToolError> {
        self.0.extra.lock().unwrap().push("Later");
        self.0
            .revision
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok("grown".to_owned())
    }
}

struct GrowingProvider(Arc<Growing>);

impl agentry::provider::Provider for GrowingProvider {
    fn name(&self) -> &str {
        "growing"
    }
    fn description(&self) -> String {
        String::new()
    }
    fn tools(&self) -> Vec<Arc<dyn agentry::tool::DynTool>> {
        let mut tools = vec![agentry::tool::erase(Grow(self.0.clone()))];
        for name in self.0.extra.lock().unwrap().iter() {
            tools.push(agentry::tool::erase(Named(name)));
        }
        tools
    }
    fn revision(&self) -> u64 {
        self.0.revision.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test]
async fn a_provider_that_changes_its_tools_is_read_again_before_the_next_request() {
    let mut h = harness([
        response([call("c1", "Grow", json!({}))]),
        response([call("c2", "Later", json!({}))]),
        ScriptedResponse::text("done"),
    ])
    .build();
    let provider = GrowingProvider(Arc::new(Growing::default()));
    h.session.add_provider(Arc::new(provider)).unwrap();
    assert_eq!(h.prompt("go").await.unwrap().answer(), "done");
    let offered = |request: usize| -> Vec<String> {
        h.model.requests()[request]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert!(!offered(0).contains(&"Later".to_owned()));
    assert!(offered(1).contains(&"Later".to_owned()), "{:?}", offered(1));
    assert!(h.model.requests()[1].system.contains("Later"));
    assert_eq!(
        statuses(&h.events(), "c2").last(),
        Some(&agentry::event::ToolCallStatus::Completed)
    );
    assert!(h.session.registry().get("Later").is_some());
}

#[tokio::test]
async fn a_session_is_stored_with_its_first_chat_not_before() {
    let db = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db.path().join("s.db")).unwrap());
    let mut h = harness([ScriptedResponse::text("an answer")])
        .store(store.clone())
        .build();
    let id = h.session.id().clone();
    assert!(store.list().unwrap().is_empty(), "stored before a message");
    assert!(store.load(&id).is_err());
    h.prompt("the first message").await.unwrap();
    let listed = store.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, id);
    assert_eq!(listed[0].title.as_deref(), Some("the first message"));
    assert_eq!(store.load(&id).unwrap().messages.len(), 2);
}

#[tokio::test]
async fn always_answers_do_not_follow_a_session_resumed_in_another_folder() {
    let db = tempfile::tempdir().unwrap();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db.path().join("s.db")).unwrap());
    let mut h = two_changes(store.clone(), &[AllowAlways, AllowAlways]);
    h.prompt("first").await.unwrap();
    let id = h.session.id().clone();
    assert!(
        store
            .load(&id)
            .unwrap()
            .remembered
            .allowed
            .contains("Change")
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let mut resumed = h
        .agent
        .resume_session(&id, SessionOptions::new(elsewhere.path()))
        .unwrap();
    let content = vec![agentry::tool::ContentBlock::Text {
        text: "second".into(),
    }];
    resumed
        .prompt_with(content, &Default::default(), &h.io())
        .await
        .unwrap();
    assert_eq!(
        h.answers.asked_tools(),
        ["Change", "Change"],
        "asked again in another folder"
    );
}

/// The in-memory store keeps sessions as every store must (the same checks the SQLite and
/// PostgreSQL stores pass): its `reopen` is the same store.
#[test]
fn the_memory_store_keeps_rewinds_and_records_chats_in_progress_as_every_store_does() {
    use agentry::session::MemoryStore;
    use agentry::testing::stores;
    let fresh = || -> Arc<dyn SessionStore> { Arc::new(MemoryStore::new()) };
    let store = fresh();
    let same = store.clone();
    stores::check(store, move || same);
    let store = fresh();
    let same = store.clone();
    stores::check_rewind(store, move || same);
    let store = fresh();
    let same = store.clone();
    stores::check_progress(store, move || same);
}

#[tokio::test]
async fn a_second_signature_opens_a_reasoning_block_of_its_own_and_never_overwrites_the_first() {
    use agentry::model::AssistantContent;
    use agentry::model::scripted::ScriptStep;
    // OpenAI's reasoning items often come without a summary: one encrypted item after another.
    let mut h = harness([
        response([
            ScriptStep::Thinking("Plan.".into()),
            ScriptStep::Signature("first-item".into()),
            ScriptStep::Signature("second-item".into()),
            ScriptStep::Text("done".into()),
        ]),
        ScriptedResponse::text("again"),
    ])
    .build();
    h.prompt("one").await.unwrap();
    h.prompt("two").await.unwrap();
    let requests = h.model.requests();
    let Some(Message::Assistant { content, .. }) = requests[1].messages.get(1) else {
        panic!("{:?}", requests[1].messages);
    };
    assert_eq!(
        content,
        &vec![
            AssistantContent::Thinking {
                text: "Plan.".into(),
                signature: Some("first-item".into()),
            },
            AssistantContent::Thinking {
                text: String::new(),
                signature: Some("second-item".into()),
            },
            AssistantContent::Text {
                text: "done".into()
            },
        ]
    );
}
