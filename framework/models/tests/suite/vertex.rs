//! Claude on Vertex AI (`streamRawPredict`) streams Anthropic's Messages events: every such
//! capture in `tests/fixtures/cloud-streams/vertex/` through the Anthropic decoder, whole and in
//! 7-byte pieces.

use agentry::model::{FinishReason, ModelEvent, ToolArguments};
use agentry_models::wire::anthropic;
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Text, thinking characters, signatures, calls, [input, output] tokens and the finish.
type Decoded = (
    String,
    usize,
    usize,
    Vec<(String, String, Value)>,
    [u64; 2],
    Option<FinishReason>,
);

async fn decode(name: &str, piece: usize) -> Decoded {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cloud-streams/vertex")
        .join(name);
    let body = std::fs::read(path).unwrap();
    let mut stream = super::decode_in_pieces(&body, piece, anthropic::Decoder::new());
    let mut out: Decoded = Default::default();
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            ModelEvent::TextDelta { text } => out.0.push_str(&text),
            ModelEvent::ThinkingDelta { text } => out.1 += text.chars().count(),
            ModelEvent::ThinkingSignature { .. } => out.2 += 1,
            ModelEvent::ToolCall(call) => {
                let ToolArguments::Json(arguments) = call.arguments else {
                    panic!("arguments that are not JSON: {:?}", call.arguments);
                };
                out.3.push((call.id.to_string(), call.name, arguments));
            }
            ModelEvent::Usage { usage } => out.4 = [usage.input_tokens, usage.output_tokens],
            ModelEvent::Finished { reason } => out.5 = Some(reason),
            ModelEvent::RedactedThinking { .. } | ModelEvent::Notice { .. } => {}
        }
    }
    out
}

#[tokio::test]
async fn every_vertex_claude_capture_holds_what_it_should() {
    let call = |id: &str, password: &str| {
        (
            id.to_owned(),
            "secret_retrieval_tool".to_owned(),
            json!({"password": password}),
        )
    };
    let expected: [(&str, Decoded); 4] = [
        (
            "claude-haiku-4.5-parallel-tool-use.sse",
            (
                String::new(),
                0,
                0,
                vec![
                    call("toolu_vrtx_016s1MRCMWAj5jrWE33xHh9m", "mellon"),
                    call("toolu_vrtx_01E5iVtKZ7MHAmWVVGZ8Zf3R", "radiance"),
                ],
                [599, 98],
                Some(FinishReason::ToolUse),
            ),
        ),
        (
            "claude-haiku-4.5-text.sse",
            (
                "4200 + 42 = 4242".into(),
                0,
                0,
                vec![],
                [17, 15],
                Some(FinishReason::EndTurn),
            ),
        ),
        (
            "claude-haiku-4.5-thinking-signature.sse",
            (
                "3".into(),
                3140,
                1,
                vec![],
                [66, 2206],
                Some(FinishReason::EndTurn),
            ),
        ),
        (
            "claude-haiku-4.5-max-tokens.sse",
            (
                String::new(),
                0,
                0,
                vec![],
                [15, 50],
                Some(FinishReason::MaxTokens),
            ),
        ),
    ];
    for (name, mut wanted) in expected {
        let whole = decode(name, usize::MAX).await;
        if name.contains("max-tokens") {
            // A list cut off at the limit: its start and end.
            assert!(whole.0.starts_with("# U.S. States (50 total)") && whole.0.ends_with("10."));
            wanted.0 = whole.0.clone();
        }
        assert_eq!(whole, wanted, "{name}");
        assert_eq!(decode(name, 7).await, whole, "{name} in 7-byte pieces");
    }
}
