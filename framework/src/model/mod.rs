//! The [`Model`] interface: streaming chat with tools. The HTTP clients of hosted models
//! (`agentry-models`) and the [`ScriptedModel`](scripted::ScriptedModel) for tests implement the
//! same trait.

mod choices;
pub mod named;
pub mod priced;
pub mod record;
pub mod replay;
pub mod scripted;
pub mod side;
pub mod unavailable;

use crate::tool::ContentBlock;
pub use choices::ModelChoices;

use crate::event::Usage;
use crate::ids::ToolCallId;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A message of the conversation history, in a shape every model API can be mapped from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User {
        /// The content.
        content: Vec<ContentBlock>,
    },
    /// What the model answered.
    Assistant {
        /// The content, in the order the model produced it.
        content: Vec<AssistantContent>,
        /// The model that wrote it (its [`Model::name`], `PROVIDER/MODEL`), whose provider alone
        /// may read its opaque parts (see [`Message::readable_by`]); `None` for answers stored
        /// before it was kept, and for text of the agent's own (a summary).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
    },
    /// The results of the tool calls of the preceding assistant message, in the order asked.
    ToolResults {
        /// The results.
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// A user message of plain text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::User {
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// The message as the models of `provider` may read it: an answer another provider wrote
    /// keeps its text, its calls and its visible reasoning, but not what only its writer can
    /// read — reasoning signatures (Anthropic's, Gemini's, Bedrock's) and encrypted reasoning.
    /// An answer of unknown origin is left as it is.
    pub fn readable_by(self, provider: &str) -> Self {
        match self {
            Message::Assistant {
                content,
                origin: Some(origin),
            } if provider_of(&origin) != provider => Message::Assistant {
                content: content
                    .into_iter()
                    .filter_map(|part| match part {
                        AssistantContent::Thinking { text, .. } if text.is_empty() => None,
                        AssistantContent::Thinking { text, .. } => {
                            Some(AssistantContent::Thinking {
                                text,
                                signature: None,
                            })
                        }
                        AssistantContent::RedactedThinking { .. } => None,
                        other => Some(other),
                    })
                    .collect(),
                origin: Some(origin),
            },
            other => other,
        }
    }

    /// The message for a model that takes no images: each image (in the user's content or a
    /// tool result) becomes a short note saying one was left out.
    pub fn with_images_as_notes(self) -> Self {
        let note = |block: ContentBlock| match block {
            ContentBlock::Image { mime_type, .. } => ContentBlock::Text {
                text: format!(
                    "[an image ({mime_type}) was left out: this model does not take images]"
                ),
            },
            other => other,
        };
        match self {
            Message::User { content } => Message::User {
                content: content.into_iter().map(note).collect(),
            },
            Message::ToolResults { results } => Message::ToolResults {
                results: results
                    .into_iter()
                    .map(|result| ToolResult {
                        content: result.content.into_iter().map(note).collect(),
                        ..result
                    })
                    .collect(),
            },
            assistant @ Message::Assistant { .. } => assistant,
        }
    }
}

/// The provider of a model's name: `gemini` of `gemini/gemini-2.5-pro` (the whole name when it
/// has no `/`).
pub fn provider_of(model_name: &str) -> &str {
    model_name
        .split_once('/')
        .map_or(model_name, |(provider, _)| provider)
}

/// A part of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantContent {
    /// Answer text.
    Text {
        /// The text.
        text: String,
    },
    /// Reasoning, with the provider's signature when it gives one (sent back exactly as received).
    Thinking {
        /// The reasoning text.
        text: String,
        /// The provider's signature.
        #[serde(skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider sent encrypted.
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// A tool call.
    ToolCall {
        /// The call's id.
        id: ToolCallId,
        /// The tool's name.
        name: String,
        /// The arguments (a JSON string when the model sent invalid JSON).
        arguments: Value,
    },
}

/// The result of one tool call, as the model reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call's id.
    pub tool_call_id: ToolCallId,
    /// The result's content (text, images).
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolResult {
    /// The text of the result.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

/// The text blocks of some content, one per line (images and resources left out).
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input's JSON Schema.
    pub input_schema: Value,
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolDefinition>,
    /// What varies with the folder and the day (the chat's environment block): the model reads
    /// it at the head of the conversation ([`conversation`](Self::conversation)), after the
    /// system prompt and the tools, so that the cached prefix holds across folders and days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The most tokens this request's answer may have (a side question's limit); the model's
    /// own limit applies when it is lower or this is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
}

