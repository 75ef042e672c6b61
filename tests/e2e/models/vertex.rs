//! `agentry run` on Vertex AI: the binary finds Google's Application Default Credentials,
//! exchanges a service account's JWT at a token service of the test's own (which verifies it
//! with the key's public half), and sends the token to the mock speaking Vertex's paths.

use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use agentry_tests::token_service::{GoogleTokenService, ServiceAccountKey, issued_token};
use serde_json::json;

const EMAIL: &str = "e2e@agentry-test.iam.gserviceaccount.com";

#[test]
fn vertex_round_trips_on_gemini_and_claude_with_a_service_accounts_token() {
    let sb = sandbox();
    let key = ServiceAccountKey::generate();
    let google = GoogleTokenService::start(Some((EMAIL, &key)), None, 3600);
    let keys = sb.project().with_file_name("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let file = key.write_key_file(&keys, EMAIL, &google.token_uri());
    for (model, path, call_id) in [
        (
            "vertex/gemini-2.5-pro",
            "/v1/projects/agentry-test/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent",
            "fc_1",
        ),
        (
            "vertex/claude-opus-4-1@20250805",
            "/v1/projects/agentry-test/locations/europe-west4/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict",
            "toolu_1",
        ),
    ] {
        let server = MockModelServer::start_blocking([
            MockTurn::Reply(MockReply::tool_call(call_id, "Nope", json!({"x": 1}))),
            MockTurn::Reply(MockReply::text("Done via Vertex.")),
        ]);
        let before = google.issued();
        server.require(Required::Header {
            name: "authorization".into(),
            value: format!("Bearer {}", issued_token(before + 1)),
        });
        let out = sb.run_with_env(
            &["run", "--model", model, "go"],
            &[
                (
                    "GOOGLE_APPLICATION_CREDENTIALS",
                    &file.display().to_string(),
                ),
                ("GOOGLE_CLOUD_LOCATION", "europe-west4"),
                ("VERTEX_BASE_URL", &server.url()),
            ],
        );
        assert_eq!(out.code, Some(0), "{model}: {out:?}");
        assert_eq!(out.stdout, "Done via Vertex.\n");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{model}");
        assert_eq!(requests[0].path, path);
        // The failed call went back to the model in its format, under its id.
        let second = requests[1].body.to_string();
        assert!(
            second.contains(call_id) && second.contains("There is no tool named `Nope`"),
            "{second}"
        );
        // One token for the turn's two requests.
        assert_eq!(google.issued(), before + 1);
        assert!(!out.stderr.contains("PRIVATE KEY") && !out.stderr.contains("ya29."));
    }
    let listed = sb.run_with_env(
        &["models", "--json"],
        &[(
            "GOOGLE_APPLICATION_CREDENTIALS",
            &file.display().to_string(),
        )],
    );
    let listed: Vec<serde_json::Value> = serde_json::from_str(&listed.stdout).unwrap();
    let vertex = listed.iter().find(|p| p["name"] == "vertex").unwrap();
    assert_eq!(
        vertex["endpoint"],
        "https://aiplatform.googleapis.com (project agentry-test, location global)"
    );
    let from = vertex["credentials"]["from"].as_str().unwrap();
    assert!(
        from.contains(&format!("the service account {EMAIL} in")) && from.contains("keys/"),
        "{from}"
    );
}

#[test]
fn vertex_without_credentials_exits_2_naming_where_it_looked_before_any_request() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("never"))]);
    let out = sb.run_with_env(
        &["run", "--model", "vertex/gemini-2.5-pro", "hi"],
        &[
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("VERTEX_BASE_URL", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("no Google credentials found")
            && out
                .stderr
                .contains("home/.config/gcloud/application_default_credentials.json")
            && out.stderr.trim().lines().count() == 1,
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_refused_service_account_exits_2_in_the_services_words_before_any_model_request() {
    let sb = sandbox();
    let key = ServiceAccountKey::generate();
    let google = GoogleTokenService::start(Some((EMAIL, &key)), None, 3600);
    let keys = sb.project().with_file_name("keys");
    std::fs::create_dir_all(&keys).unwrap();
    // A key the token service does not know for this account.
    let forged = ServiceAccountKey::generate().write_key_file(&keys, EMAIL, &google.token_uri());
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("never"))]);
    let out = sb.run_with_env(
        &["run", "--model", "vertex/gemini-2.5-pro", "hi"],
        &[
            (
                "GOOGLE_APPLICATION_CREDENTIALS",
                &forged.display().to_string(),
            ),
            ("VERTEX_BASE_URL", &server.url()),
        ],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    let error = out
        .stderr
        .lines()
        .find(|line| line.starts_with("agentry: error:"))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    assert!(
        error.contains(&format!(
            "no Google token from the service account {EMAIL} in"
        )) && error.contains("invalid_grant: Invalid JWT Signature."),
        "{error}"
    );
    assert!(!out.stderr.contains("PRIVATE KEY"));
    assert!(server.requests().is_empty());
    assert_eq!(google.issued(), 0);
}
