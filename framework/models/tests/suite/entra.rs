//! Microsoft Entra ID credentials for Azure OpenAI and Foundry, against a token service of the
//! test's own on 127.0.0.1 that checks what Entra ID checks (the tenant, the client, its secret
//! or federated token, the scope; the managed identity endpoints' headers), an Azure CLI that
//! prints what `az account get-access-token` prints, and the order of the search. Then the
//! clients opened by the catalog without a key: the token in `Authorization`, no key header.

use super::clients::{collect, hello};
use super::google_credentials::env_of;
use agentry_models::auth::BearerTokens;
use agentry_models::azure::entra::{self, EntraSource};
use agentry_models::catalog::ModelCatalog;
use agentry_tests::mock_model::{MockModelServer, MockReply, MockTurn, Required};
use agentry_tests::token_service::{EntraAccepts, EntraTokenService, entra_token};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT: &str = "0f0e0d0c-aaaa-bbbb-cccc-123456789012";
const SECRET: &str = "Qx~8Q~client.secret";

fn service(lifetime: u64) -> EntraTokenService {
    EntraTokenService::start(EntraAccepts {
        tenant: TENANT.into(),
        client_id: CLIENT.into(),
        client_secret: Some(SECRET.into()),
        federated_token: Some("eyJhbGciOiJSUzI1NiJ9.federated.sig".into()),
        identity_header: Some("app-service-header".into()),
        lifetime,
    })
}