impl ModelRequest {
    /// A request for `model`: answers other providers wrote lose what only they can read
    /// ([`Message::readable_by`]), and for a model that takes no images, each image becomes a
    /// note.
    pub fn for_model(
        model: &dyn Model,
        system: String,
        messages: impl IntoIterator<Item = Message>,
        tools: Vec<ToolDefinition>,
    ) -> Self {
        let name = model.name();
        let provider = provider_of(&name);
        let messages = messages.into_iter().map(|m| m.readable_by(provider));
        Self {
            system,
            messages: if model.accepts_images() {
                messages.collect()
            } else {
                messages.map(Message::with_images_as_notes).collect()
            },
            tools,
            environment: None,
            max_output_tokens: None,
        }
    }

    /// The same request with its answer limited to `max` tokens.
    pub fn with_max_output_tokens(self, max: u32) -> Self {
        Self {
            max_output_tokens: Some(max),
            ..self
        }
    }

    /// The output limit of this request for a model whose own is `model_limit`: the lower.
    pub fn output_limit(&self, model_limit: Option<u32>) -> Option<u32> {
        match (self.max_output_tokens, model_limit) {
            (Some(asked), Some(own)) => Some(asked.min(own)),
            (asked, own) => asked.or(own),
        }
    }

    /// The same request with `environment` at the head of its conversation.
    pub fn with_environment(self, environment: String) -> Self {
        Self {
            environment: Some(environment),
            ..self
        }
    }

    /// The conversation as the model reads it: the [`environment`](Self::environment) first,
    /// as the first text of the first user message (a message of its own only when the
    /// conversation starts otherwise, so that user and assistant messages still alternate),
    /// then the messages.
    pub fn conversation(&self) -> std::borrow::Cow<'_, [Message]> {
        let Some(environment) = &self.environment else {
            return std::borrow::Cow::Borrowed(&self.messages);
        };
        let mut messages = self.messages.clone();
        let block = ContentBlock::text(environment.clone());
        match messages.first_mut() {
            Some(Message::User { content }) => content.insert(0, block),
            _ => messages.insert(
                0,
                Message::User {
                    content: vec![block],
                },
            ),
        }
        std::borrow::Cow::Owned(messages)
    }
}

/// A tool call's arguments, read once, where the model client assembles the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolArguments {
    /// A JSON value.
    Json(Value),
    /// Text that is not JSON, kept as the model sent it.
    Invalid {
        /// The text.
        raw: String,
        /// What the JSON parser said.
        error: String,
    },
}

impl ToolArguments {
    /// Reads the arguments a model sent; no text at all (a call without arguments, as some
    /// APIs stream it) is `{}`.
    pub fn parse(raw: &str) -> Self {
        if raw.trim().is_empty() {
            return ToolArguments::Json(Value::Object(Default::default()));
        }
        match serde_json::from_str(raw) {
            Ok(value) => ToolArguments::Json(value),
            Err(error) => ToolArguments::Invalid {
                raw: raw.to_owned(),
                error: error.to_string(),
            },
        }
    }

    /// The input as shown and kept in history: the value, or the text as a JSON string.
    pub fn raw_input(&self) -> Value {
        match self {
            ToolArguments::Json(value) => value.clone(),
            ToolArguments::Invalid { raw, .. } => Value::String(raw.clone()),
        }
    }
}

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The call's id.
    pub id: ToolCallId,
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub arguments: ToolArguments,
}

impl ToolCallRequest {
    /// A call with the arguments as the model sent them (read with [`ToolArguments::parse`]).
    pub fn new(id: impl Into<ToolCallId>, name: impl Into<String>, raw_arguments: &str) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: ToolArguments::parse(raw_arguments),
        }
    }
}

