//! Gemini's `streamGenerateContent` stream (`?alt=sse`), from the Gemini API and from Vertex AI:
//! each event a `GenerateContentResponse` whose candidate's parts are answer text, thought
//! summaries (`thought: true`), or function calls.
//!
//! Read as real streams send it: function calls whole (several in one event, or one per event,
//! with an `id` or without one), or, on Vertex AI, streamed — a call opened with `willContinue`,
//! its arguments in `partialArgs` by JSON path, closed by an empty `functionCall`; each part's
//! `thoughtSignature` (on a thought, on a call, on an empty text part) kept for the part it came
//! on; usage in every event or only the last (Vertex), the cached and thinking counts in it;
//! no candidate index and a `createTime` (Vertex); parts the service ran itself (code execution)
//! left out; an `error` object in the stream an error; a blocked prompt a refusal.
//!
//! A signature comes out as [`ModelEvent::ThinkingSignature`] right after the part it belongs
//! to: on a thought, it closes that reasoning; after a call or answer text, it stands on its
//! own (a reasoning block of no text), which the Gemini request puts back on the part before it.

use super::{SseEvent, StreamDecoder, clip};
use crate::tool_names::Originals;
use agentry::event::Usage;
use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Decodes one `streamGenerateContent` response.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Tools' names by the names Gemini was given, where they differ.
    originals: Originals,
    /// A call whose arguments are still streaming (Vertex AI), with its part's signature.
    streaming: Option<Streaming>,
    /// What the last event out was, to keep a signature with its own part.
    last: Last,
    calls: usize,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
}

#[derive(Debug)]
struct Streaming {
    id: String,
    name: String,
    /// The arguments so far (an object).
    args: Value,
    signature: Option<String>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Last {
    #[default]
    Nothing,
    Thought,
    Other,
}

impl Decoder {
    /// A decoder for a new response.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that gives calls back their tools' own names (`originals`: by the names Gemini
    /// was given).
    pub fn with_names(originals: Originals) -> Self {
        Self {
            originals,
            ..Self::default()
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Chunk {
    #[serde(default)]
    candidates: Vec<Candidate>,
    usage_metadata: Option<UsageMetadata>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<ApiError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    /// A name (`STOP`), or its number where enums are sent as integers.
    finish_reason: Option<Value>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    thought_signature: Option<String>,
    function_call: Option<FunctionCall>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FunctionCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Map<String, Value>>,
    partial_args: Option<Vec<PartialArg>>,
    #[serde(default)]
    will_continue: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartialArg {
    json_path: String,
    string_value: Option<String>,
    number_value: Option<serde_json::Number>,
    bool_value: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    null_value: bool,
}

/// Whether a field is there at all (`nullValue` carries `null`).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    cached_content_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
    #[serde(default)]
    tool_use_prompt_token_count: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

#[derive(Deserialize)]
struct ApiError {
    code: Option<u64>,
    message: Option<String>,
    status: Option<String>,
}

impl StreamDecoder for Decoder {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|e| {
            ModelError::Protocol(format!(
                "Gemini sent an event that cannot be read ({e}): {}",
                clip(&event.data)
            ))
        })?;
        if let Some(error) = chunk.error {
            let status = error.status.map(|s| format!(" [{s}]")).unwrap_or_default();
            return Err(ModelError::Api {
                status: error.code.and_then(|code| u16::try_from(code).ok()),
                message: format!(
                    "{}{status}",
                    error.message.as_deref().unwrap_or("no message")
                ),
            });
        }
        if let Some(usage) = chunk.usage_metadata {
            self.usage = Some(read_usage(&usage));
        }
        if let Some(reason) = chunk.prompt_feedback.and_then(|f| f.block_reason) {
            self.finish = Some(FinishReason::Refusal);
            return Ok(vec![ModelEvent::Notice {
                message: format!("Gemini blocked the prompt ({reason})"),
            }]);
        }
        let mut events = Vec::new();
        // Only the first candidate is asked for.
        if let Some(candidate) = chunk.candidates.into_iter().next() {
            for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
                self.part(part, &mut events)?;
            }
            if let Some(reason) = candidate.finish_reason {
                self.finish = Some(finish_reason(&reason));
            }
        }
        Ok(events)
    }

    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        let Some(mut reason) = self.finish.take() else {
            return Err(ModelError::Protocol(
                "the response ended before Gemini gave a finish reason".to_owned(),
            ));
        };
        let mut events = Vec::new();
        if let Some(call) = self.streaming.take() {
            self.close(call, &mut events);
        }
        if reason == FinishReason::EndTurn && self.calls > 0 {
            reason = FinishReason::ToolUse;
        }
        events.extend(self.usage.take().map(|usage| ModelEvent::Usage { usage }));
        events.push(ModelEvent::Finished { reason });
        Ok(events)
    }
}

impl Decoder {
    fn part(&mut self, part: Part, events: &mut Vec<ModelEvent>) -> Result<(), ModelError> {
        let signature = part.thought_signature;
        if let Some(call) = part.function_call {
            return self.function_call(call, signature, events);
        }
        let Some(text) = part.text else {
            // A part the service ran itself (code and its result), kept off the answer.
            return Ok(());
        };
        if part.thought {
            if !text.is_empty() {
                events.push(ModelEvent::ThinkingDelta { text });
            }
            self.last = Last::Thought;
            if let Some(signature) = signature {
                events.push(ModelEvent::ThinkingSignature { signature });
                self.last = Last::Other;
            }
            return Ok(());
        }
        // An empty text part that carries only a signature after a thought is a part of its
        // own: an empty text keeps the signature off the thought.
        if !text.is_empty() || (signature.is_some() && self.last == Last::Thought) {
            events.push(ModelEvent::TextDelta { text });
            self.last = Last::Other;
        }
        if let Some(signature) = signature {
            events.push(ModelEvent::ThinkingSignature { signature });
            self.last = Last::Other;
        }
        Ok(())
    }

