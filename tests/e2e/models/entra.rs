//! `agentry run` on Azure OpenAI and Foundry without a key: Microsoft Entra ID tokens from a
//! service principal (exchanged at a token service of the test's own) and from the Azure CLI
//! (an `az` on `PATH` that prints what the real one prints).

use crate::sandbox;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use agentry_tests::token_service::{EntraAccepts, EntraTokenService, entra_token};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

const TENANT: &str = "e2e-tenant";
const CLIENT: &str = "e2e-client";
const SECRET: &str = "e2e-client-secret";

fn round_trip(call_id: &str, answer: &str) -> MockModelServer {
    MockModelServer::start_blocking([
        MockTurn::Reply(MockReply::tool_call(call_id, "Nope", json!({}))),
        MockTurn::Reply(MockReply::text(answer)),
    ])
}

#[test]
fn azure_openai_takes_a_service_principals_token_and_foundry_the_azure_clis() {
    let sb = sandbox();
    let entra = EntraTokenService::start(EntraAccepts {
        tenant: TENANT.into(),
        client_id: CLIENT.into(),
        client_secret: Some(SECRET.into()),
        federated_token: None,
        identity_header: None,
        lifetime: 3600,
    });
    let server = round_trip("call_1", "Done via Entra.");
    server.require(Required::Header {
        name: "authorization".into(),
        value: format!("Bearer {}", entra_token(1)),
    });
    let out = sb.run_with_env(
        &["run", "--model", "azure/gpt-4o-prod", "go"],
        &[
            ("AZURE_OPENAI_ENDPOINT", &server.url()),
            ("AZURE_TENANT_ID", TENANT),
            ("AZURE_CLIENT_ID", CLIENT),
            ("AZURE_CLIENT_SECRET", SECRET),
            ("AZURE_AUTHORITY_HOST", entra.url()),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done via Entra.\n");
    assert_eq!(server.requests().len(), 2);
    // One token for the turn.
    assert_eq!(entra.issued(), 1);
    assert!(!out.stderr.contains(SECRET) && !out.stderr.contains("entra-test"));

    // Foundry with the developer's `az login`.
    let bin = sb.project().with_file_name("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let az = bin.join("az");
    std::fs::write(
        &az,
        "#!/bin/sh\n[ \"$1 $2 $3 $4\" = 'account get-access-token --resource https://cognitiveservices.azure.com' ] || exit 2\n\
         echo '{\"accessToken\": \"cli-e2e-token\", \"expiresOn\": \"2099-01-01 00:00:00.000000\", \"expires_on\": 4070908800, \"tokenType\": \"Bearer\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&az, std::fs::Permissions::from_mode(0o755)).unwrap();
    let foundry = round_trip("toolu_1", "Done via Foundry and az.");
    foundry.require(Required::Header {
        name: "authorization".into(),
        value: "Bearer cli-e2e-token".into(),
    });
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = sb.run_with_env(
        &["run", "--model", "foundry/claude-sonnet-4-5", "go"],
        &[
            (
                "AZURE_FOUNDRY_BASE_URL",
                &format!("{}/anthropic", foundry.url()),
            ),
            ("PATH", &path),
        ],
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "Done via Foundry and az.\n");
    let requests = foundry.requests();
    assert_eq!(requests[0].path, "/anthropic/v1/messages");
    assert!(requests[0].headers.get("x-api-key").is_none());

    // `agentry models` says where each found its credentials.
    let listed = sb.run_with_env(
        &["models", "--json"],
        &[
            ("AZURE_TENANT_ID", TENANT),
            ("AZURE_CLIENT_ID", CLIENT),
            ("AZURE_CLIENT_SECRET", SECRET),
            ("AZURE_TOKEN_CREDENTIALS", "prod"),
        ],
    );
    let listed: Vec<serde_json::Value> = serde_json::from_str(&listed.stdout).unwrap();
    let azure = listed.iter().find(|p| p["name"] == "azure").unwrap();
    assert_eq!(
        azure["credentials"],
        json!({"status": "found", "from": format!("the service principal {CLIENT} (AZURE_CLIENT_SECRET)")})
    );
}

#[test]
fn azure_without_a_key_or_entra_credentials_exits_2_naming_both() {
    let sb = sandbox();
    let server = MockModelServer::start_blocking([MockTurn::Reply(MockReply::text("never"))]);
    let out = sb.run_with_env(
        &["run", "--model", "azure/gpt-4o-prod", "hi"],
        &[
            ("AZURE_OPENAI_ENDPOINT", &server.url()),
            ("PATH", "/nonexistent"),
        ],
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains(
            "needs the resource's key in AZURE_OPENAI_API_KEY, or Microsoft Entra ID credentials"
        ) && out.stderr.contains("AZURE_CLIENT_SECRET")
            && out.stderr.trim().lines().count() == 1,
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}
