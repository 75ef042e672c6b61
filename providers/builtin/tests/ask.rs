//! AskUserQuestion in whole chats over a scripted model: offered only when someone can answer,
//! answers quoted for the model, bad shapes refused, and a sub-agent's question reaching the user;
//! and for a front-end that answers later, chats that pause and resume (also in a sub-agent).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::event::{AgentEvent, ChatSummary, Role, StopReason, ToolCallStatus, TurnStatus};
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::model::{Message, ModelRequest};
use agentry::provider::SimpleProvider;
use agentry::question::{
    Answers, PauseForAnswers, QuestionAnswer, QuestionHandler, QuestionOutcome, QuestionRequest,
};
use agentry::session::MemoryStore;
use agentry::subagent::{SubAgentSpec, SubAgents};
use agentry::tool::ContentBlock;
use agentry::tool::{ToolError, ToolKind, tool_fn};
use agentry_builtin::Builtin;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ScriptedResponse {
    ScriptedResponse::tool_call_with_id(id, name, arguments)
}

fn database_question() -> serde_json::Value {
    json!({"questions": [{
        "question": "Which database?",
        "header": "Database",
        "options": [{"label": "PostgreSQL"}, {"label": "SQLite", "description": "A file"}],
    }]})
}

/// Answers with the outcomes it is given, in order, and keeps what it was asked.
#[derive(Default)]
struct Person {
    outcomes: Mutex<Vec<QuestionOutcome>>,
    asked: Mutex<Vec<QuestionRequest>>,
}

