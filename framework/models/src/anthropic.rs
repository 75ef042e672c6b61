//! The Anthropic Messages client (`POST {base}/v1/messages`), with prompt caching on the system
//! prompt and the tool definitions, and thinking blocks sent back exactly as received.

use crate::http::{Endpoint, HttpOptions, credential_header};
use crate::secret::Secret;
use crate::tool_names::CALL_IDS;
use crate::turns::Blocks;
use crate::wire::anthropic;
use agentry::model::{
    AssistantContent, Message, Model, ModelError, ModelRequest, ModelStream, resource_text,
};
use agentry::tool::ContentBlock;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

/// The `anthropic-version` header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Settings of an Anthropic client.
#[derive(Debug, Clone)]
pub struct AnthropicSettings {
    /// The name users know the model by (`anthropic/claude-sonnet-4-5`).
    pub display_name: String,
    /// The model id the API takes.
    pub model: String,
    /// The API base URL, without `/v1`.
    pub base_url: String,
    /// The API key.
    pub api_key: Secret,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// `max_tokens` for each request (the API requires one).
    pub max_output_tokens: u32,
    /// Timeouts and retries.
    pub http: HttpOptions,
}

/// A model behind the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicModel {
    settings: AnthropicSettings,
    endpoint: Endpoint,
}

impl AnthropicModel {
    /// A client with these settings.
    pub fn new(settings: AnthropicSettings) -> Result<Self, ModelError> {
        let mut headers = Self::version_headers();
        headers.insert(
            HeaderName::from_static("x-api-key"),
            credential_header(settings.api_key.expose(), "the API key")?,
        );
        let endpoint = Endpoint::new(Self::url(&settings), headers, settings.http.clone());
        Ok(Self::at(settings, endpoint))
    }

    /// The Messages URL of these settings' base URL.
    pub(crate) fn url(settings: &AnthropicSettings) -> String {
        format!("{}/v1/messages", settings.base_url.trim_end_matches('/'))
    }

    /// The headers every request carries, beside its credential.
    pub(crate) fn version_headers() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers
    }

    /// A client of these settings at an endpoint authorized otherwise (Foundry's Entra ID
    /// tokens); `settings.api_key` is not used.
    pub(crate) fn at(settings: AnthropicSettings, endpoint: Endpoint) -> Self {
        Self { settings, endpoint }
    }
}

#[agentry::async_trait]
impl Model for AnthropicModel {
    described_by_settings!();

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let limit = request
            .output_limit(Some(self.settings.max_output_tokens))
            .unwrap_or(self.settings.max_output_tokens);
        let body = messages_body(&self.settings.model, &request, limit);
        Ok(self.endpoint.clone().stream(&body, anthropic::Decoder::new))
    }
}

const CACHE: fn() -> Value = || json!({"type": "ephemeral"});

/// The Messages body as a cloud hosts it: no `model` (the URL names it), the cloud's
/// `anthropic_version` (`bedrock-2023-05-31`, `vertex-2023-10-16`), and `stream` only where the
/// cloud takes it (Vertex AI does; Bedrock, whose URL says it streams, refuses the field).
pub fn hosted_messages_body(
    request: &ModelRequest,
    max_tokens: u32,
    anthropic_version: &str,
    stream_field: bool,
) -> Value {
    let mut body = messages_body("", request, max_tokens);
    if let Some(fields) = body.as_object_mut() {
        fields.remove("model");
        if !stream_field {
            fields.remove("stream");
        }
        fields.insert("anthropic_version".to_owned(), json!(anthropic_version));
    }
    body
}

/// The Messages request body.
pub fn messages_body(model: &str, request: &ModelRequest, max_tokens: u32) -> Value {
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    // One breakpoint after the last tool caches every tool definition.
    if let Some(last) = tools.last_mut() {
        last["cache_control"] = CACHE();
    }
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "stream": true,
        "system": [{"type": "text", "text": request.system, "cache_control": CACHE()}],
        "messages": messages(&request.conversation()),
    });
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    body
}

/// The conversation as Messages turns: tool results are user turns, and consecutive turns of one
/// role are merged (the API wants them alternating).
fn messages(history: &[Message]) -> Vec<Value> {
    crate::turns::alternating(
        history,
        &Blocks {
            user: |block| Some(user_block(block)),
            assistant: assistant_block,
            tool_result: |result| {
                json!({
                    "type": "tool_result",
                    "tool_use_id": CALL_IDS.name_for(result.tool_call_id.as_str()),
                    "content": result.content.iter().map(user_block).collect::<Vec<_>>(),
                    "is_error": result.is_error,
                })
            },
        },
    )
}

fn user_block(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Image { data, mime_type } => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": mime_type, "data": data},
        }),
        other => json!({"type": "text", "text": resource_text(other)}),
    }
}

fn assistant_block(part: &AssistantContent) -> Option<Value> {
    match part {
        AssistantContent::Text { text } if text.is_empty() => None,
        AssistantContent::Text { text } => Some(json!({"type": "text", "text": text})),
        // Thinking goes back exactly as received; unsigned thinking (from another provider)
        // cannot be verified by the API and is left out.
        AssistantContent::Thinking {
            text,
            signature: Some(signature),
        } => Some(json!({
            "type": "thinking", "thinking": text, "signature": signature,
        })),
        AssistantContent::Thinking {
            signature: None, ..
        } => None,
        AssistantContent::RedactedThinking { data } => {
            Some(json!({"type": "redacted_thinking", "data": data}))
        }
        AssistantContent::ToolCall {
            id,
            name,
            arguments,
        } => Some(json!({
            "type": "tool_use",
            "id": CALL_IDS.name_for(id.as_str()),
            "name": name,
            "input": crate::turns::object_arguments(arguments),
        })),
    }
}
