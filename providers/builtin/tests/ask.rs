//! AskUserQuestion in whole chats over a scripted model: offered only when someone can answer,
//! answers quoted for the model, bad shapes refused, and a sub-agent's question reaching the user.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::model::{ContentBlock, Message, ModelRequest};
use agentry::provider::SimpleProvider;
use agentry::question::{Answers, QuestionHandler, QuestionOutcome, QuestionRequest};
use agentry::subagent::{SubAgentSpec, SubAgents};
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
    let agent = Agent::builder()
        .model(model.clone())
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
        .prompt(
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
