//! The hosted-model clients against the mock server on 127.0.0.1, speaking each wire format.

use agentry::event::Usage;
use agentry::model::{
    AssistantContent, FinishReason, Message, Model, ModelError, ModelEvent, ModelRequest,
    ToolDefinition, ToolResult,
};
use agentry::tool::ContentBlock;
use agentry_models::anthropic::{AnthropicModel, AnthropicSettings};
use agentry_models::http::HttpOptions;
use agentry_models::openai::{OpenAiApi, OpenAiModel, OpenAiSettings};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Part, Stop};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

pub(super) fn http(idle_ms: u64) -> HttpOptions {
    HttpOptions {
        connect_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_millis(idle_ms),
        max_retries: 2,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
    }
}

fn openai(server: &MockModelServer, api: OpenAiApi) -> OpenAiModel {
    openai_named(server, api, "gpt-mock")
}

fn openai_named(server: &MockModelServer, api: OpenAiApi, model: &str) -> OpenAiModel {
    OpenAiModel::new(OpenAiSettings {
        display_name: format!("openai/{model}"),
        model: model.into(),
        base_url: format!("{}/v1", server.url()),
        api_key: Some("sk-test".into()),
        api,
        context_window: None,
        images: true,
        max_output_tokens: None,
        reasoning: None,
        http: http(5000),
    })
    .unwrap()
}

fn anthropic_with(server: &MockModelServer, http: HttpOptions) -> AnthropicModel {
    AnthropicModel::new(AnthropicSettings {
        display_name: "anthropic/claude-mock".into(),
        model: "claude-mock".into(),
        base_url: server.url(),
        api_key: "ak-test".into(),
        context_window: None,
        images: true,
        max_output_tokens: 1024,
        http,
    })
    .unwrap()
}

fn anthropic(server: &MockModelServer) -> AnthropicModel {
    anthropic_with(server, http(5000))
}

pub(super) fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        system: "You are a test.".into(),
        messages,
        tools: vec![
            ToolDefinition {
                name: "Read".into(),
                description: "Reads.".into(),
                input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            },
            ToolDefinition {
                name: "Grep".into(),
                description: "Searches.".into(),
                input_schema: json!({"type": "object"}),
            },
        ],
        environment: None,
        max_output_tokens: None,
    }
}

pub(super) fn hello() -> ModelRequest {
    request(vec![Message::user_text("hello")])
}

/// Everything the stream yielded, and the error it ended with.
pub(super) async fn collect(
    model: &dyn Model,
    request: ModelRequest,
) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut stream = model.stream(request).await.unwrap();
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => return (events, Some(error)),
        }
    }
    (events, None)
}

pub(super) fn texts(events: &[ModelEvent]) -> (String, String) {
    let mut text = String::new();
    let mut thinking = String::new();
    for e in events {
        match e {
            ModelEvent::TextDelta { text: t } => text.push_str(t),
            ModelEvent::ThinkingDelta { text: t } => thinking.push_str(t),
            _ => {}
        }
    }
    (text, thinking)
}

pub(super) fn calls(events: &[ModelEvent]) -> Vec<(String, String, Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCall(call) => Some((
                call.id.to_string(),
                call.name.clone(),
                call.arguments.raw_input(),
            )),
            _ => None,
        })
        .collect()
}

pub(super) fn finish(events: &[ModelEvent]) -> Option<FinishReason> {
    events.iter().find_map(|e| match e {
        ModelEvent::Finished { reason } => Some(*reason),
        _ => None,
    })
}

pub(super) fn rich_reply() -> MockReply {
    let mut reply = MockReply::new(
        vec![
            Part::Thinking {
                text: "Let me look at both files.".into(),
                signature: "sig-Zm9v".into(),
            },
            Part::Text("Héllo wörld 😊, reading now.".into()),
            Part::ToolCall {
                id: "call_a".into(),
                name: "Read".into(),
                arguments: r#"{"path":"src/ä.rs"}"#.into(),
            },
            Part::ToolCall {
                id: "call_b".into(),
                name: "Grep".into(),
                arguments: r#"{"pattern":"fn main","glob":"*.rs"}"#.into(),
            },
        ],
        Stop::ToolUse,
    );
    reply.piece = 3;
    reply.split_bytes = Some(5);
    reply.usage = [100, 40, 30, 7];
    reply
}

