//! Every recorded stream in `tests/fixtures/model-streams/` (the repository's copy of the
//! recorded streams; their provenance is in its README) through its wire decoder: whole, one
//! byte at a time, and in 7-byte pieces (which split UTF-8 characters and SSE lines).

use agentry::model::{FinishReason, ModelError, ModelEvent, ToolArguments};
use agentry_models::wire::{StreamDecoder, anthropic, openai_chat, openai_responses};
use futures::StreamExt;
use std::path::PathBuf;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/model-streams")
}

/// What a decoded response amounts to.
#[derive(Debug, Default, PartialEq)]
struct Decoded {
    text: String,
    thinking: String,
    signatures: usize,
    redacted: usize,
    calls: Vec<(String, String, serde_json::Value)>,
    input_tokens: u64,
    output_tokens: u64,
    cache_read: u64,
    finish: Option<FinishReason>,
    error: Option<String>,
}

fn decoder_for(name: &str) -> Box<dyn StreamDecoder> {
    if name.contains("responses") {
        Box::new(openai_responses::Decoder::new())
    } else if name.starts_with("anthropic") {
        Box::new(anthropic::Decoder::new())
    } else {
        Box::new(openai_chat::Decoder::new())
    }
}

/// The body as the server sent it: `.sse` files as they are; `.chunks.txt` files re-framed as
/// their README says (OpenAI-style: `data:` lines and `[DONE]`; Anthropic and Responses: an
/// `event:` line naming each payload's type).
fn body(name: &str) -> Vec<u8> {
    let raw = std::fs::read(fixtures_dir().join(name)).unwrap();
    if name.ends_with(".sse") {
        return raw;
    }
    let text = String::from_utf8(raw).unwrap();
    let typed = name.starts_with("anthropic") || name.contains("responses");
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if typed {
            let payload: serde_json::Value = serde_json::from_str(line).unwrap();
            out.push_str(&format!("event: {}\n", payload["type"].as_str().unwrap()));
        }
        out.push_str(&format!("data: {line}\n\n"));
    }
    if !typed {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

struct Boxed(Box<dyn StreamDecoder>);

impl StreamDecoder for Boxed {
    fn feed(&mut self, e: &agentry_models::wire::SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        self.0.feed(e)
    }
    fn finish(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        self.0.finish()
    }
}

async fn decode(name: &str, piece: usize) -> Decoded {
    let mut stream = super::decode_in_pieces(&body(name), piece, Boxed(decoder_for(name)));
    let mut out = Decoded::default();
    while let Some(item) = stream.next().await {
        match item {
            Ok(ModelEvent::TextDelta { text }) => out.text.push_str(&text),
            Ok(ModelEvent::ThinkingDelta { text }) => out.thinking.push_str(&text),
            Ok(ModelEvent::ThinkingSignature { .. }) => out.signatures += 1,
            Ok(ModelEvent::RedactedThinking { .. }) => out.redacted += 1,
            Ok(ModelEvent::ToolCall(call)) => {
                let input = match call.arguments {
                    ToolArguments::Json(input) => input,
                    ToolArguments::Invalid { raw, error } => {
                        panic!("{}: arguments {raw:?} are not JSON: {error}", call.name)
                    }
                };
                out.calls.push((call.id.to_string(), call.name, input));
            }
            Ok(ModelEvent::Usage { usage }) => {
                out.input_tokens = usage.input_tokens;
                out.output_tokens = usage.output_tokens;
                out.cache_read = usage.cache_read_tokens;
            }
            Ok(ModelEvent::Finished { reason }) => out.finish = Some(reason),
            Ok(ModelEvent::Notice { .. }) => {}
            Err(error) => out.error = Some(error.to_string()),
        }
    }
    out
}

#[tokio::test]
async fn every_fixture_decodes_the_same_however_the_bytes_are_split() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sse") || n.ends_with(".chunks.txt"))
        .collect();
    names.sort();
    assert!(names.len() >= 25, "fixtures missing: {names:?}");
    for name in &names {
        let whole = decode(name, usize::MAX).await;
        assert_eq!(decode(name, 1).await, whole, "{name}: one byte at a time");
        assert_eq!(decode(name, 7).await, whole, "{name}: 7-byte pieces");
        if name.contains("error") {
            assert!(whole.error.is_some(), "{name}: the error was not reported");
            assert_eq!(whole.finish, None, "{name}");
        } else {
            assert_eq!(whole.error, None, "{name}");
            assert!(whole.finish.is_some(), "{name}: never finished");
            assert!(
                !whole.text.is_empty() || !whole.calls.is_empty(),
                "{name}: neither text nor tool calls"
            );
        }
    }
}

fn call_names(d: &Decoded) -> Vec<&str> {
    d.calls.iter().map(|c| c.1.as_str()).collect()
}

