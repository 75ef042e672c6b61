//! The Chat Completions stream (`POST /chat/completions`, `stream: true`), as OpenAI and the
//! compatible servers (DeepSeek, Groq, xAI, OpenRouter, Z.ai, Ollama, vLLM, llama.cpp, LM Studio)
//! send it.
//!
//! Tolerated, as real streams do it: `choices: []` chunks, a missing `finish_reason` key,
//! `usage` on the finish chunk or on a later chunk (whose `finish_reason: null` must not erase
//! the earlier one), reasoning as `reasoning_content` or `reasoning`, whole or fragmented tool
//! calls keyed by `index`, an `event: error` with no `[DONE]`, and unknown fields.

use super::{SseEvent, StreamDecoder, clip, openai_usage, parse_json};
use agentry::event::Usage;
use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use serde_json::Value;
use std::collections::BTreeMap;

/// Decodes one Chat Completions response.
#[derive(Debug, Default)]
pub struct Decoder {
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl Decoder {
    /// A decoder for a new response.
    pub fn new() -> Self {
        Self::default()
    }

    fn take_chunk(&mut self, chunk: &Value) -> Vec<ModelEvent> {
        let mut events = Vec::new();
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(openai_usage(
                usage,
                "/prompt_tokens",
                "/completion_tokens",
                "/prompt_tokens_details/cached_tokens",
            ));
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        // Only the first choice is asked for (n = 1).
        let Some(choice) = choices.and_then(|c| c.first()) else {
            return events;
        };
        if let Some(delta) = choice.get("delta") {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    events.push(ModelEvent::ThinkingDelta {
                        text: text.to_owned(),
                    });
                    break;
                }
            }
            if let Some(text) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                events.push(ModelEvent::TextDelta {
                    text: text.to_owned(),
                });
            }
            for fragment in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = fragment.get("index").and_then(Value::as_u64).unwrap_or(0);
                let call = self.calls.entry(index).or_default();
                if let Some(id) = fragment.get("id").and_then(Value::as_str) {
                    call.id = id.to_owned();
                }
                if let Some(function) = fragment.get("function") {
                    if let Some(name) = function.get("name").and_then(Value::as_str) {
                        call.name.push_str(name);
                    }
                    if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                        call.arguments.push_str(arguments);
                    }
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_owned());
        }
        events
    }

    fn complete(&mut self) -> Vec<ModelEvent> {
        self.done = true;
        let mut events: Vec<ModelEvent> = std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(index, call)| {
                let id = if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                };
                ModelEvent::ToolCall(ToolCallRequest::new(id, call.name, &call.arguments))
            })
            .collect();
        if let Some(usage) = self.usage.take() {
            events.push(ModelEvent::Usage { usage });
        }
        let reason = match self.finish.as_deref() {
            Some("length") => FinishReason::MaxTokens,
            Some("content_filter") => FinishReason::Refusal,
            Some("tool_calls" | "function_call") => FinishReason::ToolUse,
            _ if events
                .iter()
                .any(|e| matches!(e, ModelEvent::ToolCall { .. })) =>
            {
                FinishReason::ToolUse
            }
            _ => FinishReason::EndTurn,
        };
        events.push(ModelEvent::Finished { reason });
        events
    }
}

/// The error a Chat Completions error payload describes.
pub(crate) fn error_from(payload: &Value) -> ModelError {
    let error = payload.get("error").unwrap_or(payload);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| clip(&error.to_string()));
    let code = error
        .get("code")
        .or_else(|| error.get("type"))
        .and_then(Value::as_str)
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    ModelError::Api {
        status: error
            .get("status_code")
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok()),
        message: format!("{message}{code}"),
    }
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            return Ok(self.complete());
        }
        let chunk = parse_json("the Chat Completions stream", data)?;
        if event.event == "error" || chunk.get("error").is_some() {
            return Err(error_from(&chunk));
        }
        Ok(self.take_chunk(&chunk))
    }

    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        // Some servers close without `[DONE]`; a finish reason means the answer is whole.
        if self.finish.is_some() {
            return Ok(self.complete());
        }
        Err(ModelError::Protocol(
            "the response ended before the model finished (no finish_reason and no [DONE])"
                .to_owned(),
        ))
    }
}