pub(super) async fn assert_rich_reply(model: &dyn Model, cache_write: u64) {
    let (events, error) = collect(model, hello()).await;
    assert_eq!(error, None);
    let (text, thinking) = texts(&events);
    assert_eq!(text, "Héllo wörld 😊, reading now.");
    assert_eq!(thinking, "Let me look at both files.");
    assert_eq!(
        calls(&events),
        [
            ("call_a".into(), "Read".into(), json!({"path": "src/ä.rs"})),
            (
                "call_b".into(),
                "Grep".into(),
                json!({"pattern": "fn main", "glob": "*.rs"})
            )
        ]
    );
    assert_eq!(finish(&events), Some(FinishReason::ToolUse));
    let usage = events.iter().rev().find_map(|e| match e {
        ModelEvent::Usage { usage } => Some(*usage),
        _ => None,
    });
    assert_eq!(
        usage,
        Some(Usage {
            input_tokens: 100,
            output_tokens: 40,
            cache_read_tokens: 30,
            cache_write_tokens: cache_write
        })
    );
}

#[tokio::test]
async fn chat_completions_streams_split_at_awkward_bytes_and_sends_the_right_request() {
    let server = MockModelServer::start([MockTurn::Reply(rich_reply())]).await;
    let model = openai(&server, OpenAiApi::ChatCompletions);
    assert_rich_reply(&model, 0).await;
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.headers["authorization"], "Bearer sk-test");
    let body = &sent.body;
    assert_eq!(body["model"], "gpt-mock");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hello"})
    );
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "Read");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["properties"]["path"]["type"],
        "string"
    );
}

#[tokio::test]
async fn anthropic_streams_thinking_text_and_parallel_tools_with_caching_and_headers() {
    let server = MockModelServer::start([MockTurn::Reply(rich_reply())]).await;
    let model = anthropic(&server);
    assert_rich_reply(&model, 7).await;
    let (events, _) = {
        server.push(MockTurn::Reply(rich_reply()));
        collect(&model, hello()).await
    };
    assert!(events.iter().any(
        |e| matches!(e, ModelEvent::ThinkingSignature { signature } if signature == "sig-Zm9v")
    ));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "ak-test");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    let body = &sent.body;
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["tools"][0].get("cache_control"), None);
    assert_eq!(
        body["tools"][1]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}

fn history() -> Vec<Message> {
    vec![
        Message::user_text("look"),
        Message::Assistant {
            content: vec![
                AssistantContent::Thinking {
                    text: "Think.".into(),
                    signature: Some("sig-1".into()),
                },
                AssistantContent::RedactedThinking {
                    data: "opaque".into(),
                },
                AssistantContent::Text {
                    text: "Looking.".into(),
                },
                AssistantContent::ToolCall {
                    id: "c1".into(),
                    name: "Read".into(),
                    arguments: json!({"path": "a"}),
                },
                AssistantContent::ToolCall {
                    id: "c2".into(),
                    name: "Read".into(),
                    arguments: json!("{broken"),
                },
            ],
            origin: None,
        },
        Message::ToolResults {
            results: vec![
                ToolResult {
                    tool_call_id: "c1".into(),
                    content: vec![
                        ContentBlock::text("contents"),
                        ContentBlock::Image {
                            data: "aW1n".into(),
                            mime_type: "image/png".into(),
                        },
                    ],
                    is_error: false,
                },
                ToolResult {
                    tool_call_id: "c2".into(),
                    content: vec![ContentBlock::text("not JSON")],
                    is_error: true,
                },
            ],
        },
        Message::user_text("and now?"),
    ]
}