    fn function_call(
        &mut self,
        call: FunctionCall,
        signature: Option<String>,
        events: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        if let Some(partial) = call.partial_args {
            let streaming = self.streaming.as_mut().ok_or_else(|| {
                ModelError::Protocol(
                    "Gemini streamed arguments for a function call it had not begun".to_owned(),
                )
            })?;
            for arg in partial {
                set_path(&mut streaming.args, &arg)?;
            }
            return Ok(());
        }
        let Some(name) = call.name else {
            // An empty call closes the one whose arguments streamed.
            if let Some(streaming) = self.streaming.take() {
                self.close(streaming, events);
            }
            return Ok(());
        };
        if let Some(open) = self.streaming.take() {
            self.close(open, events);
        }
        let id = call
            .id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("call_{:08x}{}", rand::random::<u32>(), self.calls));
        let name = self.originals.restore(name);
        let streaming = Streaming {
            id,
            name,
            args: Value::Object(call.args.unwrap_or_default()),
            signature,
        };
        if call.will_continue {
            self.streaming = Some(streaming);
        } else {
            self.close(streaming, events);
        }
        Ok(())
    }

    /// A whole call out, and its part's signature after it.
    fn close(&mut self, call: Streaming, events: &mut Vec<ModelEvent>) {
        self.calls += 1;
        let arguments = call.args.to_string();
        events.push(ModelEvent::ToolCall(ToolCallRequest::new(
            call.id, call.name, &arguments,
        )));
        if let Some(signature) = call.signature {
            events.push(ModelEvent::ThinkingSignature { signature });
        }
        self.last = Last::Other;
    }
}

/// Sets (or, for strings, extends) the value at a `partialArgs` path: `$.a.b`, `$.list[2]`.
fn set_path(args: &mut Value, arg: &PartialArg) -> Result<(), ModelError> {
    let bad = || {
        ModelError::Protocol(format!(
            "Gemini streamed an argument at a path it cannot be put at: {}",
            clip(&arg.json_path)
        ))
    };
    let path = arg.json_path.strip_prefix('$').ok_or_else(bad)?;
    let mut steps: Vec<Step> = Vec::new();
    for segment in path.split('.').skip(1) {
        let (key, indices) = match segment.find('[') {
            Some(at) => (&segment[..at], &segment[at..]),
            None => (segment, ""),
        };
        steps.push(Step::Key(key.to_owned()));
        for index in indices.split('[').filter(|s| !s.is_empty()) {
            let index: usize = index.trim_end_matches(']').parse().map_err(|_| bad())?;
            steps.push(Step::Index(index));
        }
    }
    let mut slot = args;
    for step in &steps {
        slot = match step {
            Step::Key(key) => {
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                slot.as_object_mut()
                    .ok_or_else(bad)?
                    .entry(key.clone())
                    .or_insert(Value::Null)
            }
            Step::Index(index) => {
                if !slot.is_array() {
                    *slot = Value::Array(Vec::new());
                }
                let list = slot.as_array_mut().ok_or_else(bad)?;
                if list.len() <= *index {
                    list.resize(index + 1, Value::Null);
                }
                &mut list[*index]
            }
        };
    }
    match (&arg.string_value, slot.as_str()) {
        (Some(more), Some(so_far)) => *slot = Value::String(format!("{so_far}{more}")),
        (Some(text), None) => *slot = Value::String(text.clone()),
        (None, _) => {
            if let Some(number) = &arg.number_value {
                *slot = Value::Number(number.clone());
            } else if let Some(flag) = arg.bool_value {
                *slot = Value::Bool(flag);
            } else if arg.null_value {
                *slot = Value::Null;
            }
        }
    }
    Ok(())
}

enum Step {
    Key(String),
    Index(usize),
}

/// Usage: the prompt's count includes the cached tokens; thinking is output.
fn read_usage(usage: &UsageMetadata) -> Usage {
    let prompt = usage.prompt_token_count + usage.tool_use_prompt_token_count;
    Usage {
        input_tokens: prompt.saturating_sub(usage.cached_content_token_count),
        output_tokens: usage.candidates_token_count + usage.thoughts_token_count,
        cache_read_tokens: usage.cached_content_token_count,
        cache_write_tokens: 0,
    }
}

/// How a `finishReason` ends the response (its name, or its number in Google's enum).
fn finish_reason(reason: &Value) -> FinishReason {
    const NAMES: [&str; 12] = [
        "FINISH_REASON_UNSPECIFIED",
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
        "RECITATION",
        "OTHER",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "MALFORMED_FUNCTION_CALL",
        "IMAGE_SAFETY",
        "UNEXPECTED_TOOL_CALL",
    ];
    let name = match reason {
        Value::String(name) => name.as_str(),
        Value::Number(number) => number
            .as_u64()
            .and_then(|n| NAMES.get(usize::try_from(n).ok()?).copied())
            .unwrap_or("OTHER"),
        _ => "OTHER",
    };
    match name {
        "MAX_TOKENS" => FinishReason::MaxTokens,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY"
        | "LANGUAGE" => FinishReason::Refusal,
        _ => FinishReason::EndTurn,
    }
}
