//! Chats started by clients: `chat:send` (and the REST chat) with its message, answer, output
//! schema; one chat at a time per session; permission questions asked of the session's clients.
//! A message that is `/compact [INSTRUCTIONS]` compacts the session instead: a chat whose one
//! event is the compaction and whose result says what it did.

use crate::error::ServeError;
use crate::live::{LiveSession, OpenQuestion, ProjectedEvents, Sessions};
use crate::ownership::Ownership;
use crate::protocol::{AskUserAnswer, ServerEvent};
use agentry::agent::{ChatIo, ChatOptions};
use agentry::model::Model;
use agentry::permission::{
    PermissionHandler, PermissionOptionKind, PermissionOutcome, PermissionRequest,
};
use agentry::question::{Answers, PauseForAnswers, QuestionAnswer};
use agentry::sync::lock;
use agentry::tool::ContentBlock;
use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::oneshot;

/// A client's `chat:send`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatSend {
    /// The session.
    pub session_id: String,
    #[serde(flatten)]
    /// The chat.
    pub chat: ChatRequest,
}

/// What a chat is asked to do (the body of `POST /api/sessions/{id}/chat`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct ChatRequest {
    /// The user's message: text, or a list of parts.
    #[serde(default)]
    pub message: Message,
    /// Only the result matters (`chat:end.result.output`); events still flow.
    #[serde(default)]
    pub headless: bool,
    /// A JSON Schema the answer must satisfy.
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// The answer to a paused question; resumes the chat.
    #[serde(default)]
    pub askuser_answer: Option<AskUserAnswer>,
    /// A model for this chat and the session's next ones.
    #[serde(default)]
    pub model: Option<String>,
}

/// The user's message.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Message {
    /// Plain text.
    Text(String),
    /// Parts: text, images (data URLs), files (base64).
    Parts(Vec<MessagePart>),
}

impl Default for Message {
    fn default() -> Self {
        Message::Text(String::new())
    }
}

/// One part of a message.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MessagePart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image as a `data:` URL (`{"url": "data:image/png;base64,…"}` or the URL itself).
    ImageUrl {
        /// The image.
        image_url: ImageUrl,
    },
    /// A file, base64-encoded.
    File {
        /// The file.
        file: FilePart,
    },
}

/// An image URL, as a string or `{url}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ImageUrl {
    /// `{"url": "data:…"}`.
    Object {
        /// The `data:` URL.
        url: String,
    },
    /// The `data:` URL.
    Url(String),
}

/// A file sent with a message.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilePart {
    /// Its name.
    pub name: String,
    /// Its bytes, base64-encoded.
    pub data: String,
}

impl Message {
    /// The message as content blocks; a bad part is an error naming it.
    pub fn into_content(self) -> Result<Vec<ContentBlock>, ServeError> {
        let parts = match self {
            Message::Text(text) if text.trim().is_empty() => return Ok(Vec::new()),
            Message::Text(text) => return Ok(vec![ContentBlock::text(text)]),
            Message::Parts(parts) => parts,
        };
        // Empty text parts add nothing.
        parts
            .into_iter()
            .enumerate()
            .filter(
                |(_, part)| !matches!(part, MessagePart::Text { text } if text.trim().is_empty()),
            )
            .map(|(index, part)| part_content(index, part))
            .collect()
    }
}

fn part_content(index: usize, part: MessagePart) -> Result<ContentBlock, ServeError> {
    let invalid = |message: String| ServeError::Invalid {
        message,
        detail: Some(format!("message[{index}]")),
    };
    let decode = |data: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| invalid(format!("`message[{index}]` is not valid base64: {e}")))
    };
    match part {
        MessagePart::Text { text } => Ok(ContentBlock::text(text)),
        MessagePart::ImageUrl { image_url } => {
            let url = match image_url {
                ImageUrl::Object { url } | ImageUrl::Url(url) => url,
            };
            let (mime_type, data) = url
                .strip_prefix("data:")
                .and_then(|rest| rest.split_once(";base64,"))
                .filter(|(mime, _)| mime.starts_with("image/"))
                .ok_or_else(|| {
                    invalid(format!(
                        "`message[{index}].image_url` must be a data: URL of an image (data:image/png;base64,…)"
                    ))
                })?;
            decode(data)?;
            Ok(ContentBlock::Image {
                data: data.to_owned(),
                mime_type: mime_type.to_owned(),
            })
        }
        MessagePart::File { file } => {
            let bytes = decode(&file.data)?;
            let text = match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(bytes) => format!(
                    "(a binary file of {} bytes, not shown)",
                    bytes.as_bytes().len()
                ),
            };
            Ok(ContentBlock::Resource {
                uri: format!("file:///{}", file.name.trim_start_matches('/')),
                mime_type: None,
                text: Some(text),
            })
        }
    }
}