#[agentry::async_trait]
impl QuestionHandler for Person {
    async fn ask(&self, request: QuestionRequest) -> QuestionOutcome {
        self.asked.lock().unwrap().push(request);
        self.outcomes.lock().unwrap().remove(0)
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TaskInput {
    /// The task.
    prompt: String,
}

/// A tool that hands its task to a sub-agent with every tool.
fn delegate() -> SimpleProvider {
    SimpleProvider::new("delegate", "").with_tool(tool_fn(
        "Delegate",
        "Hands a task to a sub-agent.",
        ToolKind::Think,
        |input: TaskInput, ctx| async move {
            let runner = SubAgents::of(&ctx).ok_or_else(|| ToolError::failed("no sub-agents"))?;
            let outcome = runner
                .run(
                    &ctx,
                    SubAgentSpec::new("You are a sub-agent."),
                    input.prompt,
                )
                .await?;
            Ok::<_, ToolError>(outcome.answer)
        },
    ))
}

async fn chat(script: Vec<ScriptedResponse>, person: Option<Arc<Person>>) -> Vec<ModelRequest> {
    let model = Arc::new(ScriptedModel::new(script));
    let agent = Agent::builder(model.clone())
        .provider(Builtin::default())
        .provider(delegate())
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent.new_session(SessionOptions::new(dir.path())).unwrap();
    let (events, _receiver) = tokio::sync::mpsc::unbounded_channel();
    let mut io = ChatIo::new(events);
    if let Some(person) = person {
        io = io.with_questions(person);
    }
    session
        .prompt_with(
            vec![ContentBlock::text("set it up")],
            &ChatOptions::default(),
            &io,
        )
        .await
        .unwrap();
    model.requests()
}

fn offered(request: &ModelRequest) -> bool {
    request.tools.iter().any(|t| t.name == "AskUserQuestion")
}

/// The text of the tool result in `request` (its last message).
fn result_text(request: &ModelRequest) -> (bool, String) {
    match request.messages.last() {
        Some(Message::ToolResults { results }) => (results[0].is_error, results[0].text()),
        other => panic!("no tool results: {other:?}"),
    }
}

#[tokio::test]
async fn nobody_to_answer_means_the_tool_is_not_offered() {
    let requests = chat(vec![ScriptedResponse::text("ok")], None).await;
    assert!(!offered(&requests[0]));
}

#[tokio::test]
async fn answers_reach_the_model_quoted_and_a_decline_is_said() {
    let person = Arc::new(Person::default());
    *person.outcomes.lock().unwrap() = vec![
        QuestionOutcome::Answered(Answers {
            selections: [("0".to_owned(), vec![1])].into(),
            custom: Default::default(),
        }),
        QuestionOutcome::Declined,
    ];
    let requests = chat(
        vec![
            call("q1", "AskUserQuestion", database_question()),
            call("q2", "AskUserQuestion", database_question()),
            ScriptedResponse::text("done"),
        ],
        Some(person.clone()),
    )
    .await;
    assert!(offered(&requests[0]));
    assert_eq!(
        result_text(&requests[1]),
        (
            false,
            "The user answered: \"Which database?\" = \"SQLite\". Go on with these answers in mind."
                .to_owned()
        )
    );
    assert!(result_text(&requests[2]).1.contains("chose not to answer"));
    let asked = person.asked.lock().unwrap();
    assert_eq!(asked[0].tool_call_id.as_str(), "q1");
    assert_eq!(
        asked[0].questions[0].options[1].description.as_deref(),
        Some("A file")
    );
    assert_eq!(asked[0].asked_by_fork, None);
}

#[tokio::test]
async fn bad_shapes_are_refused_naming_the_field_before_anyone_is_asked() {
    let person = Arc::new(Person::default());
    let requests = chat(
        vec![
            call(
                "q1",
                "AskUserQuestion",
                json!({"questions": [{"question": "Which?", "header": "A very long header", "options": [{"label": "a"}, {"label": "b"}]}]}),
            ),
            ScriptedResponse::text("done"),
        ],
        Some(person.clone()),
    )
    .await;
    let (is_error, text) = result_text(&requests[1]);
    assert!(is_error);
    assert!(
        text.contains("`questions[0].header` has 18 characters"),
        "{text}"
    );
    assert!(person.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_sub_agents_question_reaches_the_user_saying_which_sub_agent_asks() {
    let person = Arc::new(Person::default());
    *person.outcomes.lock().unwrap() = vec![QuestionOutcome::Answered(Answers {
        selections: Default::default(),
        custom: [("0".to_owned(), "DuckDB".to_owned())].into(),
    })];
    let requests = chat(
        vec![
            call("d1", "Delegate", json!({"prompt": "pick a database"})),
            call("q1", "AskUserQuestion", database_question()),
            ScriptedResponse::text("DuckDB it is"),
            ScriptedResponse::text("done"),
        ],
        Some(person.clone()),
    )
    .await;
    assert!(offered(&requests[1]), "the sub-agent may ask too");
    assert!(
        result_text(&requests[2])
            .1
            .contains("\"Which database?\" = \"DuckDB\"")
    );
    let asked = person.asked.lock().unwrap();
    assert_eq!(
        asked[0].asked_by_fork.as_ref().map(|id| id.as_str()),
        Some("d1")
    );
}

/// A chat whose front-end answers later: an agent with a store, and the events of each chat.
struct Later {
    model: Arc<ScriptedModel>,
    agent: Agent,
    session: agentry::agent::Session,
}

impl Later {
    fn new(script: Vec<ScriptedResponse>) -> (Self, tempfile::TempDir) {
        let model = Arc::new(ScriptedModel::new(script));
        let agent = Agent::builder(model.clone())
            .provider(Builtin::default())
            .provider(delegate())
            .store(Arc::new(MemoryStore::new()))
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let session = agent.new_session(SessionOptions::new(dir.path())).unwrap();
        (
            Self {
                model,
                agent,
                session,
            },
            dir,
        )
    }

    fn io() -> (ChatIo, tokio::sync::mpsc::UnboundedReceiver<AgentEvent>) {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        (
            ChatIo::new(sender).with_questions(Arc::new(PauseForAnswers)),
            receiver,
        )
    }

    async fn prompt(&mut self, text: &str) -> (ChatSummary, Vec<AgentEvent>) {
        let (io, receiver) = Self::io();
        let summary = self
            .session
            .prompt_with(vec![ContentBlock::text(text)], &ChatOptions::default(), &io)
            .await
            .unwrap();
        (summary, drain(receiver))
    }

    async fn answer(
        &mut self,
        answer: QuestionAnswer,
    ) -> Result<(ChatSummary, Vec<AgentEvent>), agentry::AgentError> {
        let (io, receiver) = Self::io();
        let summary = self
            .session
            .answer(answer, &ChatOptions::default(), &io)
            .await?;
        Ok((summary, drain(receiver)))
    }

    fn waiting(&self) -> Vec<String> {
        self.session
            .paused()
            .map(|p| {
                p.questions()
                    .iter()
                    .map(|q| q.tool_call_id.to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn drain(mut receiver: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    events
}

fn answer(id: &str, selections: &[(&str, Vec<usize>)], custom: &[(&str, &str)]) -> QuestionAnswer {
    QuestionAnswer {
        tool_call_id: id.into(),
        answers: Answers {
            selections: selections
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            custom: custom
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        },
    }
}

/// The statuses a call went through, in order.
fn statuses(events: &[AgentEvent], id: &str) -> Vec<ToolCallStatus> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall(call) if call.tool_call_id.as_str() == id => Some(call.status),
            AgentEvent::ToolCallUpdate(update) if update.tool_call_id.as_str() == id => {
                update.status
            }
            _ => None,
        })
        .collect()
}

/// How each turn ended: (loop id, status).
fn turn_ends(events: &[AgentEvent]) -> Vec<(String, TurnStatus)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TurnEnded {
                loop_id,
                status,
                role: Role::Assistant,
                ..
            } => Some((loop_id.clone(), *status)),
            _ => None,
        })
        .collect()
}

/// The tool results of `request`'s last message: (call id, is_error, text).
fn results(request: &ModelRequest) -> Vec<(String, bool, String)> {
    match request.messages.last() {
        Some(Message::ToolResults { results }) => results
            .iter()
            .map(|r| (r.tool_call_id.to_string(), r.is_error, r.text()))
            .collect(),
        other => panic!("no tool results: {other:?}"),
    }
}

fn todo() -> serde_json::Value {
    json!({"todos": [{"content": "Pick a database", "status": "in_progress", "activeForm": "Picking a database"}]})
}

#[tokio::test]
async fn a_question_pauses_the_chat_and_the_answer_resumes_it_where_it_stopped() {
    let (mut later, _dir) = Later::new(vec![
        call("q1", "AskUserQuestion", database_question()).then_tool_call("TodoWrite", todo()),
        ScriptedResponse::text("SQLite it is"),
    ]);
    let (summary, events) = later.prompt("set it up").await;
    assert_eq!(summary.stop_reason, StopReason::Paused);
    assert_eq!(later.waiting(), ["q1"]);
    assert_eq!(
        later.session.paused().unwrap().questions()[0].source_loop,
        None
    );
    assert!(offered(&later.model.requests()[0]));
    use ToolCallStatus::*;
    assert_eq!(
        statuses(&events, "q1"),
        [Pending, InProgress, AwaitingAnswer]
    );
    assert_eq!(
        statuses(&events, "call_1_1"),
        [Pending, InProgress, Completed],
        "the other call of the batch finishes"
    );
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::QuestionPending(q) if q.tool_call_id.as_str() == "q1")
        )
    );
    assert_eq!(
        turn_ends(&events),
        [("root".to_owned(), TurnStatus::Paused)]
    );
    let paused_turn = events.iter().find_map(|e| match e {
        AgentEvent::TurnEnded {
            turn_id,
            status: TurnStatus::Paused,
            ..
        } => Some(turn_id.clone()),
        _ => None,
    });