#[tokio::test]
async fn anthropic_requests_echo_thinking_exactly_and_carry_tool_results() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("ok"))]).await;
    collect(&anthropic(&server), request(history())).await;
    let messages = &server.requests()[0].body["messages"];
    assert_eq!(messages.as_array().unwrap().len(), 3, "{messages:#}");
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Think.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "c1", "name": "Read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "c2", "name": "Read", "input": {"invalid_arguments": "{broken"}},
        ])
    );
    // Tool results and the next user message are one user turn.
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"],
        json!([
            {"type": "tool_result", "tool_use_id": "c1", "is_error": false, "content": [
                {"type": "text", "text": "contents"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aW1n"}}]},
            {"type": "tool_result", "tool_use_id": "c2", "is_error": true, "content": [{"type": "text", "text": "not JSON"}]},
            {"type": "text", "text": "and now?"},
        ])
    );
}

#[tokio::test]
async fn chat_and_responses_requests_carry_tool_calls_and_results_in_their_shapes() {
    let server = MockModelServer::start([
        MockTurn::Reply(MockReply::text("ok")),
        MockTurn::Reply(MockReply::text("ok")),
    ])
    .await;
    collect(
        &openai(&server, OpenAiApi::ChatCompletions),
        request(history()),
    )
    .await;
    collect(&openai(&server, OpenAiApi::Responses), request(history())).await;
    let [chat, responses] = [&server.requests()[0], &server.requests()[1]];
    let messages = &chat.body["messages"];
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{\"path\":\"a\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "Read", "arguments": "{broken"}}]})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "c1", "content": "contents"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "c2", "content": "not JSON"})
    );
    assert_eq!(messages[5]["role"], "user");
    assert_eq!(
        messages[5]["content"][1]["image_url"]["url"],
        "data:image/png;base64,aW1n"
    );
    assert_eq!(messages[6], json!({"role": "user", "content": "and now?"}));

    assert_eq!(responses.path, "/v1/responses");
    let body = &responses.body;
    assert_eq!(body["instructions"], "You are a test.");
    assert_eq!(body["store"], false);
    let input = body["input"].as_array().unwrap();
    assert!(input.contains(&json!({"type": "function_call", "call_id": "c1", "name": "Read", "arguments": "{\"path\":\"a\"}"})));
    assert!(
        input.contains(
            &json!({"type": "function_call_output", "call_id": "c2", "output": "not JSON"})
        )
    );
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "name": "Read", "description": "Reads.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}})
    );
}

#[tokio::test]
async fn a_reasoning_model_on_responses_keeps_its_encrypted_reasoning_and_gets_it_back() {
    let server = MockModelServer::start([
        MockTurn::Reply(MockReply::new(
            vec![
                Part::Thinking {
                    text: "Read it first.".into(),
                    signature: "gAAAAABencrypted".into(),
                },
                Part::ToolCall {
                    id: "c1".into(),
                    name: "Read".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                },
            ],
            Stop::ToolUse,
        )),
        MockTurn::Reply(MockReply::text("ok")),
        MockTurn::Reply(MockReply::text("ok")),
    ])
    .await;
    let o3 = openai_named(&server, OpenAiApi::Responses, "o3");
    let (events, error) = collect(&o3, hello()).await;
    assert_eq!(error, None);
    assert!(events.contains(&ModelEvent::ThinkingSignature {
        signature: "gAAAAABencrypted".into()
    }));
    let answered = vec![
        Message::user_text("hello"),
        Message::Assistant {
            content: vec![
                AssistantContent::Thinking {
                    text: "Read it first.".into(),
                    signature: Some("gAAAAABencrypted".into()),
                },
                AssistantContent::ToolCall {
                    id: "c1".into(),
                    name: "Read".into(),
                    arguments: json!({"path": "a"}),
                },
            ],
            origin: Some("openai".into()),
        },
        Message::ToolResults {
            results: vec![ToolResult {
                tool_call_id: "c1".into(),
                content: vec![ContentBlock::Text {
                    text: "contents".into(),
                }],
                is_error: false,
            }],
        },
    ];
    collect(&o3, request(answered.clone())).await;
    // A model that does not reason is asked for neither, and gets no reasoning items.
    collect(
        &openai_named(&server, OpenAiApi::Responses, "gpt-4.1"),
        request(answered),
    )
    .await;
    let sent = server.requests();
    for body in [&sent[0].body, &sent[1].body] {
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["reasoning"], json!({"summary": "auto"}));
    }
    assert_eq!(
        sent[1].body["input"][1],
        json!({"type": "reasoning", "encrypted_content": "gAAAAABencrypted",
               "summary": [{"type": "summary_text", "text": "Read it first."}]})
    );
    assert_eq!(sent[1].body["input"][2]["type"], "function_call");
    let plain = &sent[2].body;
    assert!(plain.get("include").is_none() && plain.get("reasoning").is_none());
    assert!(!plain.to_string().contains("gAAAAABencrypted"));
    for (model, reasons) in [
        ("o3", true),
        ("o4-mini", true),
        ("gpt-5.1-codex-max", true),
        ("gpt-5-mini", true),
        ("gpt-5-chat-latest", false),
        ("gpt-4.1", false),
        ("gpt-4o", false),
        ("o3mini-lookalike", false),
    ] {
        assert_eq!(agentry_models::openai::reasons(model), reasons, "{model}");
    }
}

