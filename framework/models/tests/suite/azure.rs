//! Azure OpenAI's streams decoded from every capture in `tests/fixtures/cloud-streams/azure/`
//! by the OpenAI decoders (Chat Completions and Responses), whole and in 7-byte pieces: Azure's
//! quirks (a first chunk of prompt filter results and no choices, filter results on chunks,
//! chunks without a delta, annotation chunks after the finish, usage with a latency checkpoint,
//! a content-filter stop) read as what they are.

use agentry::model::{FinishReason, ModelEvent, ToolArguments};
use agentry_models::azure::{AzureAuth, AzureSettings, azure_openai};
use agentry_models::openai::{OpenAiApi, OpenAiModel};
use agentry_models::wire::{StreamDecoder, openai_chat, openai_responses};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::PathBuf;

/// What a decoded response amounts to.
#[derive(Debug, Default, PartialEq)]
struct Decoded {
    text: String,
    thinking_chars: usize,
    calls: Vec<(String, String, Value)>,
    /// Input and output tokens.
    usage: Option<[u64; 2]>,
    notices: Vec<String>,
    finish: Option<FinishReason>,
}

fn capture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cloud-streams/azure")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Each response of a capture as the SSE body it was: `.sse` as recorded; a payload per line
/// framed as events, cut into one body per response (a `.jsonl` may hold several).
fn bodies(name: &str) -> Vec<Vec<u8>> {
    let raw = capture(name);
    if name.ends_with(".sse") {
        return vec![raw.into_bytes()];
    }
    let mut bodies: Vec<String> = Vec::new();
    for line in raw.lines().filter(|line| !line.trim().is_empty()) {
        let payload: Value = serde_json::from_str(line).unwrap();
        let kind = payload["type"].as_str().map(str::to_owned);
        if kind.as_deref() == Some("response.created") || bodies.is_empty() {
            bodies.push(String::new());
        }
        let body = bodies.last_mut().unwrap();
        if let Some(kind) = kind {
            body.push_str(&format!("event: {kind}\n"));
        }
        body.push_str(&format!("data: {line}\n\n"));
    }
    if !name.starts_with("responses") {
        for body in &mut bodies {
            body.push_str("data: [DONE]\n\n");
        }
    }
    bodies.into_iter().map(String::into_bytes).collect()
}

async fn decode<D: StreamDecoder + 'static>(body: &[u8], piece: usize, decoder: D) -> Decoded {
    let mut stream = super::decode_in_pieces(body, piece, decoder);
    let mut out = Decoded::default();
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            ModelEvent::TextDelta { text } => out.text.push_str(&text),
            ModelEvent::ThinkingDelta { text } => out.thinking_chars += text.chars().count(),
            ModelEvent::ToolCall(call) => {
                let ToolArguments::Json(arguments) = call.arguments else {
                    panic!("arguments that are not JSON: {:?}", call.arguments);
                };
                out.calls.push((call.id.to_string(), call.name, arguments));
            }
            ModelEvent::Usage { usage } => {
                out.usage = Some([usage.input_tokens, usage.output_tokens]);
            }
            ModelEvent::Notice { message } => out.notices.push(message),
            ModelEvent::Finished { reason } => out.finish = Some(reason),
            ModelEvent::ThinkingSignature { .. } | ModelEvent::RedactedThinking { .. } => {}
        }
    }
    out
}

async fn decode_all(name: &str, piece: usize) -> Vec<Decoded> {
    let mut decoded = Vec::new();
    for body in bodies(name) {
        decoded.push(if name.starts_with("responses") {
            decode(&body, piece, openai_responses::Decoder::new()).await
        } else {
            decode(&body, piece, openai_chat::Decoder::new()).await
        });
    }
    decoded
}

fn answer(text: &str, usage: Option<[u64; 2]>) -> Decoded {
    Decoded {
        text: text.to_owned(),
        usage,
        finish: Some(FinishReason::EndTurn),
        ..Decoded::default()
    }
}

fn calls(calls: &[(&str, &str, Value)], usage: Option<[u64; 2]>) -> Decoded {
    Decoded {
        calls: calls
            .iter()
            .map(|(id, name, args)| ((*id).to_owned(), (*name).to_owned(), args.clone()))
            .collect(),
        usage,
        finish: Some(FinishReason::ToolUse),
        ..Decoded::default()
    }
}