#[tokio::test]
async fn anthropic_fixtures_keep_their_quirks() {
    let text = decode("anthropic-text.sse", 7).await;
    assert!(
        text.text
            .starts_with("The current exchange rate is **1 USD = 0.92 EUR**")
    );
    assert_eq!(
        (text.input_tokens, text.finish),
        (1007, Some(FinishReason::EndTurn))
    );

    let tool = decode("anthropic-tool-use.sse", 7).await;
    // The server tool and its result are not client calls.
    assert_eq!(call_names(&tool), ["get_exchange_rate"]);
    assert_eq!(tool.finish, Some(FinishReason::ToolUse));
    assert!(tool.calls[0].2.is_object());

    let thinking = decode("anthropic-thinking.sse", 7).await;
    assert!(!thinking.thinking.is_empty() && !thinking.text.is_empty());
    assert_eq!(thinking.signatures, 1);

    assert_eq!(
        decode("anthropic-redacted-thinking.sse", 7).await.redacted,
        2
    );

    let no_args = decode("anthropic-tool-use-no-args.chunks.txt", 7).await;
    assert_eq!(no_args.calls[0].2, serde_json::json!({}));

    let parallel = decode("anthropic-parallel-tool-use.chunks.txt", 7).await;
    assert_eq!(call_names(&parallel), ["searchDocs"; 3]);
    let ids: std::collections::HashSet<_> = parallel.calls.iter().map(|c| &c.0).collect();
    assert_eq!(ids.len(), 3);

    let omitted = decode("anthropic-thinking-display-omitted.chunks.txt", 7).await;
    assert_eq!((omitted.thinking.as_str(), omitted.signatures), ("", 1));
    assert!(omitted.text.contains('✓') || omitted.text.contains('✅'));

    let max = decode("anthropic-max-tokens.chunks.txt", 7).await;
    assert_eq!(max.finish, Some(FinishReason::MaxTokens));
    assert_eq!(max.cache_read, 18639);
}

#[tokio::test]
async fn chat_completions_fixtures_from_every_provider() {
    let text = decode("openai-chat-text.sse", 7).await;
    assert!(text.output_tokens > 0 && text.finish == Some(FinishReason::EndTurn));

    let parallel = decode("openai-chat-parallel-tools.sse", 7).await;
    assert_eq!(call_names(&parallel), ["get_weather", "get_product_name"]);
    assert_eq!(parallel.finish, Some(FinishReason::ToolUse));
    assert!(
        parallel.calls[0].2.get("city").is_some(),
        "{:?}",
        parallel.calls[0]
    );

    let moderation = decode("openai-chat-gpt5-moderation.sse", 7).await;
    assert!(
        moderation.output_tokens > 0,
        "usage before the moderation chunk was lost"
    );

    let deepseek = decode("deepseek-reasoning.sse", 7).await;
    assert!(!deepseek.thinking.is_empty() && deepseek.text.contains('😊'));
    assert!(deepseek.input_tokens + deepseek.cache_read > 0);

    for (name, id_prefix) in [
        ("deepseek-reasoning-tool-call.chunks.txt", "call_00_"),
        ("groq-reasoning-tool-call.sse", "fc_"),
        ("xai-reasoning-tool-call.chunks.txt", "call_"),
    ] {
        let d = decode(name, 7).await;
        assert!(!d.thinking.is_empty(), "{name}");
        assert_eq!(d.calls.len(), 1, "{name}");
        assert!(
            d.calls[0].0.starts_with(id_prefix),
            "{name}: {}",
            d.calls[0].0
        );
        assert_eq!(d.finish, Some(FinishReason::ToolUse), "{name}");
    }

    let openrouter = decode("openrouter-reasoning.sse", 7).await;
    assert!(!openrouter.thinking.is_empty());
    assert_eq!(
        openrouter.finish,
        Some(FinishReason::EndTurn),
        "a later null erased the finish"
    );
    assert!(openrouter.output_tokens > 0);

    let zai = decode("zai-glm-reasoning.sse", 7).await;
    assert!(!zai.thinking.is_empty() && zai.output_tokens > 0);

    let groq_error = decode("groq-stream-error.sse", 7).await;
    assert!(groq_error.error.unwrap().contains("tool_use_failed"));
}

#[tokio::test]
async fn responses_fixtures() {
    let text = decode("openai-responses-text.sse", 7).await;
    assert!(!text.text.is_empty() && text.finish == Some(FinishReason::EndTurn));

    for name in [
        "openai-responses-function-call.sse",
        "openai-responses-commentary-then-function-call.sse",
        "openai-responses-reasoning-summary.chunks.txt",
    ] {
        let d = decode(name, 7).await;
        // The reasoning item's encrypted content, as its signature.
        assert_eq!(d.signatures, 1, "{name}");
        assert_eq!(d.calls.len(), 1, "{name}");
        assert!(d.calls[0].2.is_object(), "{name}");
        assert_eq!(d.finish, Some(FinishReason::ToolUse), "{name}");
    }
    assert!(
        !decode("openai-responses-reasoning-summary.chunks.txt", 7)
            .await
            .thinking
            .is_empty()
    );

    let openrouter = decode("openrouter-responses-reasoning-text.sse", 7).await;
    assert_eq!(openrouter.text, "4");
    assert!(!openrouter.thinking.is_empty());

    let error = decode("openai-responses-error.chunks.txt", 7).await;
    assert!(error.error.unwrap().contains("insufficient_quota"));
}