#[tokio::test]
async fn every_stop_reason_maps_in_every_wire_format() {
    let cases = [
        (Stop::EndTurn, FinishReason::EndTurn),
        (Stop::ToolUse, FinishReason::ToolUse),
        (Stop::MaxTokens, FinishReason::MaxTokens),
        (Stop::Refusal, FinishReason::Refusal),
    ];
    for (stop, expected) in cases {
        let parts = if stop == Stop::ToolUse {
            vec![Part::ToolCall {
                id: "c".into(),
                name: "Read".into(),
                arguments: "{}".into(),
            }]
        } else {
            vec![Part::Text("x".into())]
        };
        let turn = || MockTurn::Reply(MockReply::new(parts.clone(), stop));
        let server = MockModelServer::start([turn(), turn(), turn()]).await;
        let models: [Box<dyn Model>; 3] = [
            Box::new(openai(&server, OpenAiApi::ChatCompletions)),
            Box::new(openai(&server, OpenAiApi::Responses)),
            Box::new(anthropic(&server)),
        ];
        for model in models {
            let (events, error) = collect(model.as_ref(), hello()).await;
            assert_eq!(error, None);
            assert_eq!(
                finish(&events),
                Some(expected),
                "{stop:?} via {}",
                model.name()
            );
        }
    }
}

fn status(code: u16, headers: &[(&str, &str)], body: &str) -> MockTurn {
    MockTurn::Status {
        status: code,
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
        body: body.into(),
    }
}

fn notices(events: &[ModelEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_with_notices() {
    let server = MockModelServer::start([
        status(
            429,
            &[("retry-after", "1")],
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#,
        ),
        status(500, &[], r#"{"error":{"message":"boom"}}"#),
        MockTurn::Reply(MockReply::text("finally")),
    ])
    .await;
    let (events, error) = collect(&openai(&server, OpenAiApi::ChatCompletions), hello()).await;
    assert_eq!(error, None);
    assert_eq!(texts(&events).0, "finally");
    let seen = notices(&events);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen[0].contains("HTTP 429 (Rate limit reached)")
            && seen[0].contains("retrying in 1.0 s (attempt 2 of 3)"),
        "{}",
        seen[0]
    );
    assert!(
        seen[1].contains("HTTP 500 (boom)") && seen[1].contains("attempt 3 of 3"),
        "{}",
        seen[1]
    );
    assert_eq!(server.requests().len(), 3);

    let overloaded = MockModelServer::start([
        status(
            529,
            &[],
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        MockTurn::Reply(MockReply::text("ok")),
    ])
    .await;
    let (events, error) = collect(&anthropic(&overloaded), hello()).await;
    assert_eq!(error, None);
    assert!(notices(&events)[0].contains("Overloaded"));
}

#[tokio::test]
async fn client_errors_fail_at_once_and_retries_run_out() {
    let server = MockModelServer::start([status(
        400,
        &[],
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 99999999 > 64000"}}"#,
    )])
    .await;
    let (_, error) = collect(&anthropic(&server), hello()).await;
    assert_eq!(
        error,
        Some(ModelError::Api {
            status: Some(400),
            message: "max_tokens: 99999999 > 64000".into()
        })
    );
    assert_eq!(server.requests().len(), 1, "a 400 must not be retried");

    let busy =
        MockModelServer::start((0..3).map(|_| status(503, &[], "upstream unavailable"))).await;
    let (events, error) = collect(&openai(&busy, OpenAiApi::ChatCompletions), hello()).await;
    assert_eq!(notices(&events).len(), 2);
    assert_eq!(
        error,
        Some(ModelError::Api {
            status: Some(503),
            message: "upstream unavailable".into()
        })
    );
    assert_eq!(busy.requests().len(), 3);
}

#[tokio::test]
async fn a_stream_cut_off_mid_response_is_an_error_not_a_short_answer() {
    let mut reply = MockReply::text("This answer will never be whole.");
    reply.piece = 2;
    reply.drop_after = Some(400);
    for api in ["chat", "anthropic"] {
        let server = MockModelServer::start([MockTurn::Reply(reply.clone())]).await;
        let model: Box<dyn Model> = if api == "chat" {
            Box::new(openai(&server, OpenAiApi::ChatCompletions))
        } else {
            Box::new(anthropic(&server))
        };
        let (events, error) = collect(model.as_ref(), hello()).await;
        assert_eq!(finish(&events), None, "{api}");
        let error = error.unwrap_or_else(|| panic!("{api}: no error"));
        assert!(
            matches!(error, ModelError::Connection(_) | ModelError::Protocol(_)),
            "{api}: {error}"
        );
    }
}

#[tokio::test]
async fn a_stalled_stream_fails_at_the_idle_timeout() {
    let mut reply = MockReply::text("stalls");
    reply.stall_after = Some(200);
    let server = MockModelServer::start([MockTurn::Reply(reply)]).await;
    let (_, error) = collect(&anthropic_with(&server, http(300)), hello()).await;
    assert!(error.unwrap().to_string().contains("idle timeout"));
}

#[tokio::test]
async fn dropping_the_stream_hangs_up_the_request() {
    let mut reply = MockReply::text("a long answer that stalls");
    reply.piece = 1;
    reply.stall_after = Some(600);
    let server = MockModelServer::start([MockTurn::Reply(reply)]).await;
    let model = anthropic(&server);
    let mut stream = model.stream(hello()).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(ModelEvent::TextDelta { .. }))
    ));
    assert!(!server.client_hung_up());
    drop(stream);
    for _ in 0..200 {
        if server.client_hung_up() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the server never saw the client hang up");
}

#[tokio::test]
async fn cancelling_a_turn_mid_stream_ends_it_cancelled_and_hangs_up_the_request() {
    use agentry::agent::{Agent, ChatIo, ChatOptions, SessionOptions};
    use agentry::event::{AgentEvent, StopReason};
    use std::sync::Arc;

    let mut reply = MockReply::text("a long answer that stalls halfway");
    reply.piece = 2;
    reply.stall_after = Some(700);
    let server = MockModelServer::start([MockTurn::Reply(reply)]).await;
    let agent = Agent::builder(Arc::new(anthropic(&server)))
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut session = agent.new_session(SessionOptions::new(dir.path())).unwrap();
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let io = ChatIo::new(sender);
    let cancel = io.cancel.clone();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if matches!(event, AgentEvent::TextDelta { .. }) {
                cancel.cancel();
            }
        }
    });
    let summary = session
        .prompt_with(vec![ContentBlock::text("go")], &ChatOptions::default(), &io)
        .await
        .unwrap();
    assert_eq!(summary.stop_reason, StopReason::Cancelled);
    for _ in 0..200 {
        if server.client_hung_up() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the request was not dropped");
}

