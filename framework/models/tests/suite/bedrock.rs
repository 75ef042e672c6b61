//! Bedrock's streams decoded from every capture in `tests/fixtures/cloud-streams/bedrock/`
//! (ConverseStream, and InvokeModelWithResponseStream for Claude), whole and in 7-byte pieces:
//! the text, reasoning, signatures, calls with their arguments, usage (cache counts included) and
//! stop reason each one holds; and the service's errors in the stream.

use agentry::model::{FinishReason, ModelError, ModelEvent, ToolArguments};
use agentry_models::wire::StreamDecoder;
use agentry_models::wire::bedrock::{ConverseDecoder, InvokeDecoder};
use agentry_models::wire::eventstream::{Frame, FrameReader};
use agentry_tests::aws::{frame, string_headers};
use serde_json::{Value, json};
use std::path::PathBuf;

/// What a decoded response amounts to.
#[derive(Debug, Default, PartialEq)]
struct Decoded {
    text: String,
    thinking_chars: usize,
    signatures: usize,
    redacted: usize,
    calls: Vec<(String, String, Value)>,
    usage: [u64; 4],
    finish: Option<FinishReason>,
}

/// Decodes a ConverseStream `body` handed over in pieces of `piece` bytes.
fn decode(body: &[u8], piece: usize) -> Result<Decoded, ModelError> {
    decode_with(ConverseDecoder::new(), body, piece)
}

/// Decodes `body` with `decoder`, handed over in pieces of `piece` bytes.
fn decode_with(
    mut decoder: impl StreamDecoder<Frame>,
    body: &[u8],
    piece: usize,
) -> Result<Decoded, ModelError> {
    let mut reader = FrameReader::new();
    let mut events = Vec::new();
    for chunk in body.chunks(piece) {
        reader.push(chunk);
        while let Some(frame) = reader.next_frame()? {
            events.extend(decoder.feed(&frame)?);
        }
    }
    reader.finish()?;
    events.extend(decoder.finish()?);
    let mut decoded = Decoded::default();
    for event in events {
        match event {
            ModelEvent::TextDelta { text } => decoded.text.push_str(&text),
            ModelEvent::ThinkingDelta { text } => decoded.thinking_chars += text.chars().count(),
            ModelEvent::ThinkingSignature { .. } => decoded.signatures += 1,
            ModelEvent::RedactedThinking { .. } => decoded.redacted += 1,
            ModelEvent::ToolCall(call) => {
                let ToolArguments::Json(arguments) = call.arguments else {
                    panic!("arguments that are not JSON: {:?}", call.arguments);
                };
                decoded
                    .calls
                    .push((call.id.to_string(), call.name, arguments));
            }
            ModelEvent::Usage { usage } => {
                decoded.usage = [
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                ];
            }
            ModelEvent::Finished { reason } => decoded.finish = Some(reason),
            ModelEvent::Notice { .. } => {}
        }
    }
    Ok(decoded)
}

fn capture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cloud-streams/bedrock")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What each capture holds: its text's length in characters and its start, reasoning
/// characters, signatures, redacted blocks, calls, usage (input, output, cache read, cache
/// write) and how it ended.
struct Holds {
    text_chars: usize,
    text_start: &'static str,
    thinking_chars: usize,
    signatures: usize,
    redacted: usize,
    calls: Vec<(&'static str, &'static str, Value)>,
    usage: [u64; 4],
    finish: FinishReason,
}

/// A response of text alone.
fn text_only(
    text_chars: usize,
    text_start: &'static str,
    usage: [u64; 4],
    finish: FinishReason,
) -> Holds {
    Holds {
        text_chars,
        text_start,
        thinking_chars: 0,
        signatures: 0,
        redacted: 0,
        calls: Vec::new(),
        usage,
        finish,
    }
}

/// Checks that `decoded` holds what `expected` says.
fn check(name: &str, decoded: &Decoded, expected: Holds) {
    assert_eq!(decoded.text.chars().count(), expected.text_chars, "{name}");
    assert!(
        decoded.text.starts_with(expected.text_start),
        "{name}: {:?}",
        decoded.text
    );
    assert_eq!(decoded.thinking_chars, expected.thinking_chars, "{name}");
    assert_eq!(decoded.signatures, expected.signatures, "{name}");
    assert_eq!(decoded.redacted, expected.redacted, "{name}");
    let calls: Vec<(String, String, Value)> = expected
        .calls
        .into_iter()
        .map(|(id, name, arguments)| (id.to_owned(), name.to_owned(), arguments))
        .collect();
    assert_eq!(decoded.calls, calls, "{name}");
    assert_eq!(decoded.usage, expected.usage, "{name}");
    assert_eq!(decoded.finish, Some(expected.finish), "{name}");
}