    // Answers that name no waiting call, or do not fit, change nothing.
    let error = later.answer(answer("q9", &[("0", vec![0])], &[])).await;
    assert!(matches!(error, Err(agentry::AgentError::NoSuchQuestion(_))));
    let error = later.answer(answer("q1", &[("0", vec![7])], &[])).await;
    assert!(
        matches!(&error, Err(agentry::AgentError::InvalidAnswer(m)) if m.contains("no option 7")),
        "{error:?}"
    );
    assert_eq!(later.waiting(), ["q1"]);
    assert_eq!(later.model.requests().len(), 1);

    let (summary, events) = later
        .answer(answer("q1", &[("0", vec![1])], &[]))
        .await
        .unwrap();
    assert_eq!(summary.stop_reason, StopReason::EndTurn);
    assert_eq!(summary.result, "SQLite it is");
    assert!(later.session.paused().is_none());
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::QuestionAnswered { answer, .. } if answer.tool_call_id.as_str() == "q1"
    )));
    let reopened = events.iter().find_map(|e| match e {
        AgentEvent::TurnStarted {
            turn_id,
            role: Role::Assistant,
            ..
        } => Some(turn_id.clone()),
        _ => None,
    });
    assert_eq!(reopened, paused_turn, "the paused turn is taken up again");
    assert_eq!(statuses(&events, "q1"), [InProgress, Completed]);
    // The model reads both results, in the order it asked for the calls.
    let requests = later.model.requests();
    let read = results(&requests[1]);
    assert_eq!(read.len(), 2);
    assert_eq!((read[0].0.as_str(), read[0].1), ("q1", false), "{read:?}");
    assert!(read[0].2.contains("\"Which database?\" = \"SQLite\""));
    assert_eq!(read[1].0, "call_1_1");
    // The stored history is the same conversation.
    let stored = later.agent.load_session(later.session.id()).unwrap();
    assert_eq!(stored.messages, later.session.history());
    assert_eq!(stored.paused, None);
}