/// What a model streams back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ModelEvent {
    /// A piece of answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of reasoning.
    ThinkingDelta {
        /// The text.
        text: String,
    },
    /// The signature closing the current reasoning block.
    ThinkingSignature {
        /// The signature.
        signature: String,
    },
    /// An encrypted reasoning block.
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// A complete tool call (the client assembles streamed fragments and reads the
    /// arguments first).
    ToolCall(ToolCallRequest),
    /// Token usage so far (the last one of a response wins).
    Usage {
        /// The usage.
        usage: Usage,
    },
    /// Something the user should know (a retry, …).
    Notice {
        /// The message.
        message: String,
    },
    /// The response is complete.
    Finished {
        /// Why it ended.
        reason: FinishReason,
    },
}

/// Why a model response ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer (or hit a stop sequence).
    EndTurn,
    /// It wants its tool calls run.
    ToolUse,
    /// It hit the output token limit.
    MaxTokens,
    /// It refused (content filter, safety stop).
    Refusal,
}

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The model is not configured or lacks credentials.
    #[error("model configuration: {0}")]
    Config(String),
    /// The API answered with an error.
    #[error("model API error{}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Api {
        /// The HTTP status, when there was one.
        status: Option<u16>,
        /// The provider's message.
        message: String,
    },
    /// The connection failed or broke off.
    #[error("model connection: {0}")]
    Connection(String),
    /// The stream could not be understood or ended early.
    #[error("model stream: {0}")]
    Protocol(String),
    /// A model that is not reached over an API failed in its own way (a scripted model out of
    /// responses, a replayed recording whose request differs from the agent's).
    #[error("{model}: {message}")]
    Failed {
        /// Which model, as its errors name it (`scripted model`, `replay`).
        model: &'static str,
        /// What failed.
        message: String,
    },
}

impl ModelError {
    /// The kind of failure, in a word (`model_api`, `model_connection`, …), as a trace
    /// records it.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Config(_) => "model_config",
            ModelError::Api { .. } => "model_api",
            ModelError::Connection(_) => "model_connection",
            ModelError::Protocol(_) => "model_protocol",
            ModelError::Failed { .. } => "model_failed",
        }
    }

    /// The kind of failure as Claude Code's `StopFailure` hooks name it (`rate_limit`,
    /// `overloaded`, `authentication_failed`, `billing_error`, `invalid_request`,
    /// `model_not_found`, `server_error`, `unknown`).
    pub fn stop_failure(&self) -> &'static str {
        match self {
            ModelError::Api {
                status: Some(status),
                ..
            } => match status {
                401 | 403 => "authentication_failed",
                402 => "billing_error",
                404 => "model_not_found",
                429 => "rate_limit",
                529 | 503 => "overloaded",
                400..=499 => "invalid_request",
                _ => "server_error",
            },
            ModelError::Config(_) => "authentication_failed",
            ModelError::Connection(_) => "server_error",
            _ => "unknown",
        }
    }
}

/// The stream of one model response. Dropping it cancels the request.
pub type ModelStream = BoxStream<'static, Result<ModelEvent, ModelError>>;

/// A chat model that streams responses and calls tools.
#[async_trait::async_trait]
pub trait Model: Send + Sync {
    /// The model's name as users write it (`scripted`, `anthropic/claude-sonnet-4-5`, …).
    fn name(&self) -> String;
    /// The model's context window in tokens, when known: the agent compacts the history
    /// before a request that would not fit.
    fn context_window(&self) -> Option<u64> {
        None
    }
    /// Whether the model takes images (in the user's messages and in tool results). When it
    /// does not, the agent sends it a short note in each image's place. Yes by default.
    fn accepts_images(&self) -> bool {
        true
    }
    /// What the model's tokens cost, when known: each request is then priced, and a session
    /// with a budget may use it. `None` by default: the model's requests are counted in tokens
    /// and said to be unpriced (wrap a model in [`Priced`](priced::Priced) to give it one).
    fn price(&self) -> Option<crate::cost::Price> {
        None
    }
    /// Starts a response. The stream ends after [`ModelEvent::Finished`] or an error.
    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError>;
}

/// A shared model is the model it shares (an agent's model kept by the caller too).
#[async_trait::async_trait]
impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn context_window(&self) -> Option<u64> {
        (**self).context_window()
    }
    fn accepts_images(&self) -> bool {
        (**self).accepts_images()
    }
    fn price(&self) -> Option<crate::cost::Price> {
        (**self).price()
    }
    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        (**self).stream(request).await
    }
}