fn holds(name: &str) -> Holds {
    let text = text_only;
    match name {
        "converse-claude-3-sonnet-text-then-tool-use.bin" => Holds {
            calls: vec![(
                "tooluse_HA9wsJ32RhOvn8XgIUDpGA",
                "fetch_concept",
                json!({"concept": "distributed tracing"}),
            )],
            ..text(
                96,
                "Okay, let me use the tool",
                [259, 64, 0, 0],
                FinishReason::ToolUse,
            )
        },
        "converse-claude-3-sonnet-tool-use-streamed-input.bin" => Holds {
            calls: vec![(
                "tooluse_FQQ2AuomSWSry_S27YpRbA",
                "get_cities_list",
                json!({"cities": ["Tokyo", "Osaka", "Kyoto", "Hiroshima", "Nara", "Yokohama", "Sapporo", "Fukuoka", "Sendai", "Nagoya"]}),
            )],
            ..text(0, "", [295, 43, 0, 0], FinishReason::ToolUse)
        },
        "converse-claude-3.7-prompt-cache-read.bin" => text(
            1240,
            "# Machine Learning (ML) Application",
            [12, 250, 1028, 0],
            FinishReason::EndTurn,
        ),
        "converse-claude-3.7-prompt-cache-write.bin" => text(
            1134,
            "# Service\n\nA service is",
            [11, 236, 0, 1028],
            FinishReason::EndTurn,
        ),
        "converse-claude-3.7-redacted-reasoning.bin" => Holds {
            redacted: 2,
            ..text(
                359,
                "I notice you've sent",
                [92, 253, 0, 0],
                FinishReason::EndTurn,
            )
        },
        "converse-claude-sonnet-4-reasoning-signature.bin" => Holds {
            thinking_chars: 193,
            signatures: 1,
            ..text(
                55,
                "Hello! It's nice",
                [36, 73, 0, 0],
                FinishReason::EndTurn,
            )
        },
        "converse-gpt-oss-120b-reasoning-empty-delta.bin" => Holds {
            thinking_chars: 119,
            ..text(
                32,
                "Hello! How can I help you today?",
                [70, 43, 0, 0],
                FinishReason::EndTurn,
            )
        },
        // The code interpreter runs at the service: only `final_result` is the agent's call.
        "converse-nova-2-lite-server-tool-code-interpreter.bin" => Holds {
            calls: vec![(
                "tooluse_ptgCcZ0uQu-UUMz0abqoWw",
                "final_result",
                json!({"result": 7006652.0}),
            )],
            ..text(0, "", [1002, 59, 0, 0], FinishReason::ToolUse)
        },
        "converse-nova-micro-parallel-tool-use.bin" => Holds {
            calls: vec![
                (
                    "tooluse_JZ11QcxSQ3m3xacMQKVIKw",
                    "get_current_weather",
                    json!({"location": "Seattle"}),
                ),
                (
                    "tooluse_-hxBEEwGRc-VQqC2i7SFqg",
                    "get_current_weather",
                    json!({"location": "San Francisco"}),
                ),
            ],
            ..text(
                254,
                "<thinking> The User",
                [415, 202, 0, 0],
                FinishReason::ToolUse,
            )
        },
        "converse-nova-micro-text.bin" => text(
            375,
            "The capital of France is Paris.",
            [13, 82, 0, 0],
            FinishReason::EndTurn,
        ),
        other => panic!("{other}: a capture the test does not know; add what it holds"),
    }
}

#[test]
fn every_converse_capture_decodes_to_what_it_holds() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cloud-streams/bedrock");
    let mut read = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !(name.starts_with("converse-") && name.ends_with(".bin")) {
            continue;
        }
        let body = capture(&name);
        let decoded = decode(&body, body.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
        check(&name, &decoded, holds(&name));
        assert_eq!(
            decode(&body, 7).unwrap(),
            decoded,
            "{name}, in 7-byte pieces"
        );
        read += 1;
    }
    assert_eq!(read, 10, "every ConverseStream capture was read");
}

