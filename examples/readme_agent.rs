//! Our team's agent: the project's files and a shell, sessions kept in SQLite, the answer
//! streamed as it comes, Ctrl-C to cancel.

use agentry::permission::{PermissionOptionKind, PermissionOutcome, handler_fn};
use agentry::prelude::*;
use agentry_sqlite::SqliteStore;
use std::io::Write;
use std::sync::Arc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = agentry_models::open("anthropic/claude-sonnet-4-5")?; // keys from the environment
    // Sessions are stored, so `agent.resume_session(&id, options)` takes one up again later.
    let data = dirs::data_dir().unwrap_or_default().join("our-agent");
    let store = SqliteStore::open(data.join("sessions.db"))?;
    let agent = Agent::builder(model)
        .store(store)
        .provider(agentry_file_ops::FileOps::default())
        .provider(agentry_bash::Shell::default())
        .build()?;
    let mut options = SessionOptions::new(std::env::current_dir()?);
    options.instructions = Some("Answer in French.".into()); // this session only
    let mut session = agent.new_session(options)?;
    // Ask the user your own way; here read-only calls run and the rest are refused.
    let ask = handler_fn(|request| async move {
        let kind = if request.tool_call.kind.is_read_only() {
            PermissionOptionKind::AllowOnce
        } else {
            PermissionOptionKind::RejectOnce
        };
        PermissionOutcome::Selected { kind }
    });
    // The answer's text on stdout as it streams; each tool call on stderr.
    let io = ChatIo::new(|event: AgentEvent| match event {
        AgentEvent::TextDelta { text, .. } => {
            print!("{text}");
            std::io::stdout().flush().ok();
        }
        AgentEvent::ToolCall(call) => eprintln!("\n[{}]", call.title),
        _ => {}
    })
    .with_permissions(Arc::new(ask));
    // Any task may cancel the chat: the model request and the running tools stop.
    let cancel = io.cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    let prompt = vec![ContentBlock::text("What does this project do?")];
    let summary = session
        .prompt_with(prompt, &ChatOptions::default(), &io)
        .await?;
    println!("\n({}; session {})", summary.stop_reason, session.id());
    Ok(())
}
