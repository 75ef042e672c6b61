//! `agentry run --rewind SESSION[:CHAT]`: a session rewound for a script, with what changed
//! printed.

use crate::cli::{OutputFormat, RewindWhat, RunArgs};
use crate::exit::{CliError, Exit};
use crate::output::print_line;
use crate::providers::ServerStart;
use agentry::agent::{RewindScope, Rewound, SessionOptions};
use agentry::ids::{SessionId, TurnId};
use agentry::model::unavailable::UnavailableModel;
use agentry_stock::config::Config;
use anyhow::anyhow;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// Rewinds the session `target` names (`SESSION`, or `SESSION:CHAT`) and prints what it did.
pub async fn run(
    args: &RunArgs,
    target: &str,
    config: &Config,
    cwd: &Path,
) -> Result<Exit, CliError> {
    let (session_id, chat) = match target.split_once(':') {
        Some((session, chat)) => (SessionId::from(session), Some(TurnId(chat.to_owned()))),
        None => (SessionId::from(target), None),
    };
    // A rewind asks the model nothing: one that cannot be opened does not matter.
    let model = crate::assemble::model(config, &args.agent)
        .unwrap_or_else(|error| Arc::new(UnavailableModel::new(error.to_string())));
    let agent =
        crate::assemble::agent(config, &args.agent, cwd, model, ServerStart::Wait, None).await?;
    let mut session = agent.resume_session(&session_id, SessionOptions::new(cwd))?;
    let chat = match chat {
        Some(chat) => chat,
        None => session
            .rewind_points()?
            .pop()
            .map(|point| point.chat)
            .ok_or_else(|| {
                CliError::usage(anyhow!("session {session_id} has no chat to rewind"))
            })?,
    };
    let scope = match args.rewind_scope {
        RewindWhat::Both => RewindScope::BOTH,
        RewindWhat::Files => RewindScope {
            files: true,
            conversation: false,
        },
        RewindWhat::Conversation => RewindScope {
            files: false,
            conversation: true,
        },
    };
    let rewound = session
        .rewind(&chat, scope, args.overwrite_hand_edits)
        .await?;
    print(&session_id, &chat, &rewound, args.output_format);
    Ok(Exit::EndTurn)
}

/// Prints what the rewind did: JSON for the JSON formats, else a line per file.
fn print(session: &SessionId, chat: &TurnId, rewound: &Rewound, format: OutputFormat) {
    if format != OutputFormat::Text {
        print_line(
            &json!({
                "type": "rewound",
                "session_id": session,
                "chat": chat,
                "conversation": rewound.conversation,
                "files": rewound.files,
                "hand_edited": rewound.hand_edited,
                "left_out": rewound.left_out,
            })
            .to_string(),
        );
        return;
    }
    for line in rewound.describe() {
        print_line(&line);
    }
    if rewound
        .hand_edited
        .iter()
        .any(|f| !rewound.files.contains(f))
    {
        print_line("(--overwrite-hand-edits restores the files kept)");
    }
}
