//! The OpenAI Responses stream (`POST /responses`, `stream: true`), from OpenAI (with `event:`
//! lines, no `[DONE]`) and OpenRouter (no `event:` lines, a closing `[DONE]`).
//!
//! Text comes as `response.output_text.delta`; reasoning as summary or raw text deltas, closed by
//! its encrypted content (when asked for) as the reasoning's signature; function calls as an
//! `output_item.added` / arguments deltas / `output_item.done` sequence. The response
//! is complete at `response.completed` (or `response.incomplete`); `error` and `response.failed`
//! are errors.

use super::{SseEvent, StreamDecoder, clip, count, openai_usage, parse_json};
use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use serde_json::Value;
use std::collections::BTreeMap;

/// Decodes one Responses response.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Arguments streamed so far, by output index.
    arguments: BTreeMap<u64, String>,
    calls: usize,
    done: bool,
}

impl Decoder {
    /// A decoder for a new response.
    pub fn new() -> Self {
        Self::default()
    }

    fn complete(&mut self, response: &Value, incomplete: bool) -> Vec<ModelEvent> {
        self.done = true;
        let mut events = Vec::new();
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let mut usage_now = openai_usage(
                usage,
                "/input_tokens",
                "/output_tokens",
                "/input_tokens_details/cached_tokens",
            );
            usage_now.cache_write_tokens = count(usage, "/input_tokens_details/cache_write_tokens");
            events.push(ModelEvent::Usage { usage: usage_now });
        }
        let reason = match response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
        {
            Some("max_output_tokens") => FinishReason::MaxTokens,
            Some("content_filter") => {
                events.push(super::content_filtered());
                FinishReason::Refusal
            }
            _ if incomplete => FinishReason::MaxTokens,
            _ if self.calls > 0 => FinishReason::ToolUse,
            _ => FinishReason::EndTurn,
        };
        events.push(ModelEvent::Finished { reason });
        events
    }
}

fn failure(payload: &Value) -> ModelError {
    let error = payload
        .get("error")
        .or_else(|| payload.pointer("/response/error"))
        .filter(|e| e.is_object())
        .unwrap_or(payload);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| clip(&payload.to_string()));
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    ModelError::Api {
        status: None,
        message: format!("{message}{code}"),
    }
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" || self.done {
            return Ok(Vec::new());
        }
        let payload = parse_json("the Responses stream", data)?;
        let kind = payload
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        let delta = || {
            payload
                .get("delta")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(str::to_owned)
        };
        let index = payload
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Ok(match kind {
            "response.output_text.delta" => delta()
                .map(|text| ModelEvent::TextDelta { text })
                .into_iter()
                .collect(),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => delta()
                .map(|text| ModelEvent::ThinkingDelta { text })
                .into_iter()
                .collect(),
            "response.function_call_arguments.delta" => {
                if let Some(more) = delta() {
                    self.arguments.entry(index).or_default().push_str(&more);
                }
                vec![]
            }
            "response.output_item.done" => {
                let item = payload.get("item").unwrap_or(&Value::Null);
                match item.get("type").and_then(Value::as_str) {
                    Some("function_call") => {}
                    // The encrypted reasoning closes the reasoning its summary streamed.
                    Some("reasoning") => {
                        return Ok(item
                            .get("encrypted_content")
                            .and_then(Value::as_str)
                            .filter(|e| !e.is_empty())
                            .map(|e| ModelEvent::ThinkingSignature {
                                signature: e.to_owned(),
                            })
                            .into_iter()
                            .collect());
                    }
                    _ => return Ok(vec![]),
                }
                self.calls += 1;
                let streamed = self.arguments.remove(&index).unwrap_or_default();
                let arguments = item
                    .get("arguments")
                    .and_then(Value::as_str)
                    .filter(|a| !a.trim().is_empty())
                    .map_or(streamed, str::to_owned);
                let field = |key| item.get(key).and_then(Value::as_str).unwrap_or_default();
                vec![ModelEvent::ToolCall(ToolCallRequest::new(
                    field("call_id"),
                    field("name"),
                    &arguments,
                ))]
            }
            "response.completed" => {
                self.complete(payload.get("response").unwrap_or(&Value::Null), false)
            }
            "response.incomplete" => {
                self.complete(payload.get("response").unwrap_or(&Value::Null), true)
            }
            "error" | "response.failed" => return Err(failure(&payload)),
            _ => vec![],
        })
    }

    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.done {
            Ok(Vec::new())
        } else {
            Err(ModelError::Protocol(
                "the response ended before response.completed".to_owned(),
            ))
        }
    }
}
