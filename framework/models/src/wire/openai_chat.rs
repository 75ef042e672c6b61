//! The Chat Completions stream (`POST /chat/completions`, `stream: true`), as OpenAI and the
//! compatible servers (DeepSeek, Groq, xAI, OpenRouter, Z.ai, Ollama, vLLM, llama.cpp, LM Studio)
//! send it.
//!
//! Tolerated, as real streams do it: `choices: []` chunks, a missing `finish_reason` key,
//! `usage` on the finish chunk or on a later chunk (whose `finish_reason: null` must not erase
//! the earlier one), reasoning as `reasoning_content` or `reasoning`, whole or fragmented tool
//! calls keyed by `index`, an `event: error` with no `[DONE]`, and unknown fields.

use super::lenient::{Index, List, Object, Present, Text};
use super::{SseEvent, StreamDecoder, clip, openai_usage, parse_json};
use agentry::event::Usage;
use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use serde::Deserialize;
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

/// One chunk of the stream, as far as it is read (see [`lenient`](super::lenient)).
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: List<Object<Choice<'a>>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Present,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Object<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Text<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Text<'a>,
    #[serde(default, borrow)]
    reasoning_content: Text<'a>,
    #[serde(default, borrow)]
    reasoning: Text<'a>,
    #[serde(default, borrow)]
    tool_calls: List<Object<CallFragment<'a>>>,
}

#[derive(Default, Deserialize)]
struct CallFragment<'a> {
    #[serde(default)]
    index: Index,
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    function: Object<FunctionFragment<'a>>,
}

#[derive(Deserialize)]
struct FunctionFragment<'a> {
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    arguments: Text<'a>,
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

    fn take_chunk(&mut self, chunk: Chunk<'_>) -> Vec<ModelEvent> {
        let mut events = Vec::new();
        if let Some(usage) = chunk.usage.filter(Value::is_object) {
            self.usage = Some(openai_usage(
                &usage,
                "/prompt_tokens",
                "/completion_tokens",
                "/prompt_tokens_details/cached_tokens",
            ));
        }
        // Only the first choice is asked for (n = 1).
        let Some(Object(Some(choice))) = chunk.choices.0.into_iter().next() else {
            return events;
        };
        if let Object(Some(delta)) = choice.delta {
            let thinking = [delta.reasoning_content, delta.reasoning]
                .into_iter()
                .find_map(|text| text.0.filter(|t| !t.is_empty()));
            if let Some(text) = thinking {
                events.push(ModelEvent::ThinkingDelta {
                    text: text.into_owned(),
                });
            }
            if let Some(text) = delta.content.0.filter(|t| !t.is_empty()) {
                events.push(ModelEvent::TextDelta {
                    text: text.into_owned(),
                });
            }
            for fragment in delta.tool_calls.0 {
                // A fragment that is not an object still names the call at index 0.
                let fragment = fragment.0.unwrap_or_default();
                let call = self.calls.entry(fragment.index.0.unwrap_or(0)).or_default();
                if let Some(id) = fragment.id.0 {
                    call.id = id.into_owned();
                }
                if let Object(Some(function)) = fragment.function {
                    if let Some(name) = function.name.0 {
                        call.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments.0 {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
        }
        if let Some(reason) = choice.finish_reason.0 {
            self.finish = Some(reason.into_owned());
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
            Some("content_filter") => {
                events.push(super::content_filtered());
                FinishReason::Refusal
            }
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
        if event.event == "error" {
            return Err(error_from(&parse_json(
                "the Chat Completions stream",
                data,
            )?));
        }
        // Read straight into the view; an event it cannot read so (a key given twice, say) is
        // read as a whole value first, which also says why when it is not JSON.
        let whole;
        let chunk: Object<Chunk> = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(_) => {
                whole = parse_json("the Chat Completions stream", data)?;
                Object::deserialize(&whole).map_err(|e| {
                    ModelError::Protocol(format!("the Chat Completions stream: {e}"))
                })?
            }
        };
        let Object(Some(chunk)) = chunk else {
            return Ok(Vec::new());
        };
        if chunk.error.0 {
            return Err(error_from(&parse_json(
                "the Chat Completions stream",
                data,
            )?));
        }
        Ok(self.take_chunk(chunk))
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
