//! The chat-flow projection of whole chats over a scripted model: the exact event sequence of
//! each flow in the protocol (plain answer, a tool, several rounds, a paused question and its
//! answer, a sub-agent), as snapshots with ids and times normalised.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::event::AgentEvent;
use agentry::model::scripted::{ScriptedModel, ScriptedResponse};
use agentry::provider::SimpleProvider;
use agentry::question::{
    Answers, PauseForAnswers, Question, QuestionAnswer, QuestionOutcome, UserQuestions,
};
use agentry::subagent::{SubAgentSpec, SubAgents};
use agentry::tool::ContentBlock;
use agentry::tool::{ToolError, ToolKind, tool_fn};
use agentry_serve::projection::Projector;
use agentry_tests::chat_events::normalise;
use serde_json::{Value, json};
use std::sync::Arc;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    /// Some text.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Ask {
    /// The questions.
    questions: Vec<Question>,
}

/// `Echo` answers with its text; `Ask` asks the user; `Delegate` runs a sub-agent.
fn tools() -> SimpleProvider {
    SimpleProvider::new("test", "")
        .with_tool(tool_fn(
            "Echo",
            "Echoes.",
            ToolKind::Read,
            |input: Text, _| async move { Ok::<_, ToolError>(format!("echo: {}", input.text)) },
        ))
        .with_tool(tool_fn(
            "Ask",
            "Asks the user.",
            ToolKind::Think,
            |input: Ask, ctx| async move {
                let asker = UserQuestions::of(&ctx).ok_or_else(|| ToolError::failed("no one"))?;
                match asker.ask(&ctx, input.questions).await {
                    QuestionOutcome::Answered(answers) => {
                        Ok::<_, ToolError>(format!("answered {:?}", answers.selections))
                    }
                    QuestionOutcome::Paused => Err(ToolError::AwaitingAnswer),
                    _ => Err(ToolError::failed("no answer")),
                }
            },
        ))
        .with_tool(tool_fn(
            "Delegate",
            "Runs a sub-agent.",
            ToolKind::Think,
            |input: Text, ctx| async move {
                let runner = SubAgents::of(&ctx).ok_or_else(|| ToolError::failed("none"))?;
                let outcome = runner
                    .run(&ctx, SubAgentSpec::new("You help."), input.text)
                    .await?;
                Ok::<_, ToolError>(outcome.answer)
            },
        ))
}

fn question() -> Value {
    json!({"questions": [{"question": "Which?", "header": "Pick", "options": [{"label": "A"}, {"label": "B"}]}]})
}

/// Runs chats (a prompt, then answers) and returns every server event, normalised.
async fn project(script: Vec<ScriptedResponse>, answers: Vec<QuestionAnswer>) -> Value {
    let agent = Agent::builder(Arc::new(ScriptedModel::new(script)))
        .provider(tools())
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent.new_session(SessionOptions::new(dir.path())).unwrap();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<AgentEvent>();
    let io = ChatIo::new(sender).with_questions(Arc::new(PauseForAnswers));
    let options = ChatOptions::default();
    session
        .prompt_with(vec![ContentBlock::text("go")], &options, &io)
        .await
        .unwrap();
    for answer in answers {
        session.answer(answer, &options, &io).await.unwrap();
    }
    let mut projector = Projector::new("sess_1", 0);
    projector.set_model("scripted");
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.extend(projector.apply(&event));
    }
    let sequences: Vec<u64> = events
        .iter()
        .map(|e| e.data["sequence"].as_u64().unwrap())
        .collect();
    assert!(
        sequences.windows(2).all(|w| w[0] < w[1]),
        "sequence increases: {sequences:?}"
    );
    normalise(json!(
        events
            .iter()
            .map(|e| json!({"event": e.event, "data": e.data}))
            .collect::<Vec<_>>()
    ))
}

fn call(id: &str, name: &str, arguments: Value) -> ScriptedResponse {
    ScriptedResponse::tool_call_with_id(id, name, arguments)
}

#[tokio::test]
async fn a_plain_answer() {
    let events = project(vec![ScriptedResponse::text("Paris.")], Vec::new()).await;
    insta::assert_json_snapshot!(events);
}

#[tokio::test]
async fn a_tool_call_then_an_answer() {
    let events = project(
        vec![
            call("tc_1", "Echo", json!({"text": "hi"})),
            ScriptedResponse::text("Done."),
        ],
        Vec::new(),
    )
    .await;
    insta::assert_json_snapshot!(events);
}

#[tokio::test]
async fn a_question_pauses_and_the_answer_resumes() {
    let answer = QuestionAnswer {
        tool_call_id: "ask_1".into(),
        answers: Answers {
            selections: [("0".to_owned(), vec![1])].into(),
            custom: Default::default(),
        },
    };
    let events = project(
        vec![
            call("ask_1", "Ask", question()),
            ScriptedResponse::text("B it is."),
        ],
        vec![answer],
    )
    .await;
    insta::assert_json_snapshot!(events);
}

#[tokio::test]
async fn a_sub_agents_turns_and_its_question_bubbling_up() {
    let answer = QuestionAnswer {
        tool_call_id: "ask_1".into(),
        answers: Answers {
            selections: [("0".to_owned(), vec![0])].into(),
            custom: Default::default(),
        },
    };
    let events = project(
        vec![
            call("fork_1", "Delegate", json!({"text": "choose"})),
            call("ask_1", "Ask", question()),
            ScriptedResponse::text("A."),
            ScriptedResponse::text("The sub-agent chose A."),
        ],
        vec![answer],
    )
    .await;
    insta::assert_json_snapshot!(events);
}
