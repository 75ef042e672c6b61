//! Amazon Bedrock's streams, frames of AWS's event stream ([`eventstream`](super::eventstream)):
//! ConverseStream (`POST /model/{id}/converse-stream`, [`ConverseDecoder`]), whose `:event-type`
//! names the event and whose JSON payload carries it; and InvokeModelWithResponseStream for
//! Claude (`POST /model/{id}/invoke-with-response-stream`, [`InvokeDecoder`]), whose `chunk`
//! frames each carry one event of Anthropic's Messages stream, base64-encoded.
//!
//! ConverseStream tolerates, as real streams do it: a random-length `p` padding field in every
//! payload, text blocks that open without `contentBlockStart`, empty text deltas, blocks that stop
//! without ever starting, reasoning that ends with its signature or comes redacted, tool input
//! whose only fragment is `""` or that has none (meaning `{}`), tools the service runs itself
//! (`server_tool_use`, with their `toolResult` blocks: not calls for the agent), the cache counts
//! under both of Bedrock's names, and usage after `messageStop`.

use super::eventstream::Frame;
use super::{SseEvent, StreamDecoder, anthropic};
use crate::tool_names::Originals;
use agentry::event::Usage;
use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use base64::Engine;
use serde::Deserialize;
use std::collections::HashMap;

/// Decodes one ConverseStream response.
#[derive(Debug, Default)]
pub struct ConverseDecoder {
    /// The agent's tool calls under way, by block index.
    calls: HashMap<u64, Call>,
    stop: Option<FinishReason>,
    /// The tools' own names by the names Converse was given, where they differ.
    originals: Originals,
}

#[derive(Debug)]
struct Call {
    id: String,
    name: String,
    input: String,
}

impl ConverseDecoder {
    /// A decoder for a new response.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that gives calls back their tools' own names (`originals`: by the names
    /// Converse was given, see [`crate::tool_names::CONVERSE`]).
    pub fn with_names(originals: Originals) -> Self {
        Self {
            originals,
            ..Self::default()
        }
    }
}

/// A payload's fields this decoder reads; the rest (the `p` padding, metrics) is skipped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    content_block_index: Option<u64>,
    start: Option<Start>,
    delta: Option<Delta>,
    stop_reason: Option<String>,
    usage: Option<BedrockUsage>,
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    tool_use: Option<ToolUseStart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    tool_use_id: String,
    name: String,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    text: Option<String>,
    reasoning_content: Option<Reasoning>,
    tool_use: Option<ToolUseDelta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reasoning {
    text: Option<String>,
    signature: Option<String>,
    redacted_content: Option<String>,
}

#[derive(Deserialize)]
struct ToolUseDelta {
    input: String,
}

/// Usage. Bedrock gives the cache counts under two names (one, the other or both).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BedrockUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    cache_read_input_tokens: Option<u64>,
    cache_read_input_token_count: Option<u64>,
    cache_write_input_tokens: Option<u64>,
    cache_write_input_token_count: Option<u64>,
}

impl StreamDecoder<Frame> for ConverseDecoder {
    fn feed(&mut self, frame: &Frame) -> Result<Vec<ModelEvent>, ModelError> {
        check_event(frame)?;
        let payload: Payload = serde_json::from_slice(&frame.payload).map_err(|e| {
            ModelError::Protocol(format!(
                "Bedrock sent an event that cannot be read ({e}): {}",
                super::clip(&String::from_utf8_lossy(&frame.payload))
            ))
        })?;
        let index = payload.content_block_index.unwrap_or(0);
        Ok(match frame.text_header(":event-type") {
            Some("contentBlockStart") => {
                let tool = payload.start.and_then(|start| start.tool_use);
                // A tool the service runs itself is not a call for the agent.
                if let Some(tool) = tool.filter(|t| t.kind.as_deref() != Some("server_tool_use")) {
                    self.calls.insert(
                        index,
                        Call {
                            id: tool.tool_use_id,
                            name: self.originals.restore(tool.name),
                            input: String::new(),
                        },
                    );
                }
                Vec::new()
            }
            Some("contentBlockDelta") => self.delta(index, payload.delta),
            Some("contentBlockStop") => match self.calls.remove(&index) {
                Some(call) => {
                    let input = if call.input.is_empty() {
                        "{}"
                    } else {
                        &call.input
                    };
                    vec![ModelEvent::ToolCall(ToolCallRequest::new(
                        call.id, call.name, input,
                    ))]
                }
                None => Vec::new(),
            },
            Some("messageStop") => {
                self.stop = Some(finish_reason(payload.stop_reason.as_deref()));
                Vec::new()
            }
            Some("metadata") => payload
                .usage
                .map(|usage| ModelEvent::Usage {
                    usage: Usage {
                        input_tokens: usage.input_tokens,
                        output_tokens: usage.output_tokens,
                        cache_read_tokens: usage
                            .cache_read_input_tokens
                            .or(usage.cache_read_input_token_count)
                            .unwrap_or(0),
                        cache_write_tokens: usage
                            .cache_write_input_tokens
                            .or(usage.cache_write_input_token_count)
                            .unwrap_or(0),
                    },
                })
                .into_iter()
                .collect(),
            _ => Vec::new(),
        })
    }

    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        match self.stop.take() {
            Some(reason) => Ok(vec![ModelEvent::Finished { reason }]),
            None => Err(ModelError::Protocol(
                "the response ended before messageStop".to_owned(),
            )),
        }
    }
}

