//! A served session on the clouds' models, through the chat protocol's own client: a chat on
//! Vertex AI's Gemini (a service account's token, its JWT verified by a token service of the
//! test's own), then, with the message's model option, a chat on Azure OpenAI with a Microsoft
//! Entra ID token; a tool call on each, and nothing of one provider's sent to the other.

use super::{Server, events, send, wait_for};
use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, gemini_call_signature};
use agentry_tests::token_service::{
    EntraAccepts, EntraTokenService, GoogleTokenService, ServiceAccountKey,
};
use serde_json::json;

const EMAIL: &str = "serve@agentry-test.iam.gserviceaccount.com";

#[test]
fn a_served_session_goes_from_vertex_to_azure_with_a_tool_call_on_each() {
    let sb = sandbox();
    sb.write(
        "config/agentry/config.toml",
        "models = [\"azure/gpt-4o-prod\"]\n",
    );
    let key = ServiceAccountKey::generate();
    let google = GoogleTokenService::start(Some((EMAIL, &key)), None, 3600);
    let keys = sb.project().with_file_name("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let key_file = key.write_key_file(&keys, EMAIL, &google.token_uri());
    let entra = EntraTokenService::start(EntraAccepts {
        tenant: "serve-tenant".into(),
        client_id: "serve-client".into(),
        client_secret: Some("serve-secret".into()),
        federated_token: None,
        identity_header: None,
        lifetime: 3600,
    });
    let model = MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call("fc_1", "Nope", json!({}))),
        MockTurn::Reply(MockReply::text("Vertex done.")),
        MockTurn::Reply(MockReply::tool_call("call_2", "Nope", json!({}))),
        MockTurn::Reply(MockReply::text("Azure done.")),
    ]);
    let url = model.url();
    let key_path = key_file.display().to_string();
    let server = Server::start_with_env(
        &sb,
        &model,
        &["--model", "vertex/gemini-2.5-flash"],
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", &key_path),
            ("VERTEX_BASE_URL", &url),
            ("AZURE_OPENAI_ENDPOINT", &url),
            ("AZURE_TENANT_ID", "serve-tenant"),
            ("AZURE_CLIENT_ID", "serve-client"),
            ("AZURE_CLIENT_SECRET", "serve-secret"),
            ("AZURE_AUTHORITY_HOST", entra.url()),
        ],
    );
    let id = server.new_session(&sb);
    let out = server.client_over(
        &sb,
        "ws",
        vec![
            send("chat:send", json!({"session_id": id, "message": "one"})),
            wait_for("chat:end", 1),
            send(
                "chat:send",
                json!({"session_id": id, "message": "two", "model": "azure/gpt-4o-prod"}),
            ),
            wait_for("chat:end", 2),
        ],
    );
    let ends = events(&out, "chat:end");
    assert_eq!(ends[0]["result"]["output"], "Vertex done.");
    assert_eq!(ends[1]["result"]["output"], "Azure done.");
    let models: Vec<&str> = events(&out, "turn:end")
        .iter()
        .filter_map(|turn| turn["model"].as_str())
        .collect();
    assert!(
        models.contains(&"vertex/gemini-2.5-flash") && models.contains(&"azure/gpt-4o-prod"),
        "{models:?}"
    );
    let requests = model.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1/projects/agentry-test/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
            "/v1/projects/agentry-test/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
            "/openai/v1/chat/completions",
            "/openai/v1/chat/completions",
        ]
    );
    let bearer = |n: usize| {
        requests[n].headers["authorization"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(bearer(0), "Bearer ya29.test-1");
    assert_eq!(bearer(2), "Bearer entra-test-1");
    assert!(requests[2].headers.get("api-key").is_none());
    // Azure reads the Vertex chat's call and its failed result, without Gemini's signature.
    let history = requests[2].body["messages"].to_string();
    assert!(history.contains("fc_1") && history.contains("There is no tool named `Nope`"));
    assert!(
        !history.contains(&gemini_call_signature("fc_1")),
        "{history}"
    );
    assert_eq!((google.issued(), entra.issued()), (1, 1));
}
