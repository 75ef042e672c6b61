//! Control of a chat from any server: `chat:stop`, `POST /cancel` and `permission:respond`
//! act on the chat where it runs. A chat running here is acted on at once; one running on
//! another server sharing the store is signalled through the fan-out's broker, and its server
//! listens for the session's signals while the chat runs.

use crate::error::ServeError;
use crate::live::{LiveSession, Sessions};
use agentry::permission::PermissionOptionKind;
use agentry_fanout::Fanout;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// What one server asks of the one running a session's chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "control", rename_all = "snake_case")]
enum Control {
    /// Stop the chat.
    Stop,
    /// Answer its permission question.
    Permission {
        request_id: String,
        option_id: PermissionOptionKind,
    },
}

/// Stops session `id`'s running chat, on whichever server runs it; whether one heard.
pub async fn stop(sessions: &Sessions, id: &str) -> Result<bool, ServeError> {
    let live = sessions.get(id)?;
    if live.cancel() {
        return Ok(true);
    }
    Ok(signal(sessions, &live, &Control::Stop).await? > 0)
}

/// Answers session `id`'s permission question `request_id` with `option`, on whichever server
/// asked it.
pub async fn respond(
    sessions: &Sessions,
    id: &str,
    request_id: &str,
    option: PermissionOptionKind,
) -> Result<(), ServeError> {
    let live = sessions.get(id)?;
    if live.answer_permission(request_id, option) {
        return Ok(());
    }
    let answer = Control::Permission {
        request_id: request_id.to_owned(),
        option_id: option,
    };
    if signal(sessions, &live, &answer).await? > 0 {
        return Ok(());
    }
    Err(ServeError::BadRequest(format!(
        "no permission question `{request_id}` waits in session `{id}`"
    )))
}

/// Sends `control` to the server running `live`'s chat; how many heard it.
async fn signal(
    sessions: &Sessions,
    live: &LiveSession,
    control: &Control,
) -> Result<usize, ServeError> {
    let message = serde_json::to_value(control).map_err(|e| ServeError::Internal(e.to_string()))?;
    sessions
        .fanout()
        .signal(live.id.as_str(), message)
        .await
        .map_err(|error| {
            sessions.metrics().broker_errors.inc();
            ServeError::Internal(format!("the chat's server cannot be reached: {error}"))
        })
}

/// While `live`'s chat runs here, acts on the signals other servers send it (listening again
/// a second after the broker was lost); nothing for a fan-out that reaches no other server.
/// Dropping the handle stops listening.
pub fn listen(fanout: &Arc<dyn Fanout>, live: &Arc<LiveSession>) -> Option<ListenGuard> {
    let first = fanout.listen(live.id.as_str())?;
    let (fanout, live) = (fanout.clone(), live.clone());
    let task = tokio::spawn(async move {
        let mut signals = first;
        loop {
            while let Some(message) = signals.next().await {
                match serde_json::from_value(message) {
                    Ok(Control::Stop) => {
                        live.cancel();
                    }
                    Ok(Control::Permission {
                        request_id,
                        option_id,
                    }) => {
                        live.answer_permission(&request_id, option_id);
                    }
                    Err(error) => tracing::debug!("an unreadable signal: {error}"),
                }
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            match fanout.listen(live.id.as_str()) {
                Some(again) => signals = again,
                None => return,
            }
        }
    });
    Some(ListenGuard(task))
}

/// Listening for a chat's signals, until dropped.
pub struct ListenGuard(tokio::task::JoinHandle<()>);

impl Drop for ListenGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}
