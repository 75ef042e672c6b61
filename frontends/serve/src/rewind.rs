//! `POST /api/sessions/{session_id}/rewind`: a session rewound to just before one of its chats
//! (named by the `turn_id` of the chat's user turn, as `/messages` shows it): its files, its
//! conversation, or both. Files changed by hand since the agent's last change are kept unless
//! `overwrite_hand_edits`, and listed (a `dry_run` says which, changing nothing, so a client can
//! ask first). The session's subscribers get `session:rewound` and read `/messages` again. A
//! rewind waits for no chat: one running (on any server sharing the store) makes it 409.

use crate::error::ServeError;
use crate::live::{LiveSession, Sessions};
use crate::ownership::Ownership;
use crate::rest::Body;
use agentry::agent::RewindScope;
use agentry::checkpoint::{FileChange, LeftOut};
use agentry::error::AgentError;
use agentry::ids::TurnId;
use agentry::sync::lock;
use axum::Json;
use axum::extract::{Path, State};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The body of `POST /api/sessions/{session_id}/rewind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RewindRequest {
    /// The chat to go back to before: the `turn_id` of its user turn.
    pub chat_id: String,
    /// Whether to restore the files (`true` by default).
    #[serde(default = "yes")]
    pub files: bool,
    /// Whether to cut the conversation back (`true` by default).
    #[serde(default = "yes")]
    pub conversation: bool,
    /// Whether to overwrite files changed by hand since the agent's last change (by default
    /// they are kept, and listed in `hand_edited`).
    #[serde(default)]
    pub overwrite_hand_edits: bool,
    /// Only say what the rewind would do (the files it would restore, those changed by hand
    /// that it would ask about): nothing changes, and subscribers hear nothing.
    #[serde(default)]
    pub dry_run: bool,
}

fn yes() -> bool {
    true
}

/// What a rewind did: the answer, and the data of `session:rewound`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Rewound {
    /// The session.
    pub session_id: String,
    /// The chat rewound to before.
    pub chat_id: String,
    /// Whether the conversation was cut back.
    pub conversation: bool,
    /// The files put back, each with how the workspace differed.
    pub files: Vec<FileChange>,
    /// Files changed by hand since the agent's last change: kept, unless overwritten (then
    /// in `files` too).
    pub hand_edited: Vec<FileChange>,
    /// What the checkpoint never held, left alone.
    pub left_out: Vec<LeftOut>,
}

/// `POST /api/sessions/{session_id}/rewind`.
pub async fn rewind(
    State(sessions): State<Arc<Sessions>>,
    Path(session_id): Path<String>,
    Body(request): Body<RewindRequest>,
) -> Result<Json<Rewound>, ServeError> {
    if !request.files && !request.conversation {
        return Err(ServeError::Invalid {
            message: "a rewind restores the files, the conversation, or both".to_owned(),
            detail: Some("files".to_owned()),
        });
    }
    let live = sessions.open(&session_id)?;
    // No chat starts meanwhile, here or (through the session's lease) on another server.
    if live.begin_chat().is_none() {
        return Err(ServeError::ChatRunning(session_id));
    }
    let rewound = rewind_idle(&sessions, &live, &request).await;
    live.give_up_chat();
    let rewound = rewound?;
    if !request.dry_run {
        live.publish_other("session:rewound", serde_json::json!(rewound));
    }
    Ok(Json(rewound))
}

/// Rewinds `live`, which this server holds for it.
async fn rewind_idle(
    sessions: &Sessions,
    live: &LiveSession,
    request: &RewindRequest,
) -> Result<Rewound, ServeError> {
    let ownership = Ownership::claim(
        sessions.shared_store(),
        &live.id,
        sessions.owner(),
        sessions.defaults().lease,
        &sessions.metrics().store_errors,
    )?;
    if let Some(held) = &ownership
        && sessions.is_stale(live, held.updated_at())
    {
        sessions.refresh(live)?;
    }
    let chat = TurnId(request.chat_id.clone());
    let scope = RewindScope {
        files: request.files,
        conversation: request.conversation,
    };
    let outcome = {
        let mut session = live
            .session
            .try_lock()
            .map_err(|_| ServeError::ChatRunning(live.id.to_string()))?;
        match (request.dry_run, scope.files) {
            (false, _) => {
                session
                    .rewind(&chat, scope, request.overwrite_hand_edits)
                    .await
            }
            (true, true) => session.plan_rewind(&chat).await,
            (true, false) => session.rewind_points().and_then(|points| {
                match points.iter().any(|point| point.chat == chat) {
                    true => Ok(Default::default()),
                    false => Err(AgentError::NoSuchChat(chat.clone())),
                }
            }),
        }
    };
    if let Some(ownership) = ownership {
        ownership.release(lock(&live.projector).last_sequence());
    }
    let rewound = outcome.map_err(|error| match error {
        AgentError::NoSuchChat(_) => ServeError::Invalid {
            message: error.to_string(),
            detail: Some("chat_id".to_owned()),
        },
        other => ServeError::agent(other),
    })?;
    // What clients see of the session now: read back as the store has it.
    if !request.dry_run {
        sessions.refresh(live)?;
    }
    Ok(Rewound {
        session_id: live.id.to_string(),
        chat_id: request.chat_id.clone(),
        conversation: rewound.conversation,
        files: rewound.files,
        hand_edited: rewound.hand_edited,
        left_out: rewound.left_out,
    })
}