#[tokio::test]
async fn a_service_principals_secret_is_exchanged_and_a_wrong_one_refused_in_entras_words() {
    let service = service(3600);
    let vars = |secret: &str| {
        vec![
            ("AZURE_TENANT_ID", TENANT.to_owned()),
            ("AZURE_CLIENT_ID", CLIENT.to_owned()),
            ("AZURE_CLIENT_SECRET", secret.to_owned()),
            ("AZURE_AUTHORITY_HOST", service.url().to_owned()),
        ]
    };
    let env = env_of(&vars(SECRET));
    let source = entra::find(&env).unwrap();
    assert!(
        matches!(&source, EntraSource::ClientSecret { token_url, .. }
            if *token_url == format!("{}/{TENANT}/oauth2/v2.0/token", service.url())),
        "{source:?}"
    );
    assert!(!format!("{source:?}").contains(SECRET));
    let tokens = BearerTokens::new(source);
    assert_eq!(tokens.token().await.unwrap().expose(), entra_token(1));
    assert_eq!(tokens.token().await.unwrap().expose(), entra_token(1));
    assert_eq!(service.issued(), 1);

    let env = env_of(&vars("wrong-secret"));
    let refused = BearerTokens::new(entra::find(&env).unwrap())
        .token()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("no Microsoft Entra ID token from the service principal")
            && refused.ends_with("invalid_client: AADSTS7000215: Invalid client secret provided.")
            && !refused.contains("wrong-secret"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_workloads_federated_token_is_read_afresh_for_each_exchange() {
    let service = service(200);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("azure-identity-token");
    std::fs::write(&file, "eyJhbGciOiJSUzI1NiJ9.federated.sig\n").unwrap();
    let env = env_of(&[
        ("AZURE_TENANT_ID", TENANT.to_owned()),
        ("AZURE_CLIENT_ID", CLIENT.to_owned()),
        ("AZURE_FEDERATED_TOKEN_FILE", file.display().to_string()),
        ("AZURE_AUTHORITY_HOST", service.url().to_owned()),
    ]);
    let source = entra::find(&env).unwrap();
    assert!(matches!(source, EntraSource::WorkloadIdentity { .. }));
    let tokens = BearerTokens::new(source);
    assert_eq!(tokens.token().await.unwrap().expose(), entra_token(1));
    // Tokens good for under five minutes are fetched again; a rotated file is what is sent.
    std::fs::write(&file, "rotated-but-untrusted").unwrap();
    let refused = tokens.token().await.unwrap_err().to_string();
    assert!(refused.contains("AADSTS7000215"), "{refused}");
}

#[tokio::test]
async fn managed_identities_are_asked_with_their_endpoints_headers() {
    let service = service(3600);
    let app_service = env_of(&[
        ("IDENTITY_ENDPOINT", service.identity_endpoint()),
        ("IDENTITY_HEADER", "app-service-header".to_owned()),
    ]);
    let source = entra::find(&app_service).unwrap();
    assert!(matches!(source, EntraSource::AppServiceIdentity { .. }));
    assert_eq!(
        BearerTokens::new(source).token().await.unwrap().expose(),
        entra_token(1)
    );
    let forged = env_of(&[
        ("IDENTITY_ENDPOINT", service.identity_endpoint()),
        ("IDENTITY_HEADER", "guessed".to_owned()),
    ]);
    let refused = BearerTokens::new(entra::find(&forged).unwrap())
        .token()
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("answered HTTP 401"), "{refused}");

    // The instance metadata service, for a user-assigned identity.
    let imds = env_of(&[
        (
            "AZURE_POD_IDENTITY_AUTHORITY_HOST",
            service.url().to_owned(),
        ),
        ("AZURE_CLIENT_ID", CLIENT.to_owned()),
    ]);
    let source = entra::find(&imds).unwrap();
    assert_eq!(
        source,
        EntraSource::InstanceMetadata {
            host: service.url().to_owned(),
            client_id: Some(CLIENT.into()),
        }
    );
    assert_eq!(
        BearerTokens::new(source).token().await.unwrap().expose(),
        entra_token(2)
    );
}

/// A directory holding an `az` that answers `account get-access-token` as the Azure CLI does
/// (and fails as it does for anything else), logging its arguments to `args`.
fn fake_az(dir: &std::path::Path) -> std::path::PathBuf {
    let az = dir.join("az");
    std::fs::write(
        &az,
        format!(
            "#!/bin/sh\necho \"$@\" > {}/args\n\
             [ \"$1 $2\" = 'account get-access-token' ] || {{ echo 'ERROR: unknown' >&2; exit 2; }}\n\
             printf '{{\"accessToken\": \"cli-token\", \"expiresOn\": \"2099-01-01 00:00:00.000000\", \"expires_on\": 4070908800, \"subscription\": \"s\", \"tenant\": \"t\", \"tokenType\": \"Bearer\"}}\\n'\n",
            dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&az, std::fs::Permissions::from_mode(0o755)).unwrap();
    az
}

#[tokio::test]
async fn the_azure_cli_comes_last_and_is_asked_for_the_cognitive_services_resource() {
    let dir = tempfile::tempdir().unwrap();
    let az = fake_az(dir.path());
    let env = env_of(&[
        ("PATH", format!("/nonexistent:{}", dir.path().display())),
        ("AZURE_TENANT_ID", TENANT.to_owned()),
    ]);
    let source = entra::find(&env).unwrap();
    assert_eq!(
        source,
        EntraSource::AzureCli {
            program: az,
            tenant: Some(TENANT.into()),
        }
    );
    assert_eq!(
        BearerTokens::new(source).token().await.unwrap().expose(),
        "cli-token"
    );
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    assert_eq!(
        args.trim(),
        format!(
            "account get-access-token --resource https://cognitiveservices.azure.com --output json --tenant {TENANT}"
        )
    );
    // An `az` in a relative PATH entry (a folder of the project agentry works in, which a
    // repository could fill) is never run.
    let cwd = std::env::current_dir().unwrap();
    let relative: std::path::PathBuf = cwd
        .components()
        .skip(1)
        .map(|_| std::path::Component::ParentDir)
        .collect::<std::path::PathBuf>()
        .join(dir.path().strip_prefix("/").unwrap());
    assert!(relative.is_relative() && cwd.join(&relative).join("az").is_file());
    for path in [
        relative.display().to_string(),
        format!(".:{}", relative.display()),
    ] {
        let env = env_of(&[
            ("PATH", path.clone()),
            ("AZURE_TOKEN_CREDENTIALS", "dev".to_owned()),
        ]);
        assert!(entra::find(&env).is_err(), "{path}");
    }
    // AZURE_TOKEN_CREDENTIALS=prod leaves the developer's CLI out.
    let env = env_of(&[
        ("PATH", dir.path().display().to_string()),
        ("AZURE_TOKEN_CREDENTIALS", "prod".to_owned()),
    ]);
    let error = entra::find(&env).unwrap_err().to_string();
    assert!(
        error.contains("no Microsoft Entra ID credentials found (AZURE_TOKEN_CREDENTIALS=prod")
            && error.contains("AZURE_CLIENT_SECRET")
            && error.contains("AZURE_FEDERATED_TOKEN_FILE")
            && error.contains("`az` on PATH"),
        "{error}"
    );
}

#[test]
fn the_environment_comes_first_and_an_authority_in_clear_text_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fake_az(dir.path());
    let base = [
        ("AZURE_TENANT_ID", TENANT.to_owned()),
        ("AZURE_CLIENT_ID", CLIENT.to_owned()),
        ("AZURE_CLIENT_SECRET", SECRET.to_owned()),
        ("PATH", dir.path().display().to_string()),
    ];
    assert!(matches!(
        entra::find(&env_of(&base)).unwrap(),
        EntraSource::ClientSecret { token_url, .. }
            if token_url == format!("https://login.microsoftonline.com/{TENANT}/oauth2/v2.0/token")
    ));
    // Only the CLI allowed: the secret is passed over.
    let mut cli_only = base.to_vec();
    cli_only.push(("AZURE_TOKEN_CREDENTIALS", "AzureCliCredential".to_owned()));
    assert!(matches!(
        entra::find(&env_of(&cli_only)).unwrap(),
        EntraSource::AzureCli { .. }
    ));
    // A certificate is named as not read, not passed over in silence.
    let certificate = env_of(&[
        ("AZURE_TENANT_ID", TENANT.to_owned()),
        ("AZURE_CLIENT_ID", CLIENT.to_owned()),
        ("AZURE_CLIENT_CERTIFICATE_PATH", "/etc/sp.pem".to_owned()),
    ]);
    let error = entra::find(&certificate).unwrap_err().to_string();
    assert!(
        error.contains("AZURE_CLIENT_CERTIFICATE_PATH names a certificate (/etc/sp.pem)"),
        "{error}"
    );
    for authority in [
        "http://login.example.test",
        "http://127.0.0.1.example.test",
        "ftp://127.0.0.1",
    ] {
        let mut clear = base.to_vec();
        clear.push(("AZURE_AUTHORITY_HOST", authority.to_owned()));
        let error = entra::find(&env_of(&clear)).unwrap_err().to_string();
        assert!(
            error.contains("AZURE_AUTHORITY_HOST must be an HTTPS URL"),
            "{authority}: {error}"
        );
    }
}

#[tokio::test]
async fn azure_and_foundry_without_a_key_send_an_entra_token_and_no_key() {
    let service = service(3600);
    let server = MockModelServer::start([
        MockTurn::Reply(MockReply::text("from azure")),
        MockTurn::Reply(MockReply::text("from foundry")),
    ])
    .await;
    let env = env_of(&[
        ("AZURE_TENANT_ID", TENANT.to_owned()),
        ("AZURE_CLIENT_ID", CLIENT.to_owned()),
        ("AZURE_CLIENT_SECRET", SECRET.to_owned()),
        ("AZURE_AUTHORITY_HOST", service.url().to_owned()),
        ("AZURE_OPENAI_ENDPOINT", server.url()),
        (
            "AZURE_FOUNDRY_BASE_URL",
            format!("{}/anthropic", server.url()),
        ),
    ]);
    let providers = BTreeMap::new();
    let catalog = ModelCatalog::new(&providers, &env);
    for (n, spec) in ["azure/gpt4o-prod", "foundry/claude-sonnet-4-5"]
        .into_iter()
        .enumerate()
    {
        // Each model keeps the tokens it fetched.
        server.require(Required::Header {
            name: "authorization".into(),
            value: format!("Bearer {}", entra_token(n + 1)),
        });
        let model = catalog.open(spec).unwrap();
        let (_, error) = collect(model.as_ref(), hello()).await;
        assert!(error.is_none(), "{spec}: {error:?}");
    }
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].path, "/openai/v1/chat/completions");
    assert_eq!(sent[1].path, "/anthropic/v1/messages");
    for request in &sent {
        assert!(
            request.headers.get("api-key").is_none() && request.headers.get("x-api-key").is_none()
        );
    }
    assert_eq!(sent[1].headers["anthropic-version"], "2023-06-01");
    assert_eq!(service.issued(), 2);
}

#[test]
fn without_a_key_or_entra_credentials_the_error_names_both() {
    let env = env_of(&[
        (
            "AZURE_OPENAI_ENDPOINT",
            "https://r.openai.azure.com".to_owned(),
        ),
        ("PATH", "/nonexistent".to_owned()),
        // No managed identity, even on an Azure machine.
        ("AZURE_TOKEN_CREDENTIALS", "dev".to_owned()),
    ]);
    let providers = BTreeMap::new();
    let error = ModelCatalog::new(&providers, &env)
        .open("azure/gpt4o-prod")
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("`azure/gpt4o-prod` needs the resource's key in AZURE_OPENAI_API_KEY, or Microsoft Entra ID credentials")
            && error.contains("AZURE_CLIENT_SECRET"),
        "{error}"
    );
}