#[tokio::test]
async fn every_azure_capture_holds_what_it_should_however_its_bytes_are_split() {
    let passwords = |ids: [&'static str; 2]| {
        [
            (
                ids[0],
                "secret_retrieval_tool",
                json!({"password": "mellon"}),
            ),
            (
                ids[1],
                "secret_retrieval_tool",
                json!({"password": "radiance"}),
            ),
        ]
    };
    let filtered = Decoded {
        notices: vec!["the provider's content filter stopped the answer".to_owned()],
        finish: Some(FinishReason::Refusal),
        usage: Some([0, 0]),
        ..answer("I'm sorry, but I cannot assist with that request.", None)
    };
    let expected: Vec<(&str, Vec<Decoded>)> = vec![
        (
            "chat-async-filter-annotations.sse",
            vec![answer("Kindness", None)],
        ),
        (
            "chat-gpt-35-turbo-2024-text.sse",
            vec![answer(
                "Why did the Opentelemetry developer bring a ladder to the coding competition? \n\nBecause they wanted to reach new traces!",
                None,
            )],
        ),
        (
            "chat-gpt-4.1-mini-protected-material.sse",
            vec![answer(
                "Why did the developer bring a map to the OpenTelemetry conference? \n\nBecause they wanted to trace every step!",
                None,
            )],
        ),
        (
            "chat-gpt-4o-mini-parallel-tool-calls.sse",
            vec![calls(
                &passwords([
                    "call_GF8LHohCf34vryrD5mTlArH8",
                    "call_7KowxRhncpXrPLQpuAMemn0y",
                ]),
                None,
            )],
        ),
        (
            "chat-gpt-5.2-include-usage-latency-checkpoint.sse",
            vec![answer(
                "Not much—here and ready to help. What do you want to talk about or work on?",
                Some([12, 24]),
            )],
        ),
        (
            "chat-model-router.jsonl",
            vec![answer("Capital of Denmark.", Some([15, 78]))],
        ),
        (
            "responses-gpt-4o-mini-incomplete-content-filter.sse",
            vec![filtered],
        ),
        (
            "responses-gpt-4o-mini-parallel-function-calls.sse",
            vec![calls(
                &passwords([
                    "call_ZxvfEKOUAaNm2rIvu0CXWN1z",
                    "call_hWZOQA612mDihMo08n25NxOp",
                ]),
                Some([36, 54]),
            )],
        ),
        (
            "responses-gpt-4o-mini-text.sse",
            vec![answer("4200 + 42 equals 4242.", Some([16, 11]))],
        ),
    ];
    for (name, wanted) in expected {
        let whole = decode_all(name, usize::MAX).await;
        assert_eq!(whole, wanted, "{name}");
        assert_eq!(decode_all(name, 7).await, whole, "{name} in 7-byte pieces");
    }
    // A chunk with no delta, between the role and the text: the answer is all there.
    let no_delta = decode_all("chat-gpt-4o-mini-2023-07-01-preview-no-delta.sse", 7).await;
    assert!(
        no_delta[0]
            .text
            .starts_with("I'm unable to provide real-time weather updates.")
    );
    assert_eq!(no_delta[0].text.chars().count(), 199);
    // Four responses: three calls with their reasoning summaries, then the answer.
    let codex = decode_all("responses-gpt-5.1-codex-max-encrypted-reasoning.jsonl", 7).await;
    assert_eq!(codex.len(), 4);
    let called: Vec<Value> = codex
        .iter()
        .flat_map(|d| d.calls.iter().map(|c| c.2.clone()))
        .collect();
    assert_eq!(
        called,
        [
            json!({"a": 12, "b": 7, "op": "add"}),
            json!({"a": 19, "b": 3, "op": "multiply"}),
            json!({"a": 57, "b": 10, "op": "multiply"}),
        ]
    );
    assert_eq!(codex[3].text, "The final result is **570**.");
    assert_eq!(codex.iter().map(|d| d.thinking_chars).sum::<usize>(), 455);
    assert_eq!(codex[3].usage, Some([315, 12]));
}

fn deployment(server: &MockModelServer, api: OpenAiApi, version: Option<&str>) -> OpenAiModel {
    azure_openai(AzureSettings {
        display_name: "azure/gpt4o-prod".into(),
        deployment: "gpt4o-prod".into(),
        endpoint: server.url(),
        api_version: version.map(str::to_owned),
        auth: AzureAuth::ApiKey("az-key".to_owned().into()),
        api,
        context_window: None,
        images: true,
        max_output_tokens: None,
        reasoning: None,
        http: super::clients::http(5000),
    })
    .unwrap()
}

#[tokio::test]
async fn a_deployment_is_reached_at_azures_urls_with_its_key_in_api_key() {
    let server = MockModelServer::start([
        MockTurn::Reply(super::clients::rich_reply()),
        MockTurn::Reply(MockReply::text("classic")),
        MockTurn::Reply(MockReply::text("responses")),
    ])
    .await;
    server.require(Required::Header {
        name: "api-key".into(),
        value: "az-key".into(),
    });
    let v1 = deployment(&server, OpenAiApi::ChatCompletions, None);
    super::clients::assert_rich_reply(&v1, 0).await;
    let classic = deployment(&server, OpenAiApi::ChatCompletions, Some("2024-10-21"));
    let (_, error) = super::clients::collect(&classic, super::clients::hello()).await;
    assert_eq!(error, None);
    let responses = deployment(&server, OpenAiApi::Responses, None);
    let (_, error) = super::clients::collect(&responses, super::clients::hello()).await;
    assert_eq!(error, None);
    let sent: Vec<(String, Option<String>, Value)> = server
        .requests()
        .into_iter()
        .map(|r| (r.path, r.query, r.body["model"].clone()))
        .collect();
    assert_eq!(
        sent,
        [
            (
                "/openai/v1/chat/completions".into(),
                None,
                json!("gpt4o-prod")
            ),
            (
                "/openai/deployments/gpt4o-prod/chat/completions".into(),
                Some("api-version=2024-10-21".into()),
                json!("gpt4o-prod")
            ),
            ("/openai/v1/responses".into(), None, json!("gpt4o-prod")),
        ]
    );
    assert!(server.requests()[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn a_prompt_the_filter_blocks_is_refused_in_azures_words() {
    let body = capture("chat-error-400-prompt-content-filter.json");
    let server = MockModelServer::start([MockTurn::Status {
        status: 400,
        headers: vec![],
        body,
    }])
    .await;
    let model = deployment(&server, OpenAiApi::ChatCompletions, None);
    let (_, error) = super::clients::collect(&model, super::clients::hello()).await;
    let Some(agentry::model::ModelError::Api { status, message }) = error else {
        panic!("{error:?}");
    };
    assert_eq!(status, Some(400));
    assert!(message.contains("content management policy"), "{message}");
}
