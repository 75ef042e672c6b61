//! The Gemini API client against the mock on 127.0.0.1 speaking `streamGenerateContent`, which
//! wants the key in `x-goog-api-key`: what it sends (contents, signatures on their own parts,
//! tools by names Gemini takes) and what it reads back.

use super::clients::{assert_rich_reply, calls, collect, hello, http, request, rich_reply};
use agentry::model::{
    AssistantContent, FinishReason, Message, ModelError, ToolDefinition, ToolResult,
};
use agentry::tool::ContentBlock;
use agentry_models::gemini::{GeminiModel, GeminiSettings};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use serde_json::json;

fn gemini(server: &MockModelServer, model: &str) -> GeminiModel {
    GeminiModel::new(GeminiSettings {
        display_name: format!("gemini/{model}"),
        model: model.into(),
        base_url: server.url(),
        api_key: "gm-test-key".into(),
        context_window: None,
        images: true,
        max_output_tokens: Some(4096),
        http: http(5000),
    })
    .unwrap()
}

fn keyed(server: &MockModelServer) {
    server.require(Required::Header {
        name: "x-goog-api-key".into(),
        value: "gm-test-key".into(),
    });
}

#[tokio::test]
async fn a_streamed_answer_is_read_and_the_request_is_geminis() {
    let server = MockModelServer::start([MockTurn::Reply(rich_reply())]).await;
    keyed(&server);
    let model = gemini(&server, "gemini-3-flash-preview");
    assert_rich_reply(&model, 0).await;
    let sent = &server.requests()[0];
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-3-flash-preview:streamGenerateContent"
    );
    let body = &sent.body;
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "hello"}]}])
    );
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are a test."}]})
    );
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0],
        json!({"name": "Read", "description": "Reads.",
               "parametersJsonSchema": {"type": "object", "properties": {"path": {"type": "string"}}}})
    );
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 4096, "thinkingConfig": {"includeThoughts": true}})
    );
}

#[tokio::test]
async fn each_signature_goes_back_on_the_part_it_came_on() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("ok"))]).await;
    keyed(&server);
    let model = gemini(&server, "gemini-2.0-flash");
    let history = vec![
        Message::user_text("read a"),
        Message::Assistant {
            content: vec![
                AssistantContent::Thinking {
                    text: "I will read.".into(),
                    signature: Some("c2lnLXRob3VnaHQ=".into()),
                },
                AssistantContent::ToolCall {
                    id: "fc1".into(),
                    name: "Read".into(),
                    arguments: json!({"path": "a"}),
                },
                AssistantContent::Thinking {
                    text: String::new(),
                    signature: Some("c2lnLWNhbGw=".into()),
                },
                AssistantContent::RedactedThinking {
                    data: "another provider's".into(),
                },
            ],
            origin: None,
        },
        Message::ToolResults {
            results: vec![ToolResult {
                tool_call_id: "fc1".into(),
                content: vec![ContentBlock::Text {
                    text: "no such file".into(),
                }],
                is_error: true,
            }],
        },
    ];
    let (_, error) = collect(&model, request(history)).await;
    assert_eq!(error, None);
    let body = &server.requests()[0].body;
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "read a"}]},
            {"role": "model", "parts": [
                {"text": "I will read.", "thought": true, "thoughtSignature": "c2lnLXRob3VnaHQ="},
                {"functionCall": {"id": "fc1", "name": "Read", "args": {"path": "a"}}, "thoughtSignature": "c2lnLWNhbGw="},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "fc1", "name": "Read", "response": {"error": "no such file"}}},
            ]},
        ])
    );
    assert!(
        body.get("generationConfig")
            .and_then(|c| c.get("thinkingConfig"))
            .is_none(),
        "gemini-2.0 does not think"
    );
}

#[tokio::test]
async fn a_name_too_long_for_gemini_is_sent_short_and_called_by_its_own() {
    let long = "mcp__knowledge_base__search_every_document_in_every_folder_of_the_wiki";
    let sent_as = agentry_models::tool_names::GEMINI.name_for(long);
    assert!(sent_as.len() <= 64);
    let server = MockModelServer::start([MockTurn::Reply(MockReply::tool_call(
        "fc9",
        &sent_as,
        json!({"query": "x"}),
    ))])
    .await;
    keyed(&server);
    let model = gemini(&server, "gemini-2.5-pro");
    let mut asked = hello();
    asked.tools.push(ToolDefinition {
        name: long.into(),
        description: "Searches the wiki.".into(),
        input_schema: json!({"type": "object"}),
    });
    let (events, error) = collect(&model, asked).await;
    assert_eq!(error, None);
    assert_eq!(
        calls(&events),
        [("fc9".into(), long.into(), json!({"query": "x"}))]
    );
    let declared = &server.requests()[0].body["tools"][0]["functionDeclarations"][2];
    assert_eq!(declared["name"], sent_as);
}

#[tokio::test]
async fn geminis_error_body_is_the_error_and_a_missing_key_is_refused() {
    let body = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cloud-streams/gemini/error-400-invalid-api-key.json"),
    )
    .unwrap();
    let server = MockModelServer::start([MockTurn::Status {
        status: 400,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body,
    }])
    .await;
    let model = gemini(&server, "gemini-2.5-flash");
    let (events, error) = collect(&model, hello()).await;
    assert!(events.is_empty());
    assert_eq!(
        error,
        Some(ModelError::Api {
            status: Some(400),
            message: "API key not valid. Please pass a valid API key.".into()
        })
    );
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("never"))]).await;
    server.require(Required::Header {
        name: "x-goog-api-key".into(),
        value: "another-key".into(),
    });
    let (_, error) = collect(&gemini(&server, "gemini-2.5-flash"), hello()).await;
    assert!(
        matches!(
            &error,
            Some(ModelError::Api {
                status: Some(401),
                ..
            })
        ),
        "{error:?}"
    );
    let finished = |reason| MockReply::new(vec![], reason);
    let server = MockModelServer::start([
        MockTurn::Reply(finished(agentry_tests::mock_model::Stop::MaxTokens)),
        MockTurn::Reply(finished(agentry_tests::mock_model::Stop::Refusal)),
    ])
    .await;
    let model = gemini(&server, "gemini-2.5-flash");
    for wanted in [FinishReason::MaxTokens, FinishReason::Refusal] {
        let (events, _) = collect(&model, hello()).await;
        assert_eq!(super::clients::finish(&events), Some(wanted));
    }
}
