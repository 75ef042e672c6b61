//! Decoding streamed model responses: a body cut into events ([`framing`]) — SSE events
//! ([`sse`]) or, for Bedrock, event-stream frames — and one [`StreamDecoder`] per wire
//! format — [`openai_chat`] (Chat Completions and every compatible server), [`anthropic`]
//! (Messages) and [`openai_responses`] (Responses), and with the `gemini` feature `gemini`
//! (Gemini's and Vertex AI's `streamGenerateContent`); with the `bedrock` feature, the framing of
//! AWS's binary event stream (`eventstream`) and Bedrock's ConverseStream on it (`bedrock`).
//! Decoders are pure: they turn SSE events (or frames) into [`ModelEvent`]s, so they are tested
//! against recorded streams byte for byte.

pub mod anthropic;
#[cfg(feature = "bedrock")]
#[cfg_attr(docsrs, doc(cfg(feature = "bedrock")))]
pub mod bedrock;
#[cfg(feature = "bedrock")]
#[cfg_attr(docsrs, doc(cfg(feature = "bedrock")))]
pub mod eventstream;
pub mod framing;
#[cfg(feature = "gemini")]
#[cfg_attr(docsrs, doc(cfg(feature = "gemini")))]
pub mod gemini;
mod lenient;
pub mod openai_chat;
pub mod openai_responses;
pub mod sse;

use agentry::event::Usage;
use agentry::model::{ModelError, ModelEvent};
use serde_json::Value;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (`"message"` when absent).
    pub event: String,
    /// The `data:` field (lines joined with `\n`).
    pub data: String,
}

/// Turns the events of one response (server-sent events, or the frames of a binary stream) into
/// model events.
pub trait StreamDecoder<Input = SseEvent>: Send {
    /// Takes one event.
    fn feed(&mut self, event: &Input) -> Result<Vec<ModelEvent>, ModelError>;
    /// The body ended: the last events (tool calls, usage, `Finished`), or an error when the
    /// response was cut off before it was complete.
    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError>;
}

/// Reads a JSON payload, naming the wire format when it is not JSON.
pub(crate) fn parse_json(format: &str, data: &str) -> Result<Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        ModelError::Protocol(format!(
            "{format} sent an event that is not JSON ({e}): {}",
            clip(data)
        ))
    })
}

/// What a front-end shows when the provider's content filter (Azure's, OpenAI's) stopped the
/// answer: a refusal, and why.
pub(crate) fn content_filtered() -> ModelEvent {
    ModelEvent::Notice {
        message: "the provider's content filter stopped the answer".to_owned(),
    }
}

/// At most 200 characters of a payload, for error messages.
pub(crate) fn clip(text: &str) -> String {
    agentry::text::clip(text, 200)
}

/// A token count from a JSON field (absent or null is 0).
pub(crate) fn count(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// The usage an OpenAI-shaped `usage` object reports (Chat Completions and Responses).
pub(crate) fn openai_usage(
    usage: &Value,
    input_key: &str,
    output_key: &str,
    cached: &str,
) -> Usage {
    let input = count(usage, input_key);
    // DeepSeek reports cache hits in its own field; OpenAI in the details.
    let cache_read = count(usage, cached).max(count(usage, "/prompt_cache_hit_tokens"));
    Usage {
        input_tokens: input.saturating_sub(cache_read),
        output_tokens: count(usage, output_key),
        cache_read_tokens: cache_read,
        cache_write_tokens: 0,
    }
}