/// How a block reads as text for models that take only text and images (embedded resources,
/// resource links, audio).
pub fn resource_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Resource {
            uri,
            text,
            mime_type,
        } => format!(
            "<resource uri=\"{uri}\"{}>\n{}\n</resource>",
            mime_type
                .as_deref()
                .map(|m| format!(" mimeType=\"{m}\""))
                .unwrap_or_default(),
            text.as_deref().unwrap_or("(binary content not shown)")
        ),
        ContentBlock::Text { text } => text.clone(),
        ContentBlock::Image { mime_type, .. } => format!("(an image, {mime_type})"),
        ContentBlock::Audio { mime_type, .. } => format!("(audio, {mime_type})"),
        ContentBlock::ResourceLink {
            uri,
            name,
            description,
            ..
        } => match description {
            Some(description) => format!("[{name}]({uri}): {description}"),
            None => format!("[{name}]({uri})"),
        },
        other => match serde_json::to_string(other) {
            Ok(json) => json,
            Err(_) => "(content this model cannot read)".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_output_limit_is_the_lower_of_its_own_and_the_models() {
        let request = ModelRequest {
            system: String::new(),
            messages: Vec::new(),
            tools: Vec::new(),
            environment: None,
            max_output_tokens: None,
        };
        assert_eq!(request.output_limit(None), None);
        assert_eq!(request.output_limit(Some(4096)), Some(4096));
        let limited = request.with_max_output_tokens(50);
        assert_eq!(limited.output_limit(Some(4096)), Some(50));
        assert_eq!(limited.output_limit(Some(20)), Some(20));
        assert_eq!(limited.output_limit(None), Some(50));
    }

    #[test]
    fn another_providers_signatures_and_encrypted_reasoning_are_never_read_to_a_model() {
        let answer = |origin: Option<&str>| Message::Assistant {
            content: vec![
                AssistantContent::Thinking {
                    text: "Plan.".into(),
                    signature: Some("anthropic-signature".into()),
                },
                AssistantContent::RedactedThinking {
                    data: "encrypted".into(),
                },
                AssistantContent::Text {
                    text: "Reading.".into(),
                },
                AssistantContent::ToolCall {
                    id: "toolu_1".into(),
                    name: "Read".into(),
                    arguments: serde_json::json!({"path": "a"}),
                },
                // A signature standing for the part before it (Gemini's).
                AssistantContent::Thinking {
                    text: String::new(),
                    signature: Some("gemini-signature".into()),
                },
            ],
            origin: origin.map(str::to_owned),
        };
        let anthropic = answer(Some("anthropic/claude-sonnet-4-5"));
        assert_eq!(anthropic.clone().readable_by("anthropic"), anthropic);
        let Message::Assistant { content, origin } = anthropic.readable_by("gemini") else {
            unreachable!("an answer stays an answer")
        };
        assert_eq!(origin.as_deref(), Some("anthropic/claude-sonnet-4-5"));
        assert_eq!(
            content,
            [
                AssistantContent::Thinking {
                    text: "Plan.".into(),
                    signature: None
                },
                AssistantContent::Text {
                    text: "Reading.".into()
                },
                AssistantContent::ToolCall {
                    id: "toolu_1".into(),
                    name: "Read".into(),
                    arguments: serde_json::json!({"path": "a"}),
                },
            ]
        );
        // Stored before origins were kept: as it is.
        assert_eq!(answer(None).readable_by("gemini"), answer(None));
        assert_eq!(provider_of("openrouter/anthropic/claude"), "openrouter");
        assert_eq!(provider_of("scripted"), "scripted");
    }

    #[test]
    fn an_answer_stored_without_its_origin_still_loads() {
        let stored = r#"{"role":"assistant","content":[{"type":"text","text":"hi"}]}"#;
        let message: Message = serde_json::from_str(stored).unwrap();
        assert_eq!(
            message,
            Message::Assistant {
                content: vec![AssistantContent::Text { text: "hi".into() }],
                origin: None
            }
        );
        assert_eq!(serde_json::to_string(&message).unwrap(), stored);
    }
}
