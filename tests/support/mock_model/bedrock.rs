//! The event streams the mock plays for Amazon Bedrock, as binary frames: ConverseStream's
//! events (with the random-length `p` padding the service adds), and InvokeModelWithResponseStream's
//! `chunk` frames, each an Anthropic Messages event base64-encoded.

use super::{MockReply, Part, Stop, sse};
use crate::aws::event_frame;
use base64::Engine;
use serde_json::{Value, json};

/// The padding the service adds to each payload (its length varies with the event).
fn padded(mut payload: Value, seed: usize) -> Value {
    let pad = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123";
    payload["p"] = json!(&pad[..(seed * 7) % pad.len()]);
    payload
}

/// The ConverseStream events of a reply.
pub fn converse_frames(reply: &MockReply) -> Vec<Vec<u8>> {
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut push = |event: &str, payload: Value| {
        let seed = frames.len();
        frames.push(event_frame(event, &padded(payload, seed)));
    };
    push("messageStart", json!({"role": "assistant"}));
    for (index, part) in reply.parts.iter().enumerate() {
        let delta = |delta: Value| json!({"contentBlockIndex": index, "delta": delta});
        match part {
            Part::Text(text) => {
                for piece in sse::pieces(text, reply.piece) {
                    push("contentBlockDelta", delta(json!({"text": piece})));
                }
            }
            Part::Thinking { text, signature } => {
                for piece in sse::pieces(text, reply.piece) {
                    push(
                        "contentBlockDelta",
                        delta(json!({"reasoningContent": {"text": piece}})),
                    );
                }
                push(
                    "contentBlockDelta",
                    delta(json!({"reasoningContent": {"signature": signature}})),
                );
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                push(
                    "contentBlockStart",
                    json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": id, "name": name}}}),
                );
                for fragment in sse::thirds(arguments) {
                    push(
                        "contentBlockDelta",
                        delta(json!({"toolUse": {"input": fragment}})),
                    );
                }
            }
        }
        push("contentBlockStop", json!({"contentBlockIndex": index}));
    }
    let stop = match reply.stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
        Stop::MaxTokens => "max_tokens",
        Stop::Refusal => "content_filtered",
    };
    push("messageStop", json!({"stopReason": stop}));
    let [input, output, cache_read, cache_write] = reply.usage;
    push(
        "metadata",
        json!({
            "usage": {"inputTokens": input, "outputTokens": output, "totalTokens": input + output,
                      "cacheReadInputTokens": cache_read, "cacheWriteInputTokens": cache_write},
            "metrics": {"latencyMs": 12},
        }),
    );
    frames
}

/// The InvokeModelWithResponseStream frames of a Claude reply: Anthropic's events, each the
/// base64 `bytes` of a `chunk` frame.
pub fn invoke_frames(reply: &MockReply) -> Vec<Vec<u8>> {
    sse::anthropic_events(reply)
        .iter()
        .filter_map(|event| {
            let data = event.lines().find_map(|line| line.strip_prefix("data: "))?;
            let bytes = base64::engine::general_purpose::STANDARD.encode(data);
            Some(event_frame("chunk", &json!({"bytes": bytes})))
        })
        .collect()
}
