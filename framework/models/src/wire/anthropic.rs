//! The Anthropic Messages stream (`POST /v1/messages`, `stream: true`).
//!
//! Tolerated, as real streams do it: whitespace-padded JSON, `ping`s anywhere, thinking blocks
//! that open empty and may end with an empty delta or carry only a signature, redacted thinking
//! that comes whole in `content_block_start`, block types it does not know (server tools and
//! their results), tool input whose only fragment is `""` (meaning `{}`), and usage repeated in
//! `message_delta`.

use super::{SseEvent, StreamDecoder, clip, count, parse_json};
use agentry::event::Usage;
use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use serde_json::Value;
use std::collections::HashMap;

/// Decodes one Messages response.
#[derive(Debug, Default)]
pub struct Decoder {
    blocks: HashMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
    stopped: bool,
}

#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

impl Decoder {
    /// A decoder for a new response.
    pub fn new() -> Self {
        Self::default()
    }

    fn read_usage(&mut self, usage: &Value) {
        // message_delta repeats some fields; a field it leaves out keeps its earlier value.
        let mut set = |field: &str, slot: fn(&mut Usage) -> &mut u64| {
            if usage.get(field).is_some_and(|v| !v.is_null()) {
                *slot(&mut self.usage) = count(usage, &format!("/{field}"));
            }
        };
        set("input_tokens", |u| &mut u.input_tokens);
        set("output_tokens", |u| &mut u.output_tokens);
        set("cache_read_input_tokens", |u| &mut u.cache_read_tokens);
        set("cache_creation_input_tokens", |u| &mut u.cache_write_tokens);
    }

    fn block_start(&mut self, index: u64, block: &Value) -> Vec<ModelEvent> {
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (state, events) = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let initial = text("text");
                let events = if initial.is_empty() {
                    vec![]
                } else {
                    vec![ModelEvent::TextDelta { text: initial }]
                };
                (Block::Text, events)
            }
            Some("thinking") => {
                let initial = text("thinking");
                let events = if initial.is_empty() {
                    vec![]
                } else {
                    vec![ModelEvent::ThinkingDelta { text: initial }]
                };
                (
                    Block::Thinking {
                        signature: text("signature"),
                    },
                    events,
                )
            }
            Some("redacted_thinking") => (
                Block::Other,
                vec![ModelEvent::RedactedThinking { data: text("data") }],
            ),
            Some("tool_use") => (
                Block::ToolUse {
                    id: text("id"),
                    name: text("name"),
                    json: String::new(),
                },
                vec![],
            ),
            _ => (Block::Other, vec![]),
        };
        self.blocks.insert(index, state);
        events
    }

    fn block_delta(&mut self, index: u64, delta: &Value) -> Vec<ModelEvent> {
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        match (
            delta.get("type").and_then(Value::as_str),
            self.blocks.get_mut(&index),
        ) {
            (Some("text_delta"), _) if !field("text").is_empty() => {
                vec![ModelEvent::TextDelta {
                    text: field("text").to_owned(),
                }]
            }
            (Some("thinking_delta"), _) if !field("thinking").is_empty() => {
                vec![ModelEvent::ThinkingDelta {
                    text: field("thinking").to_owned(),
                }]
            }
            (Some("signature_delta"), Some(Block::Thinking { signature })) => {
                signature.push_str(field("signature"));
                vec![]
            }
            (Some("input_json_delta"), Some(Block::ToolUse { json, .. })) => {
                json.push_str(field("partial_json"));
                vec![]
            }
            _ => vec![],
        }
    }

    fn block_stop(&mut self, index: u64) -> Vec<ModelEvent> {
        match self.blocks.remove(&index) {
            Some(Block::Thinking { signature }) if !signature.is_empty() => {
                vec![ModelEvent::ThinkingSignature { signature }]
            }
            Some(Block::ToolUse { id, name, json }) => {
                vec![ModelEvent::ToolCall(ToolCallRequest::new(id, name, &json))]
            }
            _ => vec![],
        }
    }

    fn complete(&mut self) -> Vec<ModelEvent> {
        self.stopped = true;
        let reason = match self.stop_reason.as_deref() {
            Some("max_tokens") => FinishReason::MaxTokens,
            Some("tool_use") => FinishReason::ToolUse,
            Some("refusal") => FinishReason::Refusal,
            _ => FinishReason::EndTurn,
        };
        vec![
            ModelEvent::Usage { usage: self.usage },
            ModelEvent::Finished { reason },
        ]
    }
}

/// The error an Anthropic error payload describes (`{"type":"error","error":{type,message}}`).
pub(crate) fn error_from(payload: &Value) -> ModelError {
    let error = payload.get("error").unwrap_or(payload);
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| clip(&payload.to_string()));
    ModelError::Api {
        status: None,
        message: format!("{message} [{kind}]"),
    }
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        if event.data.trim().is_empty() {
            return Ok(Vec::new());
        }
        let payload = parse_json("the Messages stream", &event.data)?;
        let index = payload.get("index").and_then(Value::as_u64).unwrap_or(0);
        let kind = payload
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event);
        Ok(match kind {
            "message_start" => {
                if let Some(usage) = payload.pointer("/message/usage") {
                    self.read_usage(usage);
                }
                vec![]
            }
            "content_block_start" => match payload.get("content_block") {
                Some(block) => self.block_start(index, block),
                None => vec![],
            },
            "content_block_delta" => match payload.get("delta") {
                Some(delta) => self.block_delta(index, delta),
                None => vec![],
            },
            "content_block_stop" => self.block_stop(index),
            "message_delta" => {
                if let Some(reason) = payload
                    .pointer("/delta/stop_reason")
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = payload.get("usage") {
                    self.read_usage(usage);
                }
                vec![]
            }
            "message_stop" => self.complete(),
            "error" => return Err(error_from(&payload)),
            _ => vec![],
        })
    }

    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.stopped {
            Ok(Vec::new())
        } else {
            Err(ModelError::Protocol(
                "the response ended before message_stop".to_owned(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(lines: &[(&str, &str)]) -> Vec<Result<Vec<ModelEvent>, ModelError>> {
        let mut decoder = Decoder::new();
        lines
            .iter()
            .map(|(event, data)| {
                decoder.feed(&SseEvent {
                    event: (*event).to_owned(),
                    data: (*data).to_owned(),
                })
            })
            .collect()
    }

    #[test]
    fn a_mid_stream_error_event_is_an_error_with_its_type() {
        let results = feed_all(&[
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#,
            ),
            (
                "error",
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
        ]);
        assert_eq!(
            results[1],
            Err(ModelError::Api {
                status: None,
                message: "Overloaded [overloaded_error]".into()
            })
        );
    }

    #[test]
    fn stop_sequence_ends_the_turn_and_a_missing_message_stop_is_an_error() {
        let results = feed_all(&[
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"stop_sequence"},"usage":{"output_tokens":2}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ]);
        assert_eq!(
            results[1].as_ref().unwrap().last(),
            Some(&ModelEvent::Finished {
                reason: FinishReason::EndTurn
            })
        );
        let mut cut = Decoder::new();
        assert!(cut.finish().is_err());
    }
}
