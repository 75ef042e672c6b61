//! Chat Completions chunks of odd shapes, as some servers send them: a field of an unexpected
//! type reads as absent (never as an error), text with escapes reads whole, a key given twice
//! keeps its last value, and error payloads are errors whatever their shape.

use agentry::model::{FinishReason, ModelError, ModelEvent, ToolCallRequest};
use agentry_models::wire::{SseEvent, StreamDecoder, openai_chat};

fn event(data: &str) -> SseEvent {
    SseEvent {
        event: "message".into(),
        data: data.into(),
    }
}

/// The events each chunk gives, then those of `[DONE]`.
fn decode(chunks: &[&str]) -> Vec<ModelEvent> {
    let mut decoder = openai_chat::Decoder::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.feed(&event(chunk)).unwrap());
    }
    events.extend(decoder.feed(&event("[DONE]")).unwrap());
    events
}

fn text(text: &str) -> ModelEvent {
    ModelEvent::TextDelta { text: text.into() }
}

fn finished(reason: FinishReason) -> ModelEvent {
    ModelEvent::Finished { reason }
}

#[test]
fn fields_of_unexpected_types_read_as_absent() {
    let events = decode(&[
        r#"{"choices": [{"delta": {"content": 7, "reasoning": ["a"]}}]}"#,
        r#"{"choices": [{"delta": {"content": {"text": "no"}}, "finish_reason": 3}]}"#,
        r#"{"choices": [{"delta": "content"}, {"delta": {"content": "second choice"}}]}"#,
        r#"{"choices": [7, {"delta": {"content": "second choice"}}]}"#,
        r#"{"choices": {"0": {"delta": {"content": "an object"}}}}"#,
        r#"{"choices": null, "usage": 5}"#,
        r#"["choices", {"delta": {"content": "a list"}}]"#,
        r#""a string""#,
        r#"{"choices": [{"delta": {"content": "kept", "tool_calls": "none"}}]}"#,
        r#"{"choices": [{"delta": {"content": -1.5e3, "reasoning_content": true}}]}"#,
    ]);
    assert_eq!(events, vec![text("kept"), finished(FinishReason::EndTurn)]);
}

#[test]
fn escaped_and_unicode_text_reads_whole() {
    let events = decode(&[
        r#"{"choices": [{"delta": {"content": "a \"quote\"\n\u00e9\ud83d\ude00"}}]}"#,
        r#"{"choices": [{"delta": {"reasoning_content": "tab\there"}}]}"#,
        r#"{"choices": [{"delta": {"content": "ü plain"}}]}"#,
    ]);
    assert_eq!(
        events,
        vec![
            text("a \"quote\"\né😀"),
            ModelEvent::ThinkingDelta {
                text: "tab\there".into()
            },
            text("ü plain"),
            finished(FinishReason::EndTurn),
        ]
    );
}

#[test]
fn a_key_given_twice_keeps_its_last_value() {
    let events = decode(&[
        r#"{"choices": [{"delta": {"content": "first", "content": "last"}}]}"#,
        r#"{"choices": [{"delta": {}, "finish_reason": "stop", "finish_reason": "length"}]}"#,
    ]);
    assert_eq!(
        events,
        vec![text("last"), finished(FinishReason::MaxTokens)]
    );
}

#[test]
fn odd_tool_call_fragments_are_read_as_far_as_they_go() {
    let events = decode(&[
        r#"{"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "Re", "arguments": "{\"pa"}}]}}]}"#,
        r#"{"choices": [{"delta": {"tool_calls": [{"index": 1, "function": {"name": "ad", "arguments": "th\": \"x\"}"}}]}}]}"#,
        // Not an object: it still names the call at index 0, as it always did.
        r#"{"choices": [{"delta": {"tool_calls": ["odd"]}}]}"#,
        r#"{"choices": [{"delta": {"tool_calls": [{"index": "2", "function": "none"}]}}]}"#,
        r#"{"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}"#,
    ]);
    assert_eq!(
        events,
        vec![
            ModelEvent::ToolCall(ToolCallRequest::new("call_0", "", "")),
            ModelEvent::ToolCall(ToolCallRequest::new("call_b", "Read", r#"{"path": "x"}"#)),
            finished(FinishReason::ToolUse),
        ]
    );
}

#[test]
fn usage_is_read_from_an_object_only() {
    let events = decode(&[
        r#"{"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 2}}}"#,
        r#"{"choices": [], "usage": "lots"}"#,
    ]);
    let ModelEvent::Usage { usage } = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens
        ),
        (10, 3, 2)
    );
}

#[test]
fn error_payloads_are_errors_whatever_their_shape() {
    let mut decoder = openai_chat::Decoder::new();
    let error = decoder
        .feed(&event(
            r#"{"error": {"message": "overloaded", "code": "busy"}}"#,
        ))
        .unwrap_err();
    assert!(
        matches!(&error, ModelError::Api { message, .. } if message == "overloaded [busy]"),
        "{error:?}"
    );
    let null_error = decoder.feed(&event(r#"{"error": null}"#)).unwrap_err();
    assert!(
        matches!(null_error, ModelError::Api { .. }),
        "{null_error:?}"
    );
    let named = SseEvent {
        event: "error".into(),
        data: r#""the server is overloaded""#.into(),
    };
    let error = decoder.feed(&named).unwrap_err();
    assert!(
        matches!(&error, ModelError::Api { message, .. } if message.contains("overloaded")),
        "{error:?}"
    );
    let broken = decoder
        .feed(&event(r#"{"choices": [{"delta""#))
        .unwrap_err();
    assert!(
        matches!(&broken, ModelError::Protocol(message) if message.contains("not JSON")),
        "{broken:?}"
    );
}
