//! The Bedrock client against the mock on 127.0.0.1 speaking Bedrock's binary streams, with
//! every request's SigV4 signature recomputed by the mock and refused when it differs.

use super::clients::{assert_rich_reply, collect, hello, http, request, rich_reply};
use agentry::model::{AssistantContent, Message, ModelError, ModelEvent, ToolResult};
use agentry::tool::ContentBlock;
use agentry_models::aws::chain::CredentialSource;
use agentry_models::aws::credentials::CredentialChain;
use agentry_models::aws::sigv4::Credentials;
use agentry_models::bedrock::{BedrockApi, BedrockAuth, BedrockModel, BedrockSettings};
use agentry_tests::aws::SigV4Check;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use serde_json::json;
use std::sync::Arc;

const KEY_ID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLETOKEN//////////wEaCXVzLWVhc3QtMQ==";

fn check(secret: &str) -> SigV4Check {
    SigV4Check {
        access_key_id: KEY_ID.into(),
        secret_access_key: secret.into(),
        session_token: Some(TOKEN.into()),
        region: "us-east-1".into(),
        service: "bedrock".into(),
    }
}

fn signed_by(secret: &str) -> BedrockAuth {
    BedrockAuth::SigV4 {
        region: "us-east-1".into(),
        credentials: Arc::new(CredentialChain::new(CredentialSource::Static {
            credentials: Credentials {
                access_key_id: KEY_ID.into(),
                secret_access_key: secret.into(),
                session_token: Some(TOKEN.into()),
            },
            found_in: "the test".into(),
        })),
    }
}

fn bedrock(server: &MockModelServer, model: &str, auth: BedrockAuth) -> BedrockModel {
    BedrockModel::new(BedrockSettings {
        display_name: format!("bedrock/{model}"),
        model: model.into(),
        endpoint: server.url(),
        auth,
        context_window: None,
        images: true,
        max_output_tokens: 2048,
        http: http(5000),
    })
    .unwrap()
}

#[tokio::test]
async fn converse_streams_split_frames_under_a_checked_signature_and_sends_bedrocks_body() {
    let server = MockModelServer::start([MockTurn::Reply(rich_reply())]).await;
    server.require(Required::SigV4(check(SECRET)));
    let model = bedrock(&server, "amazon.nova-micro-v1:0", signed_by(SECRET));
    assert_eq!(model.api(), BedrockApi::Converse);
    // Frames cut into 5-byte reads, padding in every payload; usage with the cache counts.
    assert_rich_reply(&model, 7).await;
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/model/amazon.nova-micro-v1%3A0/converse-stream");
    assert_eq!(sent.headers["x-amz-security-token"], TOKEN);
    let body = &sent.body;
    assert_eq!(body["inferenceConfig"], json!({"maxTokens": 2048}));
    assert_eq!(
        body["system"],
        json!([{"text": "You are a test."}, {"cachePoint": {"type": "default"}}])
    );
    assert_eq!(
        body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["properties"]["path"],
        json!({"type": "string"})
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"text": "hello"}]}])
    );
    let text = body.to_string();
    assert!(
        !text.contains(SECRET) && !text.contains("\"model\""),
        "{text}"
    );
}