#[test]
fn the_messages_body_asks_for_the_requests_own_output_limit_when_it_is_lower() {
    let limited = hello().with_max_output_tokens(50);
    let body = agentry_models::anthropic::messages_body(
        "m",
        &limited,
        limited.output_limit(Some(4096)).unwrap(),
    );
    assert_eq!(body["max_tokens"], 50);
}

#[tokio::test]
async fn no_client_or_its_settings_shows_a_key_in_debug_output() {
    let server = MockModelServer::start([]).await;
    let shown = [
        format!("{:?}", openai(&server, OpenAiApi::Responses)),
        format!("{:?}", anthropic(&server)),
        format!(
            "{:?}",
            agentry_models::gemini::GeminiModel::new(agentry_models::gemini::GeminiSettings {
                display_name: "gemini/g".into(),
                model: "g".into(),
                base_url: server.url(),
                api_key: "gm-debug-key".into(),
                context_window: None,
                images: true,
                max_output_tokens: None,
                http: http(5000),
            })
            .unwrap()
        ),
    ];
    for text in &shown {
        for key in ["sk-test", "ak-test", "gm-debug-key"] {
            assert!(!text.contains(key), "{key} in {text}");
        }
        assert!(text.contains("Secret(..)"), "{text}");
    }
}

#[tokio::test]
async fn a_call_id_anthropic_would_refuse_goes_back_made_valid_on_the_call_and_its_result() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("ok"))]).await;
    // As a Kimi model behind an OpenAI-compatible server names its calls.
    let foreign = "functions.Read:0";
    let history = vec![
        Message::user_text("read a"),
        Message::Assistant {
            content: vec![AssistantContent::ToolCall {
                id: foreign.into(),
                name: "Read".into(),
                arguments: json!({"path": "a"}),
            }],
            origin: Some("moonshot".into()),
        },
        Message::ToolResults {
            results: vec![ToolResult {
                tool_call_id: foreign.into(),
                content: vec![ContentBlock::Text {
                    text: "contents".into(),
                }],
                is_error: false,
            }],
        },
    ];
    let (_, error) = collect(&anthropic(&server), request(history)).await;
    assert_eq!(error, None);
    let messages = &server.requests()[0].body["messages"];
    let call_id = messages[1]["content"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(messages[2]["content"][0]["tool_use_id"], call_id.as_str());
    assert!(
        call_id.starts_with("functions_Read_0_")
            && call_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{call_id}"
    );
}
