//! The SSE streams the mock plays, in each wire format as its service sends it: OpenAI's Chat
//! Completions and Responses, Anthropic's Messages, Gemini's `streamGenerateContent`.

use super::{MockReply, Part, Stop};
use serde_json::{Value, json};

pub(super) fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

pub(super) fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

pub(super) fn thirds(text: &str) -> Vec<String> {
    let size = text.chars().count().div_ceil(3).max(1);
    pieces(text, size)
}

/// The Chat Completions stream, as OpenAI sends it.
pub fn chat_events(reply: &MockReply) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({
                "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "mock",
                "usage": null, "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
                "obfuscation": "x",
            }),
        )
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let mut tool_index = 0;
    for part in &reply.parts {
        match part {
            Part::Text(text) => out.extend(
                pieces(text, reply.piece)
                    .iter()
                    .map(|p| chunk(json!({"content": p}), Value::Null)),
            ),
            Part::Thinking { text, .. } => out.extend(pieces(text, reply.piece).iter().map(|p| {
                chunk(
                    json!({"content": null, "reasoning_content": p}),
                    Value::Null,
                )
            })),
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.push(chunk(json!({"tool_calls": [{"index": tool_index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null));
                for fragment in thirds(arguments) {
                    out.push(chunk(json!({"tool_calls": [{"index": tool_index, "function": {"arguments": fragment}}]}), Value::Null));
                }
                tool_index += 1;
            }
        }
    }
    let finish = match reply.stop {
        Stop::EndTurn => "stop",
        Stop::ToolUse => "tool_calls",
        Stop::MaxTokens => "length",
        Stop::Refusal => "content_filter",
    };
    out.push(chunk(json!({}), json!(finish)));
    let [input, output, cache_read, _] = reply.usage;
    out.push(sse(None, &json!({
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": "mock", "choices": [],
        "usage": {"prompt_tokens": input + cache_read, "completion_tokens": output, "total_tokens": input + cache_read + output,
                  "prompt_tokens_details": {"cached_tokens": cache_read}},
    })));
    out.push("data: [DONE]\n\n".to_owned());
    out
}

/// The Messages stream, as Anthropic sends it (pings included).
pub fn anthropic_events(reply: &MockReply) -> Vec<String> {
    let [input, output, cache_read, cache_write] = reply.usage;
    let mut out = vec![sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock", "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write, "output_tokens": 1},
        }}),
    )];
    let event = |kind: &str, payload: Value| sse(Some(kind), &payload);
    for (index, part) in reply.parts.iter().enumerate() {
        let delta = |delta: Value| {
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        match part {
            Part::Text(text) => {
                out.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
                if index == 0 {
                    out.push(event("ping", json!({"type": "ping"})));
                }
                out.extend(
                    pieces(text, reply.piece)
                        .iter()
                        .map(|p| delta(json!({"type": "text_delta", "text": p}))),
                );
            }
            Part::Thinking { text, signature } => {
                out.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": "", "signature": ""}})));
                out.extend(
                    pieces(text, reply.piece)
                        .iter()
                        .map(|p| delta(json!({"type": "thinking_delta", "thinking": p}))),
                );
                out.push(delta(
                    json!({"type": "signature_delta", "signature": signature}),
                ));
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                out.push(event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
                out.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                out.extend(
                    thirds(arguments)
                        .iter()
                        .map(|f| delta(json!({"type": "input_json_delta", "partial_json": f}))),
                );
            }
        }
        out.push(event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = match reply.stop {
        Stop::EndTurn => "end_turn",
        Stop::ToolUse => "tool_use",
        Stop::MaxTokens => "max_tokens",
        Stop::Refusal => "refusal",
    };
    out.push(event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": output}})));
    out.push(event("message_stop", json!({"type": "message_stop"})));
    out
}

/// The Responses stream, as OpenAI sends it.
pub fn responses_events(reply: &MockReply) -> Vec<String> {
    let event = |kind: &str, mut payload: Value| {
        payload["type"] = json!(kind);
        sse(Some(kind), &payload)
    };
    let mut out = vec![event(
        "response.created",
        json!({"response": {"id": "resp_mock", "status": "in_progress"}}),
    )];
    for (index, part) in reply.parts.iter().enumerate() {
        match part {
            Part::Text(text) => out.extend(pieces(text, reply.piece).iter().map(|p| {
                event(
                    "response.output_text.delta",
                    json!({"output_index": index, "content_index": 0, "delta": p}),
                )
            })),
            // The summary, then the item with its encrypted content (as a request that asks
            // for `reasoning.encrypted_content` gets it), the signature standing for it.
            Part::Thinking { text, signature } => {
                out.extend(pieces(text, reply.piece).iter().map(|p| {
                    event(
                        "response.reasoning_summary_text.delta",
                        json!({"output_index": index, "summary_index": 0, "delta": p}),
                    )
                }));
                let item = json!({"type": "reasoning", "id": format!("rs_{index}"), "encrypted_content": signature,
                    "summary": [{"type": "summary_text", "text": text}]});
                out.push(event(
                    "response.output_item.done",
                    json!({"output_index": index, "item": item}),
                ));
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                let item = json!({"type": "function_call", "id": format!("fc_{index}"), "call_id": id, "name": name, "arguments": ""});
                out.push(event(
                    "response.output_item.added",
                    json!({"output_index": index, "item": item}),
                ));
                out.extend(thirds(arguments).iter().map(|f| {
                    event(
                        "response.function_call_arguments.delta",
                        json!({"output_index": index, "delta": f}),
                    )
                }));
                let mut done = item.clone();
                done["arguments"] = json!(arguments);
                out.push(event(
                    "response.output_item.done",
                    json!({"output_index": index, "item": done}),
                ));
            }
        }
    }
    let [input, output, cache_read, _] = reply.usage;
    let (kind, incomplete) = match reply.stop {
        Stop::MaxTokens => (
            "response.incomplete",
            json!({"reason": "max_output_tokens"}),
        ),
        Stop::Refusal => ("response.incomplete", json!({"reason": "content_filter"})),
        _ => ("response.completed", Value::Null),
    };
    out.push(event(kind, json!({"response": {"id": "resp_mock", "incomplete_details": incomplete,
        "usage": {"input_tokens": input + cache_read, "output_tokens": output, "input_tokens_details": {"cached_tokens": cache_read}}}})));
    out
}

/// The signature the mock puts on the first function call of a Gemini answer, as Gemini 3 does.
pub fn gemini_call_signature(id: &str) -> String {
    format!("Z2VtaW5pLXNpZ25hdHVyZQ{id}")
}

/// The `streamGenerateContent?alt=sse` stream, as Gemini sends it: a candidate's parts per
/// event, the thought summary's signature on its last piece, the first call's signature on it,
/// usage in every event and the finish reason in the last.
pub fn gemini_events(reply: &MockReply) -> Vec<String> {
    let [input, output, cache_read, _] = reply.usage;
    let usage = json!({"promptTokenCount": input + cache_read, "candidatesTokenCount": output,
        "cachedContentTokenCount": cache_read, "totalTokenCount": input + cache_read + output});
    let event = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        sse(
            None,
            &json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "mock", "responseId": "mock"}),
        )
    };
    let mut out = Vec::new();
    let mut signed_a_call = false;
    for part in &reply.parts {
        match part {
            Part::Text(text) => out.extend(
                pieces(text, reply.piece)
                    .iter()
                    .map(|p| event(json!([{"text": p}]), None)),
            ),
            Part::Thinking { text, signature } => {
                let thoughts = pieces(text, reply.piece);
                for (i, p) in thoughts.iter().enumerate() {
                    let mut thought = json!({"text": p, "thought": true});
                    if i + 1 == thoughts.len() {
                        thought["thoughtSignature"] = json!(signature);
                    }
                    out.push(event(json!([thought]), None));
                }
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                let args: Value = serde_json::from_str(arguments).unwrap_or(json!({}));
                let mut call = json!({"functionCall": {"id": id, "name": name, "args": args}});
                if !signed_a_call {
                    call["thoughtSignature"] = json!(gemini_call_signature(id));
                    signed_a_call = true;
                }
                out.push(event(json!([call]), None));
            }
        }
    }
    let finish = match reply.stop {
        Stop::EndTurn | Stop::ToolUse => "STOP",
        Stop::MaxTokens => "MAX_TOKENS",
        Stop::Refusal => "SAFETY",
    };
    out.push(event(json!([{"text": ""}]), Some(finish)));
    out
}