#[tokio::test]
async fn a_conversation_goes_back_in_converse_blocks_with_its_reasoning_signed() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("done"))]).await;
    server.require(Required::SigV4(check(SECRET)));
    let model = bedrock(&server, "openai.gpt-oss-120b-1:0", signed_by(SECRET));
    let history = vec![
        Message::user_text("read it"),
        Message::Assistant {
            content: vec![
                AssistantContent::Thinking {
                    text: "I should read.".into(),
                    signature: Some("c2lnbmVk".into()),
                },
                AssistantContent::Thinking {
                    text: "unsigned, from another provider".into(),
                    signature: None,
                },
                AssistantContent::RedactedThinking {
                    data: "cmVkYWN0ZWQ=".into(),
                },
                AssistantContent::ToolCall {
                    id: "tooluse_1".into(),
                    name: "Read".into(),
                    arguments: json!({"path": "a.rs"}),
                },
            ],
            origin: None,
        },
        Message::ToolResults {
            results: vec![ToolResult {
                tool_call_id: "tooluse_1".into(),
                content: vec![ContentBlock::Text {
                    text: "fn main() {}".into(),
                }],
                is_error: true,
            }],
        },
        Message::user_text("and?"),
    ];
    let (events, error) = collect(&model, request(history)).await;
    assert_eq!(error, None);
    assert!(events.contains(&ModelEvent::TextDelta {
        text: "done".into()
    }));
    let body = &server.requests()[0].body;
    assert_eq!(
        body["system"],
        json!([{"text": "You are a test."}]),
        "no cache point for a model that does not cache"
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"text": "read it"}]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "I should read.", "signature": "c2lnbmVk"}}},
                {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "Read", "input": {"path": "a.rs"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "fn main() {}"}], "status": "error"}},
                {"text": "and?"},
            ]},
        ])
    );
}

#[tokio::test]
async fn claude_goes_through_invoke_with_the_messages_body_bedrock_takes() {
    let server = MockModelServer::start([MockTurn::Reply(rich_reply())]).await;
    server.require(Required::SigV4(check(SECRET)));
    let profile = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    let model = bedrock(&server, profile, signed_by(SECRET));
    assert_eq!(model.api(), BedrockApi::InvokeClaude);
    // Anthropic's events, base64 in chunk frames: thinking, text, calls and usage alike.
    assert_rich_reply(&model, 7).await;
    let sent = &server.requests()[0];
    assert_eq!(
        sent.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
    );
    assert_eq!(sent.body["anthropic_version"], "bedrock-2023-05-31");
    assert_eq!(sent.body["max_tokens"], 2048);
    assert!(sent.body.get("model").is_none() && sent.body.get("stream").is_none());
    assert_eq!(sent.body["messages"][0]["content"][0]["text"], "hello");
}

#[tokio::test]
async fn an_arns_colons_and_slash_are_one_encoded_segment_signed_as_aws_signs_it() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("hi"))]).await;
    server.require(Required::SigV4(check(SECRET)));
    let arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3";
    let model = bedrock(&server, arn, signed_by(SECRET));
    let (_, error) = collect(&model, hello()).await;
    assert_eq!(error, None);
    assert_eq!(
        server.requests()[0].path,
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3/converse-stream"
    );
}

#[tokio::test]
async fn a_wrong_secret_is_refused_with_the_services_words_and_never_shown() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("hi"))]).await;
    server.require(Required::SigV4(check(SECRET)));
    let wrong = "not-the-secret-0123456789";
    let model = bedrock(&server, "amazon.nova-micro-v1:0", signed_by(wrong));
    let (events, error) = collect(&model, hello()).await;
    let Some(ModelError::Api { status, message }) = error else {
        panic!("refused: {error:?}");
    };
    assert_eq!(status, Some(403));
    assert!(
        message.contains("signature we calculated does not match")
            && message.contains("[InvalidSignatureException]"),
        "{message}"
    );
    assert!(!message.contains(wrong) && !message.contains(SECRET));
    assert!(events.is_empty(), "a refusal is not retried: {events:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_bedrock_api_key_goes_as_a_bearer_token_unsigned() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("hi"))]).await;
    server.require(Required::Header {
        name: "authorization".into(),
        value: "Bearer ABSK-test-key".into(),
    });
    let model = bedrock(
        &server,
        "amazon.nova-micro-v1:0",
        BedrockAuth::ApiKey("ABSK-test-key".into()),
    );
    let (_, error) = collect(&model, hello()).await;
    assert_eq!(error, None);
    assert!(server.requests()[0].headers.get("x-amz-date").is_none());
}

