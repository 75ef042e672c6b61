//! The OpenAI-compatible client: Chat Completions (OpenAI, OpenRouter, DeepSeek, Groq, xAI,
//! Ollama, vLLM, llama.cpp, LM Studio, …) and, where configured, the Responses API.

use crate::http::{Endpoint, HttpOptions, credential_header};
use crate::secret::Secret;
use crate::wire::{openai_chat, openai_responses};
use agentry::model::{
    AssistantContent, Message, Model, ModelError, ModelRequest, ModelStream, ToolResult,
    resource_text,
};
use agentry::tool::ContentBlock;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Value, json};

/// Which OpenAI API a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenAiApi {
    /// `POST {base}/chat/completions`.
    ChatCompletions,
    /// `POST {base}/responses`.
    Responses,
}

impl OpenAiApi {
    /// Responses when `responses`, else Chat Completions.
    pub fn responses_if(responses: bool) -> Self {
        if responses {
            Self::Responses
        } else {
            Self::ChatCompletions
        }
    }
}

/// Settings of an OpenAI-compatible client.
#[derive(Debug, Clone)]
pub struct OpenAiSettings {
    /// The name users know the model by (`openai/gpt-4.1`).
    pub display_name: String,
    /// The model id the API takes (`gpt-4.1`).
    pub model: String,
    /// The API base URL, including `/v1`.
    pub base_url: String,
    /// The API key (local servers need none).
    pub api_key: Option<Secret>,
    /// Which API to call.
    pub api: OpenAiApi,
    /// The model's context window, in tokens.
    pub context_window: Option<u64>,
    /// Whether the model takes images.
    pub images: bool,
    /// The most output tokens to ask for (the server's default when `None`).
    pub max_output_tokens: Option<u32>,
    /// Whether the model reasons — on Responses, its reasoning summaries and encrypted
    /// reasoning are asked for, and the encrypted reasoning sent back with the conversation;
    /// `None`: as the model's name says ([`reasons`]).
    pub reasoning: Option<bool>,
    /// Timeouts and retries.
    pub http: HttpOptions,
}

/// Whether a model of this name is one of OpenAI's reasoning models (o1, o3, o4, GPT-5 and the
/// Codex models, not `gpt-5-chat`), which alone take `reasoning` and
/// `include: ["reasoning.encrypted_content"]` on Responses.
pub fn reasons(model: &str) -> bool {
    let id = model.rsplit('/').next().unwrap_or(model);
    let o_series = ["o1", "o3", "o4"]
        .iter()
        .any(|family| id == *family || id.starts_with(&format!("{family}-")));
    o_series || (id.starts_with("gpt-5") && !id.starts_with("gpt-5-chat")) || id.contains("codex")
}

/// A model behind an OpenAI-compatible API.
#[derive(Debug)]
pub struct OpenAiModel {
    settings: OpenAiSettings,
    endpoint: Endpoint,
}

impl OpenAiModel {
    /// A client with these settings.
    pub fn new(settings: OpenAiSettings) -> Result<Self, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &settings.api_key {
            headers.insert(
                AUTHORIZATION,
                credential_header(&format!("Bearer {}", key.expose()), "the API key")?,
            );
        }
        let path = match settings.api {
            OpenAiApi::ChatCompletions => "chat/completions",
            OpenAiApi::Responses => "responses",
        };
        let url = format!("{}/{path}", settings.base_url.trim_end_matches('/'));
        let endpoint = Endpoint::new(url, headers, settings.http.clone());
        Ok(Self::at(settings, endpoint))
    }

    /// A client of these settings' API at an endpoint of its own (another URL, another way of
    /// sending the key: Azure's).
    pub(crate) fn at(settings: OpenAiSettings, endpoint: Endpoint) -> Self {
        Self { settings, endpoint }
    }
}

#[agentry::async_trait]
impl Model for OpenAiModel {
    described_by_settings!();

    async fn stream(&self, request: ModelRequest) -> Result<ModelStream, ModelError> {
        let settings = &self.settings;
        let endpoint = self.endpoint.clone();
        let limit = request.output_limit(settings.max_output_tokens);
        Ok(match settings.api {
            OpenAiApi::ChatCompletions => endpoint.stream(
                &chat_body(&settings.model, &request, limit),
                openai_chat::Decoder::new,
            ),
            OpenAiApi::Responses => endpoint.stream(
                &responses_body(
                    &settings.model,
                    &request,
                    limit,
                    settings
                        .reasoning
                        .unwrap_or_else(|| reasons(&settings.model)),
                ),
                openai_responses::Decoder::new,
            ),
        })
    }
}

fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// The Chat Completions request body.
pub fn chat_body(model: &str, request: &ModelRequest, max_tokens: Option<u32>) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for message in request.conversation().iter() {
        match message {
            Message::User { content } => {
                messages.push(json!({"role": "user", "content": chat_user_content(content)}))
            }
            Message::Assistant { content, .. } => messages.push(chat_assistant(content)),
            Message::ToolResults { results } => messages.extend(chat_tool_results(results)),
        }
    }
    let mut body = json!({
        "model": model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
    }
    if let Some(max) = max_tokens {
        body["max_completion_tokens"] = json!(max);
    }
    body
}

fn chat_user_content(content: &[ContentBlock]) -> Value {
    if let [ContentBlock::Text { text }] = content {
        return json!(text);
    }
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { data, mime_type } => {
                json!({"type": "image_url", "image_url": {"url": data_url(mime_type, data)}})
            }
            other => json!({"type": "text", "text": resource_text(other)}),
        })
        .collect()
}

fn chat_assistant(content: &[AssistantContent]) -> Value {
    let text: String = content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let calls: Vec<Value> = content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::ToolCall {
                id,
                name,
                arguments,
            } => Some(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments_text(arguments)},
            })),
            _ => None,
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    message
}

/// Arguments as the JSON text the model sent (a string that was not JSON stays as it was).
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

/// Tool messages carry text only; images in results follow in one user message.
fn chat_tool_results(results: &[ToolResult]) -> Vec<Value> {
    let mut messages: Vec<Value> = results
        .iter()
        .map(|r| json!({"role": "tool", "tool_call_id": r.tool_call_id, "content": r.text()}))
        .collect();
    let images: Vec<Value> = results
        .iter()
        .flat_map(|r| &r.content)
        .filter_map(|block| match block {
            ContentBlock::Image { data, mime_type } => {
                Some(json!({"type": "image_url", "image_url": {"url": data_url(mime_type, data)}}))
            }
            _ => None,
        })
        .collect();
    if !images.is_empty() {
        let mut content =
            vec![json!({"type": "text", "text": "Images returned by the tool calls above:"})];
        content.extend(images);
        messages.push(json!({"role": "user", "content": content}));
    }
    messages
}

/// The Responses request body (stateless: the whole input each time, nothing stored). A
/// `reasoning` model is asked for its reasoning summaries and encrypted reasoning, and gets its
/// encrypted reasoning back, each item before the output it led to (without an id: nothing is
/// stored to look it up by).
pub fn responses_body(
    model: &str,
    request: &ModelRequest,
    max_tokens: Option<u32>,
    reasoning: bool,
) -> Value {
    let mut input = Vec::new();
    for message in request.conversation().iter() {
        match message {
            Message::User { content } => input.push(json!({
                "role": "user",
                "content": content.iter().map(|block| match block {
                    ContentBlock::Text { text } => json!({"type": "input_text", "text": text}),
                    ContentBlock::Image { data, mime_type } => json!({"type": "input_image", "image_url": data_url(mime_type, data)}),
                    other => json!({"type": "input_text", "text": resource_text(other)}),
                }).collect::<Vec<_>>(),
            })),
            Message::Assistant { content, .. } => {
                for part in content {
                    match part {
                        AssistantContent::Text { text } if !text.is_empty() => input.push(json!({
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": text}],
                        })),
                        AssistantContent::ToolCall { id, name, arguments } => input.push(json!({
                            "type": "function_call", "call_id": id, "name": name, "arguments": arguments_text(arguments),
                        })),
                        AssistantContent::Thinking { text, signature: Some(encrypted) } if reasoning => {
                            let summary: Vec<Value> = (!text.is_empty())
                                .then(|| json!({"type": "summary_text", "text": text}))
                                .into_iter()
                                .collect();
                            input.push(json!({"type": "reasoning", "encrypted_content": encrypted, "summary": summary}));
                        }
                        _ => {}
                    }
                }
            }
            Message::ToolResults { results } => input.extend(results.iter().map(|r| {
                json!({"type": "function_call_output", "call_id": r.tool_call_id, "output": r.text()})
            })),
        }
    }
    let mut body = json!({
        "model": model,
        "stream": true,
        "store": false,
        "instructions": request.system,
        "input": input,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.input_schema}))
            .collect();
    }
    if let Some(max) = max_tokens {
        body["max_output_tokens"] = json!(max);
    }
    if reasoning {
        body["reasoning"] = json!({"summary": "auto"});
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    body
}
