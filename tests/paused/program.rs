//! A program that holds a session in a SQLite file and answers questions later, as a web
//! front-end does: each run is one chat, in a fresh process, so a paused chat is resumed by
//! another process than the one that paused it. Its model is scripted (from a file); its tools
//! are the builtin ones (AskUserQuestion) and the Agent tool (sub-agents).
//!
//! ```text
//! paused-chat DB SCRIPT CWD prompt TEXT          # a new session, one chat
//! paused-chat DB SCRIPT CWD answer SESSION JSON  # resume SESSION with an askuser_answer
//! ```
//!
//! It prints one JSON object: the session, the stop reason and result (or the error), the
//! questions that wait, the chat's events and the model's requests.

use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
use agentry::model::scripted::ScriptedModel;
use agentry::question::{PauseForAnswers, QuestionAnswer};
use agentry::tool::ContentBlock;
use agentry_builtin::Builtin;
use agentry_fork::{Forks, SubAgentDefinition};
use agentry_sqlite::SqliteStore;
use anyhow::{Context, bail};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, script, cwd, command, rest @ ..] = args.as_slice() else {
        bail!("usage: paused-chat DB SCRIPT CWD (prompt TEXT | answer SESSION JSON)");
    };
    let model = Arc::new(ScriptedModel::from_file(Path::new(script))?);
    let agent = Agent::builder(model.clone())
        .provider(Builtin::default())
        .provider(Forks::new(vec![SubAgentDefinition::general_purpose()]))
        .store(Arc::new(SqliteStore::open(db)?))
        .build()?;
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let io = ChatIo::new(sender).with_questions(Arc::new(PauseForAnswers));
    let options = SessionOptions::new(cwd);
    let (session, outcome) = match (command.as_str(), rest) {
        ("prompt", [text]) => {
            let mut session = agent.new_session(options)?;
            let content = vec![ContentBlock::text(text)];
            let outcome = session
                .prompt_with(content, &ChatOptions::default(), &io)
                .await;
            (session, outcome)
        }
        ("answer", [id, answer]) => {
            let mut session = agent.resume_session(&id.as_str().into(), options)?;
            let answer: QuestionAnswer = serde_json::from_str(answer).context("the answer")?;
            let outcome = session.answer(answer, &ChatOptions::default(), &io).await;
            (session, outcome)
        }
        _ => bail!("unknown command {command} {rest:?}"),
    };
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    let ended = match &outcome {
        Ok(summary) => json!({"stop_reason": summary.stop_reason, "result": summary.result}),
        Err(error) => json!({"error": error.to_string()}),
    };
    let report = json!({
        "session_id": session.id(),
        "ended": ended,
        "waiting": session.paused().map(|p| p.questions().to_vec()),
        "events": events,
        "requests": model.requests().iter().map(|r| &r.messages).collect::<Vec<_>>(),
    });
    println!("{report}");
    Ok(())
}