#[tokio::test]
async fn throttling_is_retried_and_said_and_a_stream_exception_named() {
    let throttled = MockTurn::Status {
        status: 429,
        headers: vec![(
            "x-amzn-ErrorType".into(),
            "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/".into(),
        )],
        body: json!({"message": "Too many requests, please wait before trying again."}).to_string(),
    };
    let mut frames = agentry_tests::aws::event_frame("messageStart", &json!({"role": "assistant"}));
    frames.extend(agentry_tests::aws::frame(
        &agentry_tests::aws::string_headers(&[
            (":exception-type", "modelStreamErrorException"),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ]),
        br#"{"message":"The model stream broke off."}"#,
    ));
    let server = MockModelServer::start([
        throttled,
        MockTurn::Reply(MockReply::text("after the wait")),
        MockTurn::Raw(frames),
    ])
    .await;
    server.require(Required::SigV4(check(SECRET)));
    let model = bedrock(&server, "amazon.nova-micro-v1:0", signed_by(SECRET));
    let (events, error) = collect(&model, hello()).await;
    assert_eq!(error, None);
    let notice = events.iter().find_map(|e| match e {
        ModelEvent::Notice { message } => Some(message.clone()),
        _ => None,
    });
    let notice = notice.expect("the retry is announced");
    assert!(
        notice.contains("HTTP 429") && notice.contains("[ThrottlingException]"),
        "{notice}"
    );
    let (_, error) = collect(&model, hello()).await;
    assert_eq!(
        error,
        Some(ModelError::Api {
            status: None,
            message: "The model stream broke off. [modelStreamErrorException]".into()
        })
    );
}

#[tokio::test]
async fn a_name_converse_refuses_is_sent_clean_and_called_and_replayed_by_its_own() {
    let long = "mcp__knowledge.base__search_every_document_in_every_folder_of_the_wiki";
    let sent_as = agentry_models::tool_names::CONVERSE.name_for(long);
    assert!(sent_as.len() <= 64 && !sent_as.contains('.'), "{sent_as}");
    let server = MockModelServer::start([
        MockTurn::Reply(MockReply::tool_call(
            "tooluse_9",
            &sent_as,
            json!({"q": "x"}),
        )),
        MockTurn::Reply(MockReply::text("found")),
    ])
    .await;
    server.require(Required::SigV4(check(SECRET)));
    let model = bedrock(&server, "amazon.nova-pro-v1:0", signed_by(SECRET));
    let mut asked = hello();
    asked.tools.push(agentry::model::ToolDefinition {
        name: long.into(),
        description: "Searches the wiki.".into(),
        input_schema: json!({"type": "object"}),
    });
    let (events, error) = collect(&model, asked.clone()).await;
    assert_eq!(error, None);
    assert_eq!(
        super::clients::calls(&events),
        [("tooluse_9".into(), long.into(), json!({"q": "x"}))]
    );
    // The call goes back in the history under the name Converse knows; an id another provider
    // gave it in a form Converse refuses goes back made valid, on the call and its result.
    let mut next = asked;
    next.messages.push(Message::Assistant {
        content: vec![AssistantContent::ToolCall {
            id: "functions.search:9".into(),
            name: long.into(),
            arguments: json!({"q": "x"}),
        }],
        origin: None,
    });
    next.messages.push(Message::ToolResults {
        results: vec![ToolResult {
            tool_call_id: "functions.search:9".into(),
            content: vec![ContentBlock::Text {
                text: "a page".into(),
            }],
            is_error: false,
        }],
    });
    let (_, error) = collect(&model, next).await;
    assert_eq!(error, None);
    let requests = server.requests();
    let declared = &requests[0].body["toolConfig"]["tools"][2]["toolSpec"]["name"];
    assert_eq!(declared, &json!(sent_as));
    assert_eq!(
        requests[1].body["messages"][1]["content"][0]["toolUse"]["name"],
        json!(sent_as)
    );
    assert!(!requests[1].body.to_string().contains("knowledge.base"));
    let messages = &requests[1].body["messages"];
    let id = messages[1]["content"][0]["toolUse"]["toolUseId"]
        .as_str()
        .unwrap();
    assert_eq!(messages[2]["content"][0]["toolResult"]["toolUseId"], id);
    assert!(
        id.starts_with("functions_search_9_") && id.len() <= 64,
        "{id}"
    );
}