#[tokio::test]
async fn a_new_message_instead_of_an_answer_gives_the_question_up() {
    let (mut later, _dir) = Later::new(vec![
        call("q1", "AskUserQuestion", database_question()),
        ScriptedResponse::text("files then"),
    ]);
    later.prompt("set it up").await;
    let (summary, events) = later.prompt("never mind, use plain files").await;
    assert_eq!(summary.result, "files then");
    assert_eq!(statuses(&events, "q1"), [ToolCallStatus::Failed]);
    assert!(later.session.paused().is_none());
    let request = &later.model.requests()[1];
    let n = request.messages.len();
    match &request.messages[n - 2] {
        Message::ToolResults { results } => {
            assert!(results[0].is_error);
            assert!(results[0].text().contains("Not answered"), "{results:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        request.messages[n - 1],
        Message::user_text("never mind, use plain files")
    );
}

#[tokio::test]
async fn two_questions_of_one_response_are_answered_one_after_the_other() {
    let (mut later, _dir) = Later::new(vec![
        call("q1", "AskUserQuestion", database_question())
            .then_tool_call("AskUserQuestion", database_question()),
        ScriptedResponse::text("both answered"),
    ]);
    later.prompt("set it up").await;
    assert_eq!(later.waiting(), ["q1", "call_1_1"]);
    let (summary, _) = later
        .answer(answer("call_1_1", &[], &[("0", "DuckDB")]))
        .await
        .unwrap();
    assert_eq!(summary.stop_reason, StopReason::Paused, "q1 still waits");
    assert_eq!(later.waiting(), ["q1"]);
    assert_eq!(later.model.requests().len(), 1);
    let (summary, _) = later
        .answer(answer("q1", &[("0", vec![0])], &[]))
        .await
        .unwrap();
    assert_eq!(summary.result, "both answered");
    let read = results(&later.model.requests()[1]);
    assert!(read[0].2.contains("PostgreSQL"), "{read:?}");
    assert!(read[1].2.contains("DuckDB"), "{read:?}");
}

#[tokio::test]
async fn a_sub_agents_question_pauses_and_resumes_that_sub_agent() {
    let (mut later, _dir) = Later::new(vec![
        call("d1", "Delegate", json!({"prompt": "pick a database"})),
        call("q1", "AskUserQuestion", database_question()),
        ScriptedResponse::text("DuckDB, as the user wants"),
        ScriptedResponse::text("done"),
    ]);
    let (summary, events) = later.prompt("set it up").await;
    assert_eq!(summary.stop_reason, StopReason::Paused);
    let pending = &later.session.paused().unwrap().questions()[0];
    assert_eq!(pending.tool_call_id.as_str(), "q1");
    let source = pending.source_loop.as_ref().unwrap();
    assert_eq!(
        (
            source.loop_id.as_str(),
            source.parent_fork_tool_call_id.as_str()
        ),
        ("loop_d1", "d1")
    );
    use ToolCallStatus::*;
    assert_eq!(
        statuses(&events, "d1"),
        [Pending, InProgress, AwaitingAnswer]
    );
    assert_eq!(
        turn_ends(&events),
        [
            ("loop_d1".to_owned(), TurnStatus::Paused),
            ("root".to_owned(), TurnStatus::Paused)
        ]
    );

    let (summary, events) = later
        .answer(answer("q1", &[], &[("0", "DuckDB")]))
        .await
        .unwrap();
    assert_eq!(summary.result, "done");
    assert_eq!(statuses(&events, "d1"), [InProgress, Completed]);
    assert_eq!(statuses(&events, "q1"), [InProgress, Completed]);
    let requests = later.model.requests();
    // The sub-agent goes on with its own history: its task, its question, the answer.
    let sub = &requests[2];
    assert_eq!(sub.messages[0], Message::user_text("pick a database"));
    assert!(
        results(sub)[0]
            .2
            .contains("\"Which database?\" = \"DuckDB\"")
    );
    assert_eq!(
        results(&requests[3])[0],
        (
            "d1".to_owned(),
            false,
            "DuckDB, as the user wants".to_owned()
        )
    );
}