#[test]
fn every_invoke_capture_decodes_through_the_messages_decoder() {
    let cases = [
        (
            "invoke-claude-3-sonnet-2024-no-padding.bin",
            text_only(76, "Hobbits embark", [21, 22, 0, 0], FinishReason::EndTurn),
        ),
        (
            "invoke-claude-3-sonnet-tcp-chunked.bin",
            text_only(
                130,
                "212 degrees Fahrenheit",
                [21, 34, 0, 0],
                FinishReason::EndTurn,
            ),
        ),
        (
            "invoke-claude-3.5-sonnet-parallel-tool-use.bin",
            Holds {
                calls: vec![
                    (
                        "toolu_bdrk_01KatiGijVFb9yuMPcnVk38e",
                        "get_current_weather",
                        json!({"location": "Seattle"}),
                    ),
                    (
                        "toolu_bdrk_01Tzb35EydKHWz4UZP3puTbF",
                        "get_current_weather",
                        json!({"location": "San Francisco"}),
                    ),
                ],
                ..text_only(
                    187,
                    "Certainly! I'll use",
                    [392, 134, 0, 0],
                    FinishReason::ToolUse,
                )
            },
        ),
        (
            "invoke-claude-sonnet-4-thinking-signature.bin",
            Holds {
                thinking_chars: 2331,
                signatures: 1,
                ..text_only(
                    200,
                    "Looking at numbers",
                    [66, 1605, 0, 0],
                    FinishReason::EndTurn,
                )
            },
        ),
    ];
    for (name, expected) in cases {
        let body = capture(name);
        let decoded = decode_with(InvokeDecoder::new(), &body, body.len())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        check(name, &decoded, expected);
        let pieces = decode_with(InvokeDecoder::new(), &body, 7).unwrap();
        assert_eq!(pieces, decoded, "{name}, in 7-byte pieces");
    }
}

#[test]
fn an_error_in_the_stream_is_the_service_error_named_by_its_type() {
    let throttled = frame(
        &string_headers(&[
            (":message-type", "exception"),
            (":exception-type", "throttlingException"),
            (":content-type", "application/json"),
        ]),
        br#"{"message":"Too many requests, please wait before trying again."}"#,
    );
    // The error arrives after the first three frames of a real response.
    let body = capture("converse-nova-micro-text.bin");
    let mut stream = body[..body.len() - bytes_after(&body, 3)].to_vec();
    stream.extend_from_slice(&throttled);
    let error = decode(&stream, 11).unwrap_err();
    assert_eq!(
        error,
        ModelError::Api {
            status: None,
            message: "Too many requests, please wait before trying again. [throttlingException]"
                .into()
        }
    );
}

/// How many bytes of `body` are left after its first `frames` frames.
fn bytes_after(body: &[u8], frames: usize) -> usize {
    let mut at = 0;
    for _ in 0..frames {
        let total = u32::from_be_bytes(body[at..at + 4].try_into().unwrap()) as usize;
        at += total;
    }
    body.len() - at
}

#[test]
fn a_response_cut_before_message_stop_is_an_error() {
    let body = capture("converse-nova-micro-text.bin");
    let left = bytes_after(&body, 30);
    let error = decode(&body[..body.len() - left], 64).unwrap_err();
    assert!(error.to_string().contains("before messageStop"), "{error}");
}

#[test]
fn cache_counts_are_read_under_either_name() {
    let event = |kind: &str, payload: &str| {
        frame(
            &string_headers(&[(":message-type", "event"), (":event-type", kind)]),
            payload.as_bytes(),
        )
    };
    let mut body = event("messageStop", r#"{"stopReason":"end_turn"}"#);
    body.extend(event(
        "metadata",
        r#"{"usage":{"inputTokens":5,"outputTokens":7,"cacheReadInputTokenCount":11,"cacheWriteInputTokenCount":13}}"#,
    ));
    let decoded = decode(&body, body.len()).unwrap();
    assert_eq!(decoded.usage, [5, 7, 11, 13]);
    assert_eq!(decoded.finish, Some(FinishReason::EndTurn));
}
