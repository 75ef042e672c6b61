//! The Vertex AI client, opened by the catalog, against the mock on 127.0.0.1 (which wants the
//! token the test's Google token service issued): Gemini through `streamGenerateContent` and
//! Claude through `streamRawPredict`, at the project's and location's path, and what each
//! sends.

use super::clients::{assert_rich_reply, collect, hello};
use super::google_credentials::env_of;
use agentry_models::catalog::{ModelCatalog, ProviderConfig};
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use agentry_tests::token_service::{GoogleTokenService, ServiceAccountKey, issued_token};
use serde_json::json;
use std::collections::BTreeMap;

const EMAIL: &str = "vertex@agentry-test.iam.gserviceaccount.com";

/// A token service, a key file for it, and the variables that point Vertex at `server`.
struct Google {
    service: GoogleTokenService,
    _dir: tempfile::TempDir,
    vars: Vec<(&'static str, String)>,
}

fn google(server: &MockModelServer, lifetime: u64) -> Google {
    let key = ServiceAccountKey::generate();
    let service = GoogleTokenService::start(Some((EMAIL, &key)), None, lifetime);
    let dir = tempfile::tempdir().unwrap();
    let file = key.write_key_file(dir.path(), EMAIL, &service.token_uri());
    let vars = vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", file.display().to_string()),
        ("GOOGLE_CLOUD_PROJECT", "my-project".to_owned()),
        ("VERTEX_BASE_URL", server.url()),
    ];
    Google {
        service,
        _dir: dir,
        vars,
    }
}

fn bearer(server: &MockModelServer, n: usize) {
    server.require(Required::Header {
        name: "authorization".into(),
        value: format!("Bearer {}", issued_token(n)),
    });
}

#[tokio::test]
async fn gemini_on_vertex_goes_to_the_projects_global_location_with_a_token() {
    let server = MockModelServer::start([
        MockTurn::Reply(super::clients::rich_reply()),
        MockTurn::Reply(MockReply::text("again")),
    ])
    .await;
    bearer(&server, 1);
    let google = google(&server, 3600);
    let env = env_of(&google.vars);
    let providers = BTreeMap::new();
    let catalog = ModelCatalog::new(&providers, &env);
    let model = catalog.open("vertex/gemini-2.5-flash").unwrap();
    assert_eq!(model.context_window(), Some(1_048_576));
    assert_rich_reply(model.as_ref(), 0).await;
    let (_, error) = collect(model.as_ref(), hello()).await;
    assert!(error.is_none(), "{error:?}");
    let sent = server.requests();
    assert_eq!(
        sent[0].path,
        "/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(sent[0].query.as_deref(), Some("alt=sse"));
    assert_eq!(
        sent[0].body["contents"],
        json!([{"role": "user", "parts": [{"text": "hello"}]}])
    );
    // One token for both requests: kept, not fetched again.
    assert_eq!(google.service.issued(), 1);
}

#[tokio::test]
async fn claude_on_vertex_streams_raw_predict_with_vertexs_anthropic_version() {
    let server = MockModelServer::start([MockTurn::Reply(super::clients::rich_reply())]).await;
    bearer(&server, 1);
    let google = google(&server, 3600);
    let env = env_of(&google.vars);
    let mut providers = BTreeMap::new();
    providers.insert(
        "vertex".to_owned(),
        ProviderConfig {
            region: Some("us-east5".into()),
            ..ProviderConfig::default()
        },
    );
    let catalog = ModelCatalog::new(&providers, &env);
    let model = catalog.open("vertex/claude-sonnet-4-5@20250929").unwrap();
    // Anthropic's stream, cache writes counted.
    assert_rich_reply(model.as_ref(), 7).await;
    let sent = &server.requests()[0];
    assert_eq!(
        sent.path,
        "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    );
    let body = &sent.body;
    assert_eq!(body["anthropic_version"], "vertex-2023-10-16");
    assert_eq!(body["stream"], true);
    assert!(body.get("model").is_none(), "{body}");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    );
}

#[tokio::test]
async fn a_refused_token_is_one_clear_error_and_no_model_request() {
    let server = MockModelServer::start([MockTurn::Reply(MockReply::text("never"))]).await;
    let google = google(&server, 3600);
    // The key file names a token endpoint that does not know this account.
    let other = GoogleTokenService::start(None, None, 3600);
    let mut vars = google.vars.clone();
    let dir = tempfile::tempdir().unwrap();
    let file = ServiceAccountKey::generate().write_key_file(dir.path(), EMAIL, &other.token_uri());
    vars[0].1 = file.display().to_string();
    let env = env_of(&vars);
    let providers = BTreeMap::new();
    let model = ModelCatalog::new(&providers, &env)
        .open("vertex/gemini-2.5-pro")
        .unwrap();
    let (_, error) = collect(model.as_ref(), hello()).await;
    let error = error.expect("an error").to_string();
    assert!(
        error.contains("no Google token from the service account")
            && error.contains("no service account is known here"),
        "{error}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn vertex_without_a_project_or_credentials_says_what_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_of(&[
        ("HOME", dir.path().display().to_string()),
        ("NO_GCE_CHECK", "true".into()),
        ("GOOGLE_CLOUD_PROJECT", "p".into()),
    ]);
    let providers = BTreeMap::new();
    let error = ModelCatalog::new(&providers, &env)
        .open("vertex/gemini-2.5-pro")
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.starts_with(
            "model configuration: `vertex/gemini-2.5-pro`: no Google credentials found"
        ),
        "{error}"
    );
    // User credentials name no project: one must be set.
    std::fs::create_dir_all(dir.path().join(".config/gcloud")).unwrap();
    std::fs::write(
        dir.path().join(".config/gcloud/application_default_credentials.json"),
        json!({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}).to_string(),
    )
    .unwrap();
    let env = env_of(&[("HOME", dir.path().display().to_string())]);
    let error = ModelCatalog::new(&providers, &env)
        .open("vertex/gemini-2.5-pro")
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("set GOOGLE_CLOUD_PROJECT"), "{error}");
}

#[tokio::test]
async fn vertexs_refusal_is_shown_in_its_words_and_its_throttling_retried() {
    let refusal = std::fs::read_to_string(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cloud-streams/vertex/gemini-error-401.json"),
    )
    .unwrap();
    let server = MockModelServer::start([
        MockTurn::Status {
            status: 429,
            headers: vec![],
            body: r#"[{"error": {"code": 429, "message": "Resource exhausted. Please try again later.", "status": "RESOURCE_EXHAUSTED"}}]"#.into(),
        },
        MockTurn::Reply(MockReply::text("after the wait")),
        MockTurn::Status {
            status: 401,
            headers: vec![],
            body: refusal,
        },
    ])
    .await;
    let google = google(&server, 3600);
    let env = env_of(&google.vars);
    let providers = BTreeMap::new();
    let catalog = ModelCatalog::new(&providers, &env).with_http(super::clients::http(5000));
    let model = catalog.open("vertex/gemini-2.5-flash").unwrap();
    let (events, error) = collect(model.as_ref(), hello()).await;
    assert!(error.is_none(), "{error:?}");
    assert!(events.iter().any(
        |e| matches!(e, agentry::model::ModelEvent::TextDelta { text } if text == "after the wait")
    ));
    let (_, error) = collect(model.as_ref(), hello()).await;
    let Some(agentry::model::ModelError::Api { status, message }) = error else {
        panic!("{error:?}");
    };
    assert_eq!(status, Some(401));
    assert!(
        message.starts_with("API keys are not supported by this API."),
        "{message}"
    );
    assert_eq!(server.requests().len(), 3);
}
