//! Gemini's stream decoded from every capture of it in `tests/fixtures/cloud-streams/` (the
//! Gemini API's and Vertex AI's, SSE as recorded; the captures kept as JSON payloads one per line
//! or as a JSON array framed as the SSE events they were), whole, a byte at a time and in 7-byte
//! pieces: the text, thought summaries, signatures, calls with their arguments (streamed ones
//! included), usage and finish reason each one holds.

use agentry::model::{FinishReason, ModelEvent, ToolArguments};
use agentry_models::wire::{gemini, sse};
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// What a decoded response amounts to.
#[derive(Debug, Default, PartialEq)]
struct Decoded {
    text: String,
    thought_chars: usize,
    signatures: usize,
    /// Each call's id (a made-up `call_…` one shown as `None`), name and arguments.
    calls: Vec<(Option<String>, String, Value)>,
    /// Input, output and cache-read tokens.
    usage: [u64; 3],
    finish: Option<FinishReason>,
    error: Option<String>,
}

/// The capture as the SSE body it was: `.sse` files as they are, a payload per line or a JSON
/// array's elements each made a `data:` event.
fn body(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cloud-streams")
        .join(name);
    let raw = std::fs::read_to_string(path).unwrap();
    if name.ends_with(".sse") {
        return raw.into_bytes();
    }
    let payloads: Vec<Value> = if name.ends_with(".json") {
        serde_json::from_str(&raw).unwrap()
    } else {
        raw.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    payloads
        .iter()
        .map(|payload| format!("data: {payload}\r\n\r\n"))
        .collect::<String>()
        .into_bytes()
}

async fn decode(name: &str, piece: usize) -> Decoded {
    let mut stream = super::decode_in_pieces(&body(name), piece, gemini::Decoder::new());
    let mut out = Decoded::default();
    while let Some(item) = stream.next().await {
        match item {
            Ok(ModelEvent::TextDelta { text }) => out.text.push_str(&text),
            Ok(ModelEvent::ThinkingDelta { text }) => out.thought_chars += text.chars().count(),
            Ok(ModelEvent::ThinkingSignature { signature }) => {
                assert!(signature.len() > 20, "{signature}");
                out.signatures += 1;
            }
            Ok(ModelEvent::ToolCall(call)) => {
                let ToolArguments::Json(arguments) = call.arguments else {
                    panic!("arguments that are not JSON: {:?}", call.arguments);
                };
                let id = call.id.to_string();
                let id = (!id.starts_with("call_")).then_some(id);
                out.calls.push((id, call.name, arguments));
            }
            Ok(ModelEvent::Usage { usage }) => {
                out.usage = [
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                ];
            }
            Ok(ModelEvent::Finished { reason }) => out.finish = Some(reason),
            Ok(ModelEvent::RedactedThinking { .. } | ModelEvent::Notice { .. }) => {}
            Err(error) => out.error = Some(error.to_string()),
        }
    }
    out
}

fn call(name: &str, arguments: Value) -> (Option<String>, String, Value) {
    (None, name.to_owned(), arguments)
}

/// What each capture holds, read from it by hand.
fn expected() -> Vec<(&'static str, Decoded)> {
    let text = |text: &str, usage: [u64; 3]| Decoded {
        text: text.to_owned(),
        usage,
        finish: Some(FinishReason::EndTurn),
        ..Decoded::default()
    };
    vec![
        // The service's own code run is left out; the tool-use prompt counts as input.
        (
            "gemini/code-execution-gemini-2.5-flash.sse",
            text("", [796, 717, 0]),
        ),
        (
            "gemini/functioncall-thoughtsig-gemini-3-pro.sse",
            Decoded {
                signatures: 1,
                calls: vec![call("get_country", json!({}))],
                usage: [29, 212, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
        (
            "gemini/grounding-google-search-gemini-2.5-pro.sse",
            text("", [119, 653, 0]),
        ),
        (
            "gemini/max-tokens-gemini-2.5-flash.sse",
            Decoded {
                finish: Some(FinishReason::MaxTokens),
                ..text("Here are all 50 U.S.", [9, 48, 0])
            },
        ),
        (
            "gemini/parallel-functioncalls-ids-thoughtsig-gemini-3.5-flash.sse",
            Decoded {
                signatures: 1,
                calls: vec![
                    (
                        Some("dv8szvqe".into()),
                        "get_weather".into(),
                        json!({"location": "Boston"}),
                    ),
                    (
                        Some("j80tal12".into()),
                        "get_weather".into(),
                        json!({"location": "New Delhi"}),
                    ),
                ],
                usage: [71, 126, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
        (
            "gemini/parallel-functioncalls-one-event-gemini-2.0-flash.sse",
            Decoded {
                calls: vec![
                    call("get_weather", json!({"location": "Boston"})),
                    call("get_weather", json!({"location": "New Delhi"})),
                ],
                usage: [64, 11, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
        (
            "gemini/text-gemini-2.0-flash-exp.sse",
            text("The capital of France is Paris.\n", [13, 8, 0]),
        ),
        (
            "gemini/thought-summaries-gemini-3.5-flash.sse",
            Decoded {
                thought_chars: 630,
                signatures: 1,
                ..text("", [11, 1416, 0])
            },
        ),
        (
            "gemini/jsonarray-nonsse-functioncall-thoughtsig-gemini-3-flash.json",
            Decoded {
                signatures: 1,
                calls: vec![call("multiply", json!({"x": 5, "y": 3}))],
                usage: [60, 48, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
        (
            "gemini/jsonarray-nonsse-thought-then-functioncall-gemini-2.5-flash.json",
            Decoded {
                thought_chars: 236,
                signatures: 1,
                calls: vec![call("pelican_name_generator", json!({}))],
                usage: [32, 54, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
        (
            "vertex/gemini-2.5-flash-jsonarray-enum-int.json",
            text(
                "I told my wife she was drawing her eyebrows too high. She looked surprised.",
                [11, 248, 0],
            ),
        ),
        ("vertex/gemini-2.5-flash-text.sse", text("", [8, 2581, 0])),
        (
            "vertex/gemini-3-flash-global-flex-thoughtsig.sse",
            Decoded {
                signatures: 1,
                ..text("OK", [5, 101, 0])
            },
        ),
        (
            "vertex/gemini-3.5-flash-thoughtsig-on-empty-text.sse",
            Decoded {
                signatures: 1,
                ..text("six", [18, 197, 0])
            },
        ),
        (
            "vertex/gemini-3-flash-thought-then-streamed-args-parallel.jsonl",
            Decoded {
                thought_chars: 320,
                signatures: 1,
                calls: vec![
                    call("read_theme", json!({})),
                    call("read_screen", json!({"id": "A"})),
                    call("read_screen", json!({"id": "B"})),
                    call("read_screen", json!({"id": "C"})),
                ],
                usage: [249, 241, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
        (
            "vertex/gemini-3.1-pro-streamed-function-args.jsonl",
            Decoded {
                signatures: 1,
                calls: vec![
                    call("getWeather", json!({"location": "Boston"})),
                    call("getWeather", json!({"location": "San Francisco"})),
                ],
                usage: [26, 155, 0],
                finish: Some(FinishReason::ToolUse),
                ..Decoded::default()
            },
        ),
    ]
}

#[tokio::test]
async fn every_gemini_capture_holds_what_it_should_however_its_bytes_are_split() {
    let mut checked = Vec::new();
    for (name, mut wanted) in expected() {
        let whole = decode(name, usize::MAX).await;
        // Long answers are checked by their length, their start and their end.
        if wanted.text.is_empty() && !whole.text.is_empty() && wanted.calls.is_empty() {
            let lengths = [
                (
                    "gemini/code-execution-gemini-2.5-flash.sse",
                    500,
                    "To find the sum",
                    "is **5117**.",
                ),
                (
                    "gemini/grounding-google-search-gemini-2.5-pro.sse",
                    926,
                    "### Weather in San Francisco",
                    "throughout the day.",
                ),
                (
                    "gemini/thought-summaries-gemini-3.5-flash.sse",
                    2680,
                    "Here is a cozy, calming bedtime story",
                    "Sleep tight.",
                ),
                (
                    "vertex/gemini-2.5-flash-text.sse",
                    1564,
                    "When systems hum",
                    "shine so bright.",
                ),
            ];
            let (_, chars, start, end) = lengths
                .iter()
                .find(|(file, ..)| *file == name)
                .unwrap_or_else(|| panic!("{name}: no text expected, got {:?}", whole.text));
            assert_eq!(whole.text.chars().count(), *chars, "{name}");
            assert!(
                whole.text.starts_with(start) && whole.text.ends_with(end),
                "{name}"
            );
            wanted.text = whole.text.clone();
        }
        assert_eq!(whole, wanted, "{name}");
        for piece in [1, 7] {
            assert_eq!(
                decode(name, piece).await,
                whole,
                "{name} in {piece}-byte pieces"
            );
        }
        checked.push(name);
    }
    // Every Gemini capture is among them (the error bodies are read by the client's tests).
    let mut captures: Vec<String> = ["gemini", "vertex"]
        .iter()
        .flat_map(|dir| {
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/cloud-streams")
                .join(dir);
            std::fs::read_dir(path)
                .unwrap()
                .map(move |entry| format!("{dir}/{}", entry.unwrap().file_name().to_string_lossy()))
        })
        .filter(|name| !name.contains("claude") && !name.contains("error"))
        .collect();
    captures.sort();
    checked.sort();
    assert_eq!(checked, captures);
}

#[tokio::test]
async fn a_signature_stays_with_its_own_part() {
    // A thought, then a call carrying the step's signature, then an empty text part with one.
    let events = [
        json!({"candidates": [{"content": {"parts": [{"text": "Plan.", "thought": true}]}}]}),
        json!({"candidates": [{"content": {"parts": [
            {"functionCall": {"name": "Read", "args": {"path": "a"}}, "thoughtSignature": "c2lnLW9uLXRoZS1jYWxsLXBhcnQ="},
            {"text": "", "thoughtSignature": "c2lnLW9uLWFuLWVtcHR5LXRleHQ="},
        ]}, "finishReason": "STOP"}]}),
    ];
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    let stream = sse::decode(
        futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(body))]),
        gemini::Decoder::new(),
        Duration::from_secs(5),
    );
    let kinds: Vec<String> = stream
        .map(|event| match event.unwrap() {
            ModelEvent::ThinkingDelta { text } => format!("thought {text}"),
            ModelEvent::ToolCall(call) => format!("call {}", call.name),
            ModelEvent::ThinkingSignature { signature } => format!("signature {signature}"),
            ModelEvent::TextDelta { text } => format!("text {text:?}"),
            ModelEvent::Finished { reason } => format!("finished {reason:?}"),
            other => format!("{other:?}"),
        })
        .collect()
        .await;
    assert_eq!(
        kinds,
        [
            "thought Plan.",
            "call Read",
            "signature c2lnLW9uLXRoZS1jYWxsLXBhcnQ=",
            "signature c2lnLW9uLWFuLWVtcHR5LXRleHQ=",
            "finished ToolUse",
        ]
    );
}

#[tokio::test]
async fn an_error_in_the_stream_and_a_blocked_prompt_are_said() {
    let run = |payload: Value| async move {
        let body = format!("data: {payload}\n\n");
        let stream = sse::decode(
            futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(body))]),
            gemini::Decoder::new(),
            Duration::from_secs(5),
        );
        stream.collect::<Vec<_>>().await
    };
    let error = run(json!({"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}})).await;
    assert_eq!(
        error.last().unwrap().as_ref().unwrap_err().to_string(),
        "model API error (HTTP 429): Resource exhausted. [RESOURCE_EXHAUSTED]"
    );
    let blocked = run(json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}})).await;
    let blocked: Vec<ModelEvent> = blocked.into_iter().map(Result::unwrap).collect();
    assert!(
        matches!(&blocked[0], ModelEvent::Notice { message } if message.contains("PROHIBITED_CONTENT"))
    );
    assert_eq!(
        blocked.last(),
        Some(&ModelEvent::Finished {
            reason: FinishReason::Refusal
        })
    );
    let cut = run(json!({"candidates": [{"content": {"parts": [{"text": "Hal"}]}}]})).await;
    assert!(cut.last().unwrap().is_err(), "no finish reason: cut off");
}
