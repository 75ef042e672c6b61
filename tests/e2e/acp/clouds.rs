//! An editor's session on the clouds' models: a turn on Gemini, the model switched to Bedrock
//! with the session's config option, a turn there; each with a tool call, and nothing of one
//! provider's sent to the other.

use super::{prompt, session_steps};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, gemini_call_signature};
use serde_json::json;

#[test]
fn an_acp_session_goes_from_gemini_to_bedrock_with_a_tool_call_on_each() {
    let sb = sandbox();
    sb.write(
        "config/agentry/config.toml",
        "models = [\"bedrock/amazon.nova-pro-v1:0\"]\n",
    );
    let server = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call("fc_1", "Nope", json!({}))),
        MockTurn::Reply(MockReply::text("Gemini done.")),
        MockTurn::Reply(MockReply::tool_call("tooluse_2", "Nope", json!({}))),
        MockTurn::Reply(MockReply::text("Bedrock done.")),
    ]);
    let url = server.url();
    let set_model = json!({"op": "request", "method": "session/set_config_option",
        "params": {"sessionId": "$session", "configId": "model", "value": "bedrock/amazon.nova-pro-v1:0"}});
    let out = sb.acp(
        &["--model", "gemini/gemini-3-flash-preview"],
        &[
            ("GEMINI_API_KEY", "gk"),
            ("GEMINI_BASE_URL", &url),
            ("AWS_ACCESS_KEY_ID", "AKIDACP"),
            ("AWS_SECRET_ACCESS_KEY", "acp-secret"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", &url),
        ],
        json!({"steps": session_steps(&sb, vec![prompt("one"), set_model, prompt("two")])}),
    );
    assert_eq!(out.result(2)["stopReason"], "end_turn");
    assert_eq!(
        out.result(3)["configOptions"][0]["currentValue"],
        "bedrock/amazon.nova-pro-v1:0"
    );
    assert_eq!(out.result(4)["stopReason"], "end_turn");
    let failed: Vec<String> = out
        .updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .map(|u| u["toolCallId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        failed,
        ["fc_1", "tooluse_2"],
        "each unknown tool's call fails"
    );
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1beta/models/gemini-3-flash-preview:streamGenerateContent",
            "/v1beta/models/gemini-3-flash-preview:streamGenerateContent",
            "/model/amazon.nova-pro-v1%3A0/converse-stream",
            "/model/amazon.nova-pro-v1%3A0/converse-stream",
        ]
    );
    let signature = gemini_call_signature("fc_1");
    assert!(requests[1].body.to_string().contains(&signature));
    assert!(!requests[2].body.to_string().contains(&signature));
    assert_eq!(
        requests[2].body["messages"][1]["content"][0]["toolUse"]["toolUseId"],
        "fc_1"
    );
}