impl ConverseDecoder {
    fn delta(&mut self, index: u64, delta: Option<Delta>) -> Vec<ModelEvent> {
        let Some(delta) = delta else {
            return Vec::new();
        };
        let mut events = Vec::new();
        if let Some(text) = delta.text.filter(|text| !text.is_empty()) {
            events.push(ModelEvent::TextDelta { text });
        }
        if let Some(reasoning) = delta.reasoning_content {
            if let Some(text) = reasoning.text.filter(|text| !text.is_empty()) {
                events.push(ModelEvent::ThinkingDelta { text });
            }
            if let Some(signature) = reasoning.signature {
                events.push(ModelEvent::ThinkingSignature { signature });
            }
            if let Some(data) = reasoning.redacted_content {
                events.push(ModelEvent::RedactedThinking { data });
            }
        }
        if let (Some(fragment), Some(call)) = (delta.tool_use, self.calls.get_mut(&index)) {
            call.input.push_str(&fragment.input);
        }
        events
    }
}

/// Checks that a frame is an event: an exception or error frame is the service's error, named by
/// its type.
fn check_event(frame: &Frame) -> Result<(), ModelError> {
    match frame.text_header(":message-type") {
        Some("event") => Ok(()),
        Some("exception") => {
            let kind = frame.text_header(":exception-type").unwrap_or("exception");
            let message = serde_json::from_slice::<Payload>(&frame.payload)
                .ok()
                .and_then(|payload| payload.message);
            Err(service_error(kind, message.as_deref()))
        }
        Some("error") => {
            let kind = frame.text_header(":error-code").unwrap_or("error");
            Err(service_error(kind, frame.text_header(":error-message")))
        }
        other => Err(ModelError::Protocol(format!(
            "Bedrock sent a frame of unknown message type {other:?}"
        ))),
    }
}

/// Decodes one InvokeModelWithResponseStream response of a Claude model: each `chunk` frame's
/// base64 `bytes` are an event of the Messages stream, read by the Anthropic decoder (padding,
/// thinking signatures, usage and all).
#[derive(Debug, Default)]
pub struct InvokeDecoder {
    messages: anthropic::Decoder,
}

impl InvokeDecoder {
    /// A decoder for a new response.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A `chunk` frame's payload.
#[derive(Deserialize)]
struct Chunk {
    bytes: String,
}

impl StreamDecoder<Frame> for InvokeDecoder {
    fn feed(&mut self, frame: &Frame) -> Result<Vec<ModelEvent>, ModelError> {
        check_event(frame)?;
        if frame.text_header(":event-type") != Some("chunk") {
            return Ok(Vec::new());
        }
        let unreadable = |why: String| {
            ModelError::Protocol(format!(
                "Bedrock sent a chunk that cannot be read ({why}): {}",
                super::clip(&String::from_utf8_lossy(&frame.payload))
            ))
        };
        let chunk: Chunk =
            serde_json::from_slice(&frame.payload).map_err(|e| unreadable(e.to_string()))?;
        let event = base64::engine::general_purpose::STANDARD
            .decode(chunk.bytes.as_bytes())
            .map_err(|e| unreadable(e.to_string()))?;
        let data = String::from_utf8(event).map_err(|e| unreadable(e.to_string()))?;
        self.messages.feed(&SseEvent {
            event: "message".to_owned(),
            data,
        })
    }

    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        self.messages.finish()
    }
}

/// How a ConverseStream `stopReason` ends the response.
fn finish_reason(stop_reason: Option<&str>) -> FinishReason {
    match stop_reason {
        Some("tool_use") => FinishReason::ToolUse,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::MaxTokens,
        Some("guardrail_intervened" | "content_filtered") => FinishReason::Refusal,
        _ => FinishReason::EndTurn,
    }
}

/// An error the service sent in the stream, named by its type.
fn service_error(kind: &str, message: Option<&str>) -> ModelError {
    ModelError::Api {
        status: None,
        message: format!("{} [{kind}]", message.unwrap_or("no message")),
    }
}