/// The instructions of a message that is `/compact [INSTRUCTIONS]`, if it is one.
fn compact_instructions(content: &[ContentBlock]) -> Option<String> {
    let [ContentBlock::Text { text }] = content else {
        return None;
    };
    let rest = text.trim().strip_prefix("/compact")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim().to_owned())
}

/// Compacts `session` as a chat: `chat:start`, the compaction (a system turn), then `chat:end`
/// whose result says what was done.
async fn compact(
    session: &mut agentry::agent::Session,
    instructions: &str,
    io: &ChatIo,
) -> Result<agentry::event::ChatSummary, agentry::AgentError> {
    use agentry::event::{AgentEvent, ChatSummary, StopReason};
    let started = std::time::Instant::now();
    let session_id = session.id().clone();
    io.events.emit(AgentEvent::ChatStarted {
        session_id: session_id.clone(),
    });
    let instructions = Some(instructions).filter(|text| !text.is_empty());
    let done = session.compact(instructions, &io.cancel).await?;
    let model_requests = u32::from(done.is_some());
    let result = match &done {
        Some(compaction) => compaction.describe(),
        None => "There is nothing to compact yet.".to_owned(),
    };
    if let Some(compaction) = done {
        io.events.emit(AgentEvent::Compacted(compaction));
    }
    let summary = ChatSummary {
        session_id,
        stop_reason: match io.cancel.is_cancelled() {
            true => StopReason::Cancelled,
            false => StopReason::EndTurn,
        },
        result: Value::String(result),
        usage: Default::default(),
        spending: Default::default(),
        model_requests,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    io.events.emit(AgentEvent::ChatEnded(summary.clone()));
    Ok(summary)
}

/// How a started chat ends: the data of its `chat:end`, or why it could not run.
pub type ChatOutcome = Result<Value, ServeError>;

/// Starts a chat in `session_id`; the receiver gets how it ended.
pub fn start(
    sessions: &Sessions,
    session_id: &str,
    request: ChatRequest,
) -> Result<oneshot::Receiver<ChatOutcome>, ServeError> {
    if sessions.is_draining() {
        return Err(ServeError::Draining);
    }
    // Read again below if another server changed it: the claim tells.
    let live = sessions.open(session_id)?;
    let model = match &request.model {
        None => None,
        Some(spec) => Some(open_model(sessions, spec)?),
    };
    let content = request.message.into_content()?;
    let compaction = compact_instructions(&content);
    if content.is_empty() && request.askuser_answer.is_none() {
        return Err(ServeError::Invalid {
            message: "`message` is empty: send text, parts, or an `askuser_answer`".to_owned(),
            detail: Some("message".to_owned()),
        });
    }
    // Servers sharing a store may not all have the session's folder.
    if !live.cwd.is_dir() {
        return Err(ServeError::WorkspaceMissing {
            session: session_id.to_owned(),
            cwd: live.cwd.display().to_string(),
        });
    }
    let cancel = live
        .begin_chat()
        .ok_or_else(|| ServeError::ChatRunning(session_id.to_owned()))?;
    let place = match sessions.admit_chat() {
        Ok(place) => place,
        Err(busy) => {
            live.give_up_chat();
            return Err(busy);
        }
    };
    // Across the servers sharing the store: one chat of a session at a time.
    let shared = sessions.shared_store().cloned();
    let lease = sessions.defaults().lease;
    let store_errors = &sessions.metrics().store_errors;
    let claimed = Ownership::claim(
        shared.as_ref(),
        &live.id,
        sessions.owner(),
        lease,
        store_errors,
    )
    .and_then(|ownership| {
        // Another server ran a chat of the session since this one read it.
        match &ownership {
            Some(held) if sessions.is_stale(&live, held.updated_at()) => {
                sessions.refresh(&live).map(|()| ownership)
            }
            _ => Ok(ownership),
        }
    });
    let ownership = match claimed {
        Ok(ownership) => ownership,
        Err(refused) => {
            live.give_up_chat();
            return Err(refused);
        }
    };
    let (done, outcome) = oneshot::channel();
    let options = ChatOptions {
        output_schema: request.output_schema.clone(),
    };
    let answer = request.askuser_answer.map(|answer| QuestionAnswer {
        tool_call_id: answer.tool_call_id.into(),
        answers: Answers {
            selections: answer.selections,
            custom: answer.custom,
        },
    });
    if let Some(ownership) = &ownership {
        lock(&live.projector).number_after(ownership.first_sequence());
    }
    let fanout = sessions.fanout().clone();
    let metrics = sessions
        .defaults()
        .chat_metrics
        .then(|| sessions.metrics().clone());
    tokio::spawn(async move {
        let mut session = live.session.lock().await;
        if let Some(model) = model {
            lock(&live.projector).set_model(model.name());
            session.set_model(model);
        }
        lock(&live.projector).set_output_schema(request.output_schema);
        let io = ChatIo {
            events: Arc::new(ProjectedEvents {
                live: live.clone(),
                meter: metrics.as_ref().map(|metrics| {
                    std::sync::Mutex::new(metrics.agent.chat(&session.model().name()))
                }),
            }),
            permissions: Arc::new(ClientPermissions(live.clone())),
            cancel: cancel.clone(),
            questions: Some(Arc::new(PauseForAnswers)),
        };
        // Other servers' clients may stop it, or answer its questions.
        let _listening = crate::control::listen(&fanout, &live);
        let chat = async {
            match (answer, compaction) {
                (Some(answer), _) => session.answer(answer, &options, &io).await,
                (None, Some(instructions)) => compact(&mut session, &instructions, &io).await,
                (None, None) => session.prompt_with(content, &options, &io).await,
            }
        };
        let outcome = match &ownership {
            Some(ownership) => {
                let last_sequence = || lock(&live.projector).last_sequence();
                ownership.hold(&cancel, last_sequence, chat).await
            }
            None => chat.await,
        };
        drop(session);
        // What this chat left in the store, as giving the lease up finds it: only other
        // servers' later changes make this server read the session again.
        let stored_at = ownership.map(|ownership| {
            // Every server reads the session's turns back numbered with the last number
            // given, this one too: each answers `/messages` alike.
            let last = lock(&live.projector).last_sequence();
            let stored_at = ownership.release(last);
            lock(&live.projector).settle_at(last);
            stored_at
        });
        live.end_chat(stored_at.flatten());
        // The session takes a new chat now: its clients may hear that this one ended.
        let end = lock(&live.projector).take_chat_end();
        if let Some(end) = &end {
            live.publish(vec![ServerEvent {
                event: "chat:end",
                data: end.clone(),
            }]);
        }
        let result = match (outcome, end) {
            (_, Some(end)) => Ok(end),
            (Err(error), None) => Err(ServeError::agent(error)),
            (Ok(_), None) => Err(ServeError::Internal(
                "the chat ended without chat:end".into(),
            )),
        };
        let _ = done.send(result);
        // Counted as running until its end has gone out: a drain waits for it.
        drop(place);
    });
    Ok(outcome)
}

/// Opens one of the models the server offers.
fn open_model(sessions: &Sessions, spec: &str) -> Result<Arc<dyn Model>, ServeError> {
    let invalid = |message: String| ServeError::Invalid {
        message,
        detail: Some("model".to_owned()),
    };
    let choices = sessions
        .models()
        .ok_or_else(|| invalid("this server offers no other models".to_owned()))?;
    let offered = choices.offered();
    if !offered.iter().any(|o| o == spec) {
        return Err(invalid(format!(
            "model `{spec}` is not offered; the server offers: {}",
            offered.join(", ")
        )));
    }
    choices
        .open(spec)
        .map_err(|e| invalid(format!("model `{spec}` could not be opened: {e}")))
}

/// Asks the session's clients whether a tool call may run: `permission:request`, answered by
/// a client's `permission:respond`.
struct ClientPermissions(Arc<LiveSession>);

#[agentry::async_trait]
impl PermissionHandler for ClientPermissions {
    async fn request_permission(&self, request: PermissionRequest) -> PermissionOutcome {
        let live = &self.0;
        // Unique across the servers sharing the session.
        let request_id = format!("perm_{}", uuid::Uuid::new_v4().simple());
        let call = &request.tool_call;
        let data = json!({
            "session_id": live.id,
            "request_id": request_id,
            "tool_call": {
                "id": call.tool_call_id,
                "tool_name": call.tool_name,
                "display_name": call.title,
                "kind": call.kind.as_str(),
                "arguments": call.raw_input.to_string(),
                "locations": call.locations,
            },
            "options": request.options.iter().map(|o| json!({
                "option_id": o.kind,
                "name": o.name,
                "kind": o.kind,
            })).collect::<Vec<_>>(),
        });
        let (answer, answered) = oneshot::channel();
        {
            // Registered before it is published, so that an instant answer finds it.
            let mut questions = lock(&live.questions);
            let event = live.publish_other("permission:request", data);
            questions.insert(request_id.clone(), OpenQuestion { event, answer });
        }
        // Forgotten however the wait ends (answered, or the chat cancelled).
        let _forget = Forget(live, request_id);
        answered.await.unwrap_or(PermissionOutcome::Cancelled)
    }
}

/// Removes a permission question from its session when dropped.
struct Forget<'a>(&'a LiveSession, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(&self.0.questions).remove(&self.1);
    }
}

/// A client's `permission:respond`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionRespond {
    /// The session.
    pub session_id: String,
    /// The question's id (from `permission:request`).
    pub request_id: String,
    /// The chosen option: `allow_once`, `allow_always`, `reject_once` or `reject_always`.
    pub option_id: PermissionOptionKind,
}
